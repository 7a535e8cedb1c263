#!/usr/bin/env bash
# On the GPU machine: records what Nsight Compute prints for a few known kernels (a bf16 GEMM,
# a softmax, an elementwise add through PyTorch), so that `roofline profile`'s parser is written
# and tested against real output. Writes into ${OUT:-.}/ncu-*.
set -uo pipefail
out="${OUT:-.}"
ncu --version > "$out/ncu-version.txt" 2>&1
ncu --list-sets > "$out/ncu-sets.txt" 2>&1
ncu --list-sections > "$out/ncu-sections.txt" 2>&1
cat > /tmp/ncu_workload.py <<'PY'
import torch
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn_like(a)
torch.cuda.synchronize()
c = a @ b
s = torch.softmax(a.float(), dim=-1)
d = a + b
torch.cuda.synchronize()
print(float(c.float().abs().mean()), float(s.sum()), float(d.float().mean()))
PY
sections=(--section SpeedOfLight --section SpeedOfLight_RooflineChart
          --section SpeedOfLight_HierarchicalSingleRooflineChart
          --section SpeedOfLight_HierarchicalHalfRooflineChart
          --section SpeedOfLight_HierarchicalTensorRooflineChart
          --section MemoryWorkloadAnalysis)
timeout 240 ncu --clock-control none "${sections[@]}" --page raw --csv python3 /tmp/ncu_workload.py \
  > "$out/ncu-raw.csv" 2> "$out/ncu-stderr.txt"
echo "ncu exit $? ; $(wc -l < "$out/ncu-raw.csv") lines of raw CSV"
timeout 120 ncu --clock-control none "${sections[@]}" --page details --csv python3 /tmp/ncu_workload.py \
  > "$out/ncu-details.csv" 2>> "$out/ncu-stderr.txt"
echo "ncu details exit $? ; $(wc -l < "$out/ncu-details.csv") lines"
