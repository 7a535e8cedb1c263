#!/usr/bin/env python3
"""The order in which ptxas placed a kernel's synchronising and tensor-core instructions.

  cuobjdump -sass build/gpu-run/roofline > all.sass          (on the GPU machine)
  sass_order.py all.sass NAME_FRAGMENT

For the first function whose mangled name contains NAME_FRAGMENT (for the bf16 d 128 flash kernel:
flash_wgmma_kernelI13__nv_bfloat16Li128ELi128), prints, in program order, its wgmma waits
(WARPGROUP.DEPBAR), named and mbarrier operations, and its HGMMA, MUFU and F2FP instructions, runs
of the same opcode folded into one line with a count. Where the source issues a product, computes
and then waits, this shows whether the binary kept the computation before the wait: the source's
order is not the binary's (docs/results/2026-12-04-h200-flash-early-q: ptxas put the softmax's
exponentials after the wait for P V).
"""
import re
import sys

KEPT = re.compile(r"DEPBAR|MUFU\.EX2|F2FP|HGMMA|BAR\.|SYNCS\.(ARRIVE|PHASECHK)")
FOLDED = ("MUFU", "F2FP", "HGMMA")


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        sys.exit(2)
    try:
        with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
    except OSError as error:
        print(f"{sys.argv[1]}: {error}", file=sys.stderr)
        sys.exit(2)
    fragment = sys.argv[2]
    name = None
    picked = []
    for line in lines:
        if "Function :" in line:
            if name is not None:
                break
            if fragment in line:
                name = line.split("Function :", 1)[1].strip()
            continue
        if name is None or not KEPT.search(line):
            continue
        # cuobjdump: /*0a40*/  INSTRUCTION ;  /* encoding */
        m = re.search(r"/\*([0-9a-f]+)\*/\s+(.*?);", line)
        if m:
            picked.append((m.group(1), m.group(2).strip()))
    if name is None:
        print(f"{sys.argv[1]}: no function whose name contains {fragment}", file=sys.stderr)
        sys.exit(2)
    print(name)
    run_opcode, run_length = None, 0

    def flush():
        if run_length > 1:
            print(f"      ... {run_length} x {run_opcode} in all")

    for address, text in picked:
        opcode = text.split()[1] if text.startswith("@") else text.split()[0]
        family = next((f for f in FOLDED if opcode.startswith(f)), None)
        if family is not None and family == run_opcode:
            run_length += 1
            continue
        flush()
        run_opcode, run_length = family, 1
        print(f"{address} {text[:72]}")
    flush()


if __name__ == "__main__":
    main()
