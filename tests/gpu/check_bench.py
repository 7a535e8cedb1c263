#!/usr/bin/env python3
"""GPU test: runs `roofline bench --quick` and asserts that every benchmark passed its check.

Usage: check_bench.py ROOFLINE_BINARY SOURCE_DIR [--require-pass TEXT]... [roofline bench flags, e.g. --suite compute]

Exit codes: 0 all verified; 1 a check failed or the report is malformed; 77 skipped (the
binary reports no GPU or no CUDA build: exit code 3), which CTest shows as skipped.
Every result table of the report (one array of rows with a "status" under "results") must have
at least one passed row and no row other than passed or not_supported; passed rows must be
timed. The report must validate against docs/schema/bench.v1.schema.json where
python3-jsonschema is installed. With --require-pass TEXT (the script's own flag, not passed on), the
report must hold at least one result whose id contains TEXT, and every such result must have passed:
not_supported is a failure there (a test of one kernel family on the GPU it is built for).
"""
import json
import pathlib
import subprocess
import sys
import tempfile

SKIP = 77
ALLOWED = {"passed", "not_supported"}
NOT_RESULTS = {"device", "run", "targets", "attention_by_n"}


def validate_schema(report, source):
    try:
        import jsonschema
    except ImportError:
        print("note: python3-jsonschema is not installed here: the report's schema is not checked "
              "(the CI schema test checks a synthetic report)")
        return []
    schema_dir = source / "docs" / "schema"
    schema = json.loads((schema_dir / "bench.v1.schema.json").read_text())
    resolver = jsonschema.RefResolver(base_uri=schema_dir.resolve().as_uri() + "/", referrer=schema)
    validator = jsonschema.Draft7Validator(schema, resolver=resolver)
    return [f"schema: {e.message} at {list(e.absolute_path)}" for e in validator.iter_errors(report)]


def main():
    binary, source = sys.argv[1], pathlib.Path(sys.argv[2])
    extra = []
    required = []
    args = sys.argv[3:]
    i = 0
    while i < len(args):
        if args[i] == "--require-pass" and i + 1 < len(args):
            required.append(args[i + 1])
            i += 2
        else:
            extra.append(args[i])
            i += 1
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "bench.json"
        command = [binary, "bench", "--quick", "--format", "json", "-o", str(out), *extra]
        print("running:", " ".join(command), flush=True)
        try:
            run = subprocess.run(command, stdout=subprocess.PIPE, stderr=None, text=True, timeout=560)
        except subprocess.TimeoutExpired:
            print("FAIL: roofline bench --quick did not finish within 560 s")
            return 1
        if run.returncode == 3:
            print("skipped: no GPU or no CUDA build (roofline bench exited 3)")
            return SKIP
        if not out.exists():
            print(f"FAIL: exit code {run.returncode} and no report written")
            return 1
        report = json.loads(out.read_text())

    problems = validate_schema(report, source)
    results = report["results"]
    tables = {name: rows for name, rows in results.items() if name not in NOT_RESULTS}
    if not tables:
        problems.append("the report has no result table")
    total = passed = 0
    for name, rows in tables.items():
        if not any(row["status"] == "passed" for row in rows):
            problems.append(f"{name}: no benchmark passed")
        for row in rows:
            total += 1
            if row["status"] not in ALLOWED:
                problems.append(f"{row['id']}: {row['status']}: {row['detail']}")
            elif row["status"] == "passed":
                passed += 1
                if not (row["median_us"] and row["median_us"] > 0):
                    problems.append(f"{row['id']}: passed without a timing")
    for text in required:
        matching = [row for rows in tables.values() for row in rows if text in row["id"]]
        if not matching:
            problems.append(f"no result's id contains {text!r}")
        for row in matching:
            if row["status"] != "passed":
                problems.append(f"{row['id']}: {row['status']} where {text!r} must pass: {row['detail']}")
    if results["run"][0]["stopped_early"]:
        problems.append("the run stopped early")
    if run.returncode != 0 and not problems:
        problems.append(f"roofline bench exited {run.returncode} although every check passed")
    for p in problems:
        print("FAIL", p)
    print(f"{passed} of {total} results passed ({', '.join(tables)}); {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
