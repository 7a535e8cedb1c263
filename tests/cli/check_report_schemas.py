#!/usr/bin/env python3
"""Runs real roofline commands and validates each JSON report against docs/schema/.

Usage: check_report_schemas.py ROOFLINE_BINARY SOURCE_DIR [BENCH_REPORT_SAMPLE]

A bench report needs a GPU, so where none is present the bench schema is exercised by
BENCH_REPORT_SAMPLE, a program that prints the report of a synthetic run built by the real
report code (tests/tools/bench_report_sample.cpp).

Every schema in docs/schema/ must be exercised by at least one case, and every report must
name a schema that exists, so a new report kind cannot ship without its schema.
"""
import json
import pathlib
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    sys.exit("python3-jsonschema is missing: apt-get install python3-jsonschema")

CASES = [
    ["ridge", "--gpu", "h100", "--dtype", "bf16"],
    ["ridge", "--gpu", "all"],
    ["ridge", "--gpu", "h100,h100-sxm5"],
    ["attainable", "--gpu", "h100", "--ai", "1,50,1365"],
    ["hw", "list"],
    ["hw", "show", "h100", "--set", "hbm_bandwidth_tbps=8"],
    ["hw", "check"],
    ["train", "--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "64", "--tp", "8", "--zero", "3"],
    ["train", "--model", "deepseek-v3", "--gpu", "h200", "--gpus", "16", "--tp", "8", "--pp", "2", "--recompute"],
    ["llm", "--model", "llama-3-70b", "--gpu", "h100", "--tp", "8", "--weights", "fp8", "--kv", "fp8", "--context", "4096"],
    ["llm", "--model", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--pp", "2", "--gpus", "32", "--weights", "fp8",
     "--context", "8192", "--batch", "16", "--no-levers"],
    # Expert parallelism, attention DP and MTP speculation (docs/deployment-modes.md).
    ["llm", "--model", "deepseek-r1", "--gpu", "h200", "--tp", "8", "--ep", "8", "--attention-dp", "--weights", "fp8",
     "--context", "3072", "--batch", "64", "--speculate", "3", "--acceptance", "0.9,0.7,0.4", "--no-levers"],
    ["llm", "--model", "mixtral", "--gpu", "l40s", "--tp", "4", "--weights", "int4_g128", "--context", "2048",
     "--batch", "4"],
    ["plan", "--model", "llama-3.1-70b", "--gpus", "h100,h200,a100-sxm4-80gb,b200", "--rps", "5", "--prompt", "2048",
     "--output", "256", "--tpot-ms", "50", "--ttft-ms", "2000", "--price", "all=2.5"],
    # plan --rps over a MoE model's EP degrees and attention DP (simulated in lockstep), EP given as a list.
    ["plan", "--model", "deepseek-v3", "--gpus", "h200", "--tp", "8", "--pp", "1", "--weights", "fp8", "--kv", "bf16",
     "--ep", "4,8", "--rps", "2", "--prompt", "1024", "--output", "256", "--tpot-ms", "100", "--ttft-ms", "5000",
     "--price", "all=1", "--sim-requests", "50"],
    # --calibration auto: measured (h200), transferred (h100), none (b200), in each report kind that takes it.
    ["plan", "--model", "llama-3.1-8b", "--gpus", "h100,h200,b200", "--rps", "5", "--prompt", "2048",
     "--output", "256", "--tpot-ms", "50", "--ttft-ms", "2000", "--price", "all=2.5", "--calibration", "auto"],
    # plan --pareto: the front of a MoE model with EP, attention DP and MTP speculation swept, priced;
    # and with the targets as filters and per-GPU calibrations.
    ["plan", "--pareto", "--model", "deepseek-r1", "--gpus", "h200,b200", "--prompt", "1024", "--output", "2048",
     "--speculate", "1,3", "--acceptance", "0.92,0.717,0.364", "--price", "all=3"],
    ["plan", "--pareto", "--model", "llama-3.1-8b", "--gpus", "h100,h200", "--prompt", "2048", "--output", "256",
     "--tpot-ms", "30", "--ttft-ms", "1000", "--calibration", "auto"],
    # plan --pareto with disaggregated prefill/decode points (pools of their own layouts), priced.
    ["plan", "--pareto", "--disaggregate", "--model", "deepseek-r1", "--gpus", "h200", "--tp", "4,8", "--pp", "1",
     "--weights", "fp8", "--kv", "fp8", "--prompt", "1024", "--output", "2048", "--price", "all=3"],
    ["plan", "--pareto", "--disaggregate", "--pool-ratios", "1:2,1:3", "--model", "llama-3.1-8b", "--gpus", "h100",
     "--prompt", "2048", "--output", "256", "--ttft-ms", "500"],
    # plan --rps with MTP speculation searched beside none, simulated, and disaggregated.
    ["plan", "--model", "deepseek-v3", "--gpus", "h200", "--tp", "8", "--pp", "1", "--weights", "fp8", "--kv", "bf16",
     "--ep", "8", "--no-attention-dp", "--rps", "2", "--prompt", "1024", "--output", "256", "--tpot-ms", "100",
     "--ttft-ms", "5000", "--price", "all=1", "--sim-requests", "50", "--speculate", "3", "--acceptance",
     "0.92,0.717,0.364", "--disaggregate"],
    ["plan", "--model", "deepseek-v3", "--gpus", "h200", "--tp", "8", "--pp", "1", "--weights", "fp8", "--kv", "bf16",
     "--ep", "8", "--no-attention-dp", "--rps", "2", "--prompt", "1024", "--output", "256", "--tpot-ms", "100",
     "--ttft-ms", "5000", "--price", "all=1", "--speculate", "1,3", "--acceptance", "0.9", "--closed-form"],
    ["llm", "--model", "llama-3.1-8b", "--gpu", "h100", "--weights", "fp8", "--context", "2048",
     "--calibration", "auto"],
    ["llm", "--model", "llama-3.1-8b", "--gpu", "b200", "--context", "2048", "--calibration", "auto"],
    # A sweep of llm: one row per (context, batch) point.
    ["llm", "--model", "llama-3.1-8b", "--gpu", "h100", "--context", "1024:4096:x2", "--batch", "1,8,max"],
    ["op", "gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--gpu", "h200,h100,b200", "--calibration", "auto"],
    ["plot", "--gpu", "h100"],
    ["plot", "--gpu", "h100", "--dtype", "bf16,fp8", "--l2-tbps", "7", "--smem-tbps", "30",
     "--point", "GEMV batch 1:1:3.35", "--measured-point", "cuBLAS GEMM 4096^3:1365:741", "--title", "t"],
    ["bench", "--list"],
    ["bench", "--list", "--quick", "--filter", "gemv"],
    ["bench", "--list", "--suite", "compute,layer"],
    ["op", "gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--gpu", "h100,v100"],
    ["op", "gemm", "--m", "16,4096", "--n", "4096", "--k", "4096", "--weights", "nvfp4", "--gpu", "all",
     "--efficiency", "compute=0.7,memory=0.8"],
    ["op", "gemv", "--m", "8192", "--k", "8192", "--batch", "1:32:x2", "--weights", "int4", "--gpu", "h200",
     "--set", "hbm_bandwidth_tbps=8"],
    ["op", "elementwise", "--elements", "1e9", "--fn", "silu", "--gpu", "h100"],
    ["op", "elementwise", "--elements", "1000", "--inputs", "0", "--outputs", "1", "--flops-per-element", "0",
     "--gpu", "mi300x", "--efficiency", "memory=0.9"],
    ["op", "norm", "--rows", "4096", "--hidden", "8192", "--kind", "layernorm", "--residual", "--gpu", "h100"],
    ["op", "softmax", "--rows", "4096", "--cols", "4096", "--dtype", "fp32", "--gpu", "h100,b200"],
    ["op", "attention", "--batch", "4", "--heads", "32", "--kv-heads", "8", "--head-dim", "128", "--seq",
     "1024:4096:x2", "--causal", "--gpu", "h100", "--efficiency", "compute=0.75,memory=0.9"],
    ["op", "attention", "--heads", "64", "--kv-heads", "8", "--head-dim", "128", "--seq", "1", "--kv-seq", "131072",
     "--impl", "flash", "--kv", "fp8", "--tile", "64", "--gpu", "v100"],
    ["op", "fuse", "--chain", "linear:28672,swiglu,linear", "--rows", "1,4096", "--hidden", "4096", "--gpu", "h100",
     "--efficiency", "compute=0.8,memory=0.8"],
    ["op", "fuse", "--chain", "add,rmsnorm", "--rows", "4096", "--hidden", "4096", "--act", "fp4", "--gpu", "h100"],
    ["serve", "--model", "llama-3.1-8b", "--gpu", "h100", "--weights", "fp8", "--kv", "fp8", "--prompt", "512",
     "--output", "64", "--requests", "50", "--rate", "20", "--slo", "ttft=200,tpot=20"],
    ["serve", "--model", "llama-3.1-70b", "--gpu", "h100", "--tp", "4", "--weights", "fp8", "--kv", "fp8",
     "--prompt-dist", "lognormal:1000,300", "--output-dist", "uniform:50,150", "--requests", "40", "--concurrency",
     "8"],
    # --- issue 18: serve with EP, attention DP and MTP speculation, and disaggregated pools.
    ["serve", "--model", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--ep", "8", "--attention-dp", "--weights",
     "fp8", "--kv", "fp8", "--prompt-tokens", "256", "--output-tokens", "16", "--requests", "32", "--speculate", "2",
     "--acceptance", "0.8"],
    ["serve", "--model", "llama-3.1-8b", "--gpu", "h100", "--weights", "fp8", "--kv", "fp8", "--prompt-tokens", "512",
     "--output-tokens", "16", "--requests", "20", "--rate", "10", "--disaggregate", "--prefill-pool", "tp=1",
     "--decode-pool", "tp=1,count=2"],
    ["plan", "--model", "llama-3.1-8b", "--gpus", "h100", "--rps", "4", "--prompt-tokens", "1024", "--output-tokens",
     "64", "--tpot-ms", "30", "--ttft-ms", "500", "--price", "h100=2", "--weights", "fp8", "--kv", "fp8", "--tp", "1",
     "--pp", "1", "--sim-requests", "200", "--disaggregate"],
]


def data_cases(source, scratch):
    """Cases on the real H200 runs in tests/data (the calibration file first: later cases read it)."""
    memory = str(source / "tests" / "data" / "bench" / "h200-memory-2026-11-30.json")
    compute = str(source / "tests" / "data" / "bench" / "h200-compute-2026-11-30.jsonl")
    ncu_raw = str(source / "tests" / "data" / "ncu" / "ncu-raw.csv")
    calibration = str(scratch / "h200.calibration.json")
    return [
        ["calibrate", "--measured", memory, "--measured", compute, "-o", calibration],
        ["serve", "--model", "llama-3.1-8b", "--gpu", "h200", "--trace",
         str(source / "tests" / "data" / "serve" / "example-trace.csv"), "--calibration", calibration],
        ["validate", "--measured", memory],
        ["validate", "--measured", memory, "--measured", compute, "--calibration", calibration],
        ["validate", "--measured", memory, "--baseline", memory, "--tolerance", "3%"],
        # The gate: a passing one, with --baseline, and a failing one (exit 1, the whole report written).
        ["validate", "--measured", memory, "--calibration", calibration, "--max-error", "10%", "--min-of-roofline",
         "10%"],
        ["validate", "--measured", memory, "--baseline", memory, "--min-of-roofline", "15%"],
        ["validate", "--measured", memory, "--calibration", calibration, "--max-error", "10%", "--min-of-roofline",
         "50%"],
        ["profile", "--from-csv", ncu_raw],
        ["plot", "--gpu", "h200", "--measured", memory, "--measured", compute, "--measured-filter",
         "gemv.bf16.8192x8192,gemm.bf16.4096x4096x4096", "--op", "gemm:m=4096,n=4096,k=4096", "--op",
         "attention:heads=32,head_dim=128,seq=4096,causal", "--calibration", calibration],
        ["op", "gemv", "--m", "8192", "--k", "8192", "--batch", "1,3,128", "--gpu", "h200,h100", "--calibration",
         calibration],
        ["op", "gemm", "--m", "2048", "--n", "8192", "--k", "8192", "--gpu", "h200", "--calibration", calibration],
        ["op", "attention", "--heads", "64", "--kv-heads", "8", "--head-dim", "128", "--seq", "2048", "--causal",
         "--gpu", "h200", "--calibration", calibration],
        ["op", "elementwise", "--elements", "1e9", "--fn", "swiglu", "--gpu", "h200", "--calibration", calibration],
        ["op", "norm", "--rows", "4096", "--hidden", "8192", "--gpu", "h200", "--calibration", calibration],
        ["op", "softmax", "--rows", "4096", "--cols", "4096", "--gpu", "h200", "--calibration", calibration],
        ["llm", "--model", "llama-3.1-70b", "--gpu", "h200", "--tp", "2", "--context", "4096", "--batch", "16",
         "--calibration", calibration],
        ["llm", "--model", "mixtral", "--gpu", "h200", "--context", "2048", "--batch", "8", "--no-levers",
         "--calibration", calibration],
        # A published Hugging Face config with a per-layer attention pattern (tests/data/hf/).
        ["llm", "--model", str(source / "tests" / "data" / "hf" / "gpt-oss-20b"), "--gpu", "h200", "--context",
         "8192"],
        # Llama 4's chunked layers and NoPE full layers ("full, NoPE").
        ["llm", "--model", str(source / "tests" / "data" / "hf" / "llama-4-scout-17b-16e-instruct"), "--gpu", "h200",
         "--tp", "8", "--context", "32768"],
        ["plan", "--model", "llama-3.1-70b", "--gpus", "h200,h100", "--rps", "5", "--prompt", "2048", "--output",
         "256", "--tpot-ms", "50", "--ttft-ms", "2000", "--price", "all=2.5", "--calibration", calibration],
    ], calibration


def main() -> int:
    binary, source = sys.argv[1], pathlib.Path(sys.argv[2])
    schema_dir = source / "docs" / "schema"
    resolver_base = schema_dir.resolve().as_uri() + "/"
    used = set()
    failures = 0
    scratch_dir = tempfile.TemporaryDirectory()
    extra, calibration_file = data_cases(source, pathlib.Path(scratch_dir.name))
    commands = [([binary, *case, "--format", "json"], " ".join(case)) for case in CASES + extra]
    collectives_calibration = None
    if len(sys.argv) > 3:
        commands.append(([sys.argv[3]], "bench (synthetic run)"))
        commands.append(([sys.argv[3], "collectives"], "bench (synthetic collectives run)"))
        # The collectives run measured, learnt, validated and used by llm and plan.
        scratch = pathlib.Path(scratch_dir.name)
        measured = scratch / "collectives.json"
        measured.write_text(subprocess.run([sys.argv[3], "collectives"], capture_output=True, text=True,
                                           check=True).stdout)
        collectives_calibration = str(scratch / "collectives.calibration.json")
        for case in (["calibrate", "--measured", str(measured), "-o", collectives_calibration],
                     ["validate", "--measured", str(measured), "--calibration", collectives_calibration],
                     ["llm", "--model", "llama-3.1-70b", "--gpu", "h200", "--tp", "2", "--pp", "2", "--context",
                      "4096", "--calibration", collectives_calibration],
                     ["plan", "--model", "llama-3.1-70b", "--gpus", "h200,h100", "--rps", "5", "--prompt", "2048",
                      "--output", "256", "--tpot-ms", "50", "--ttft-ms", "2000", "--price", "all=2.5",
                      "--calibration", collectives_calibration]):
            commands.append(([binary, *case, "--format", "json"], " ".join(case[:1] + ["(collectives)"])))
    for command, label in commands:
        case = [label]
        run = subprocess.run(command, capture_output=True, text=True)
        # A gate that fails exits 1 after writing its whole report.
        gate_failed = run.returncode == 1 and ("--max-error" in command or "--min-of-roofline" in command)
        if run.returncode != 0 and not gate_failed:
            print(f"FAIL {' '.join(case)}: exit {run.returncode}: {run.stderr.strip()}")
            failures += 1
            continue
        report = json.loads(run.stdout)
        if gate_failed and report["results"].get("gate_passed") is not False:
            print(f"FAIL {' '.join(case)}: exit 1 but the report says the gate passed")
            failures += 1
            continue
        kind, version = report["schema"].split(".")[1:3]
        schema_path = schema_dir / f"{kind}.{version}.schema.json"
        if not schema_path.exists():
            print(f"FAIL {' '.join(case)}: no schema {schema_path.name}")
            failures += 1
            continue
        used.add(schema_path.name)
        schema = json.loads(schema_path.read_text())
        resolver = jsonschema.RefResolver(base_uri=resolver_base, referrer=schema)
        try:
            jsonschema.validate(report, schema, resolver=resolver)
            print(f"ok   {' '.join(case)} -> {schema_path.name}")
        except jsonschema.ValidationError as error:
            print(f"FAIL {' '.join(case)}: {error.message} at {list(error.absolute_path)}")
            failures += 1
    # The reports committed as examples must still match their schemas.
    examples = sorted((source / "docs" / "examples").glob("*.json"))
    for path in examples:
        report = json.loads(path.read_text())
        kind, version = report["schema"].split(".")[1:3]
        schema = json.loads((schema_dir / f"{kind}.{version}.schema.json").read_text())
        resolver = jsonschema.RefResolver(base_uri=resolver_base, referrer=schema)
        try:
            jsonschema.validate(report, schema, resolver=resolver)
            print(f"ok   docs/examples/{path.name} -> {kind}.{version}.schema.json")
        except jsonschema.ValidationError as error:
            print(f"FAIL docs/examples/{path.name}: {error.message} at {list(error.absolute_path)}")
            failures += 1
    # The calibration files are data files, not reports: validated as written by calibrate above.
    calibration_schema = schema_dir / "calibration.v1.schema.json"
    for file in [calibration_file] + ([collectives_calibration] if collectives_calibration else []):
        try:
            document = json.loads(pathlib.Path(file).read_text())
            jsonschema.validate(document, json.loads(calibration_schema.read_text()))
            if file == collectives_calibration and not document.get("collectives"):
                raise ValueError("the collectives calibration holds no collective tables")
            print(f"ok   calibration file {pathlib.Path(file).name} -> {calibration_schema.name}")
            used.add(calibration_schema.name)
        except (OSError, ValueError, jsonschema.ValidationError) as error:
            print(f"FAIL calibration file {file}: {error}")
            failures += 1
    # The bundled calibrations and the bands of their transfers (calibrations/), as compiled in.
    bundled = [(path, calibration_schema) for path in sorted((source / "calibrations").glob("*.json"))]
    bundled.append((source / "calibrations" / "transfer" / "bands.json", schema_dir / "transfer-bands.v1.schema.json"))
    for path, schema_path in bundled:
        try:
            jsonschema.validate(json.loads(path.read_text()), json.loads(schema_path.read_text()))
            print(f"ok   bundled {path.relative_to(source)} -> {schema_path.name}")
            used.add(schema_path.name)
        except (OSError, ValueError, jsonschema.ValidationError) as error:
            print(f"FAIL bundled {path}: {error}")
            failures += 1
    for path in sorted(schema_dir.glob("*.schema.json")):
        if path.name.startswith("report-envelope") or path.name in used:
            continue
        if "properties" not in json.loads(path.read_text()):
            continue  # only definitions, shared by report schemas (e.g. op-common)
        print(f"FAIL {path.name}: no case exercises this schema")
        failures += 1
    print(f"{len(commands) + len(examples) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
