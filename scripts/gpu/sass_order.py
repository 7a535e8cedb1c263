#!/usr/bin/env python3
"""The order in which ptxas placed a kernel's synchronising and tensor-core instructions.

  cuobjdump -sass build/gpu-run/roofline > all.sass          (on the GPU machine)
  sass_order.py all.sass NAME_FRAGMENT [--loops]

For the first function whose mangled name contains NAME_FRAGMENT (for the bf16 d 128 flash kernel:
flash_wgmma_kernelI13__nv_bfloat16Li128ELi128), prints, in program order, its wgmma waits
(WARPGROUP.DEPBAR), named and mbarrier operations, and its HGMMA, MUFU and F2FP instructions, runs
of the same opcode folded into one line with a count. Where the source issues a product, computes
and then waits, this shows whether the binary kept the computation before the wait: the source's
order is not the binary's (docs/results/2026-12-04-h200-flash-early-q: ptxas put the softmax's
exponentials after the wait for P V).

--loops prints instead each loop of the function that issues HGMMA (a backward branch and the
instructions from its target to it): its address range, its instructions, its opcode mix, and how
many MUFU.EX2 and F2FP come before and after its last wgmma wait. The counts are the loop's static
body, every path of it: a masked path the steady iterations branch over is counted too, so read the
body (the default listing) where the mix looks wrong. An iteration's instructions against its tensor
time is the issue budget of a consumer warp (docs/results/2026-12-04-h200-flash-softmax-overlap).
"""
import collections
import re
import sys

KEPT = re.compile(r"DEPBAR|MUFU\.EX2|F2FP|HGMMA|BAR\.|SYNCS\.(ARRIVE|PHASECHK)")
FOLDED = ("MUFU", "F2FP", "HGMMA")


def opcode_of(text):
    return text.split()[1] if text.startswith("@") else text.split()[0]


def print_loops(instructions):
    """instructions: (address, text) of the whole function, in program order."""
    found = 0
    for address, text in instructions:
        branch = re.search(r"\bBRA\b.*?0x([0-9a-f]+)\s*$", text)
        if not branch or int(branch.group(1), 16) >= address:
            continue
        target = int(branch.group(1), 16)
        body = [(a, t) for a, t in instructions if target <= a <= address]
        opcodes = [opcode_of(t) for _, t in body]
        if not any(o.startswith("HGMMA") for o in opcodes):
            continue
        found += 1
        waits = [i for i, o in enumerate(opcodes) if o.startswith("WARPGROUP.DEPBAR")]
        last_wait = waits[-1] if waits else len(opcodes)

        def around(prefix):
            before = sum(o.startswith(prefix) for o in opcodes[:last_wait])
            return f"{before} before / {sum(o.startswith(prefix) for o in opcodes) - before} after"

        print(f"loop {target:04x}-{address:04x}: {len(body)} instructions, "
              f"{sum(o.startswith('HGMMA') for o in opcodes)} HGMMA, {len(waits)} wgmma waits; "
              f"relative to the last wait: MUFU.EX2 {around('MUFU.EX2')}, F2FP {around('F2FP')}")
        mix = collections.Counter(opcodes).most_common()
        print("  " + ", ".join(f"{o} {n}" for o, n in mix))
    if not found:
        print("no loop with HGMMA in this function")


def main():
    args = [a for a in sys.argv[1:] if a != "--loops"]
    loops = len(args) != len(sys.argv) - 1
    if len(args) != 2:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        sys.exit(2)
    path, fragment = args
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
    except OSError as error:
        print(f"{path}: {error}", file=sys.stderr)
        sys.exit(2)
    name = None
    everything = []
    for line in lines:
        if "Function :" in line:
            if name is not None:
                break
            if fragment in line:
                name = line.split("Function :", 1)[1].strip()
            continue
        if name is None:
            continue
        # cuobjdump: /*0a40*/  INSTRUCTION ;  /* encoding */
        m = re.search(r"/\*([0-9a-f]+)\*/\s+(.*?);", line)
        if not m:
            continue
        everything.append((int(m.group(1), 16), m.group(2).strip()))
    if name is None:
        print(f"{path}: no function whose name contains {fragment}", file=sys.stderr)
        sys.exit(2)
    print(name)
    if loops:
        print_loops(everything)
        return
    run_opcode, run_length = None, 0

    def flush():
        if run_length > 1:
            print(f"      ... {run_length} x {run_opcode} in all")

    for address, text in everything:
        if not KEPT.search(text):
            continue
        opcode = opcode_of(text)
        family = next((f for f in FOLDED if opcode.startswith(f)), None)
        if family is not None and family == run_opcode:
            run_length += 1
            continue
        flush()
        run_opcode, run_length = family, 1
        print(f"{address:04x} {text[:72]}")
    flush()


if __name__ == "__main__":
    main()
