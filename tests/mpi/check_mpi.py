#!/usr/bin/env python3
"""MPI test: the roofline binary under `mpirun -np 2` on this machine (no GPU needed).

Usage: check_mpi.py MPIRUN ROOFLINE_BINARY

1. `bench --mpi-selftest`: rank 0 broadcasts a token, both ranks answer; exactly one line comes
   back saying that 2 ranks talked.
2. `bench --suite collectives --quick` (MPI mode by itself under mpirun): on a machine without a
   GPU both ranks agree, rank 0 alone prints one line ("no GPU on rank 0 ..."), every rank exits
   3 and mpirun with it. Where the ranks do find GPUs the run must pass instead (exit 0).
Nothing may hang: each run has a deadline. Runs as root need Open MPI's allow-run-as-root
variables, set here.
"""
import os
import subprocess
import sys

DEADLINE_S = 120


def run(mpirun, args):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", NCCL_NVLS_ENABLE="0")
    command = [mpirun, "-np", "2", "--oversubscribe", *args]
    print("running:", " ".join(command), flush=True)
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=DEADLINE_S, env=env)
    except subprocess.TimeoutExpired:
        print(f"FAIL: did not finish within {DEADLINE_S} s (a rank hangs)")
        sys.exit(1)
    print(f"exit {done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}", flush=True)
    return done


def roofline_lines(text):
    return [line for line in text.splitlines() if line.startswith("roofline") or line.startswith("MPI selftest")]


def main():
    mpirun, binary = sys.argv[1], sys.argv[2]
    problems = []

    selftest = run(mpirun, [binary, "bench", "--mpi-selftest"])
    lines = [line for line in selftest.stdout.splitlines() if line.strip()]
    if selftest.returncode != 0:
        problems.append(f"--mpi-selftest exited {selftest.returncode}")
    if len(lines) != 1 or not lines[0].startswith("MPI selftest: 2 ranks"):
        problems.append(f"--mpi-selftest: expected one line 'MPI selftest: 2 ranks ...', got {lines}")

    suite = run(mpirun, [binary, "bench", "--suite", "collectives", "--quick", "--samples", "2", "--format", "json"])
    if suite.returncode == 3:
        messages = roofline_lines(suite.stderr)
        if len(messages) != 1:
            problems.append(f"no GPU: expected one 'roofline: ...' line (rank 0's), got {messages}")
        elif "no GPU on rank 0" not in messages[0] and "CUDA" not in messages[0]:
            problems.append(f"no GPU: the line does not say so: {messages[0]}")
        if suite.stdout.strip():
            problems.append("no GPU: something was written to stdout")
    elif suite.returncode != 0:
        problems.append(f"the collectives suite under mpirun exited {suite.returncode} (expected 3 without a GPU, "
                        "0 with one)")

    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
