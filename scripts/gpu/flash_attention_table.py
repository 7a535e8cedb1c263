#!/usr/bin/env python3
"""Issue 21's flash-attention table from one device call (markdown on stdout): roofline's Hopper
flash kernel (`roofline bench --suite compute --filter flashwgmma`, head dims 64, 128 and 256, and
192 with V 128: `d 192/128`) beside every SDPA backend on the same shapes (scripts/gpu/torch_attention.py,
with --mla for the 192/128 ones).

  flash_attention_table.py BENCH.json TORCH.json

Times in us (medians), TFLOP/s by the model's FLOP count (both sides count the same), the SM clock
each side ran at (roofline: the sample's; SDPA: before and after), and cuDNN's time over ours
(>= 1: ours is faster); where cuDNN does not run a shape, the best backend that does, named. Bad
input (a file missing, not JSON, or not of its kind): one line on stderr, exit 2.
"""
import sys

from summarize_paired import load_report, rows_of


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        sys.exit(2)
    ours = {r["id"]: r for r in rows_of(load_report(sys.argv[1], "flash_attention_table.py"))}
    torch_report = load_report(sys.argv[2], "flash_attention_table.py", list)
    by_shape = {}
    for r in torch_report["results"]:
        head_dim = r.get("head_dim", 128)
        key = ((head_dim, r.get("head_dim_v", head_dim)), r["causal"], r["seq"], r["batch"], r["heads"], r["kv_heads"])
        by_shape.setdefault(key, {})[r["backend"]] = r
    print(f"PyTorch {torch_report['torch']} (CUDA {torch_report['cuda']}, cuDNN {torch_report['cudnn']}), "
          f"{torch_report['device']}.\n")
    print("| d | mask | N | B | H / KV | roofline us | TFLOP/s | MHz | cuDNN us | TFLOP/s | MHz | FA2 TFLOP/s "
          "| efficient TFLOP/s | cuDNN / roofline |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    ratios = {}
    for key in sorted(by_shape, key=lambda k: (k[0][0] != 128, k[0], not k[1], k[2], k[3], k[5])):
        (head_dim, head_dim_v), causal, seq, batch, heads, kv_heads = key
        mask = "causal" if causal else "full"
        dims = f"d{head_dim}" + (f"v{head_dim_v}" if head_dim_v != head_dim else "")
        label = f"{head_dim}" + (f"/{head_dim_v}" if head_dim_v != head_dim else "")
        case = f"attn.bf16.{mask}.{dims}.b{batch}h{heads}kv{kv_heads}.n{seq}.flashwgmma"
        mine = ours.get(case)
        backends = by_shape[key]

        def passed(name):
            r = backends.get(name)
            return r if r and r["status"] == "passed" else None

        def tflops(name):
            r = passed(name)
            return f"{r['tflops']:.0f}" if r else (backends[name]["status"] if name in backends else "-")

        cudnn = passed("cudnn")
        # The library side of the ratio: cuDNN, or the fastest backend that runs the shape.
        others = [passed(n) for n in ("flash", "efficient") if passed(n)]
        library, library_name = (cudnn, "") if cudnn else (
            (min(others, key=lambda r: r["median_us"]), None) if others else (None, ""))
        if library is not None and library_name is None:
            library_name = f" ({library['backend']})"
        if not mine or mine.get("status") != "passed":
            ours_cells = [mine["status"] if mine else "not run", "", ""]
            ratio = ""
        else:
            ours_cells = [f"{mine['median_us']:.1f}", f"{mine['tflops']:.0f}", f"{mine['sm_clock_mhz']:.0f}"]
            ratio = f"{library['median_us'] / mine['median_us']:.2f}{library_name}" if library else ""
            if library:
                ratios.setdefault(label, []).append(library["median_us"] / mine["median_us"])
        cudnn_cells = ([f"{cudnn['median_us']:.1f}", f"{cudnn['tflops']:.0f}",
                        "-".join(f"{c:.0f}" for c in cudnn["sm_clock_mhz"] if c)] if cudnn else ["-", "-", "-"])
        print(f"| {label} | {mask} | {seq} | {batch} | {heads} / {kv_heads} | " + " | ".join(ours_cells) + " | " +
              " | ".join(cudnn_cells) + f" | {tflops('flash')} | {tflops('efficient')} | {ratio} |")
    for label, r in sorted(ratios.items()):
        print(f"\nHead dim {label}: {sum(x >= 1 for x in r)} of {len(r)} shapes at or above the library; "
              f"library / roofline {min(r):.2f} - {max(r):.2f}.")


if __name__ == "__main__":
    main()
