"""The Python module against the CLI: the same flags, defaults, reports and error messages.

Run by CTest (python/CMakeLists.txt: the built module on PYTHONPATH, ROOFLINE_BINARY the binary of
the same build); skipped as a whole where the module is not importable.
"""

import json
import math
import os
import subprocess

import pytest

roofline = pytest.importorskip("roofline")

BINARY = os.environ.get("ROOFLINE_BINARY")
needs_binary = pytest.mark.skipif(not BINARY, reason="ROOFLINE_BINARY (the CLI to compare with) is not set")


def cli_report(*words):
    """The CLI's JSON report of `roofline WORDS... --format json`."""
    done = subprocess.run([BINARY, *words, "--format", "json"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def cli_error(*words):
    """The CLI's one line on stderr for bad input (exit code 2), less its "roofline: " prefix."""
    done = subprocess.run([BINARY, *words], capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    line = done.stderr.strip()
    assert line.startswith("roofline: ")
    return line[len("roofline: "):]


def test_gemm_figures_are_the_hand_derived_ones():
    # 4096^3 bf16 GEMM: FLOPs = 2 m n k = 2 * 4096^3 = 137,438,953,472; bytes = A + B read
    # (2 * 4096^2 * 2 B = 67,108,864) + C written (4096^2 * 2 B = 33,554,432); intensity =
    # 137438953472 / 100663296 = 1365.33 FLOP/B, above H100's ridge 989.4 / 3.35 = 295.3, so the
    # time is FLOPs / peak = 137438953472 / 989.4e12 s = 138.91 us.
    row = roofline.op("gemm", m=4096, n=4096, k=4096, gpu="h100")["results"]["gemm"][0]
    assert row["flops"] == 137_438_953_472
    assert row["read_bytes"] == 67_108_864
    assert row["written_bytes"] == 33_554_432
    assert row["intensity_flop_per_byte"] == pytest.approx(4096 / 3)
    assert row["bound"] == "compute"
    assert row["time_us"] == pytest.approx(137_438_953_472 / 989.4e12 * 1e6)


def test_ridge_of_h100_bf16():
    # 989.4 TFLOP/s dense bf16 over 3.35 TB/s (hardware/h100-sxm.json) = 295.34 FLOP/B.
    row = roofline.ridge(gpu="h100", dtype="bf16")["results"]["ridge"][0]
    assert row["gpu"] == "h100-sxm"
    assert row["ridge_flop_per_byte"] == pytest.approx(989.4 / 3.35)


@needs_binary
@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: roofline.ridge(gpu="all"), ["ridge", "--gpu", "all"]),
        (lambda: roofline.attainable(gpu="h200", ai=64), ["attainable", "--gpu", "h200", "--ai", "64"]),
        (
            lambda: roofline.op("gemm", m=[1024, 2048], n=4096, k=4096, gpu="h100,b200", dtype="fp8"),
            ["op", "gemm", "--m", "1024,2048", "--n", "4096", "--k", "4096", "--gpu", "h100,b200", "--dtype", "fp8"],
        ),
        (
            lambda: roofline.op("attention", batch=4, heads=32, kv_heads=8, head_dim=128, seq=4096, causal=True,
                                gpu="h200"),
            ["op", "attention", "--batch", "4", "--heads", "32", "--kv-heads", "8", "--head-dim", "128", "--seq",
             "4096", "--causal", "--gpu", "h200"],
        ),
        (
            lambda: roofline.llm(model="llama-3.1-70b", gpu="h100", tp=8, weights="fp8", context=8192),
            ["llm", "--model", "llama-3.1-70b", "--gpu", "h100", "--tp", "8", "--weights", "fp8", "--context",
             "8192"],
        ),
        (
            lambda: roofline.llm(model="llama-3.1-8b", gpu="h200", context=4096, batch=16, set=["bf16_tflops=1200"]),
            ["llm", "--model", "llama-3.1-8b", "--gpu", "h200", "--context", "4096", "--batch", "16", "--set",
             "bf16_tflops=1200"],
        ),
        (
            lambda: roofline.serve(model="llama-3.1-8b", gpu="h100", weights="fp8", kv="fp8", prompt=500, output=100,
                                   requests=40, rate=4),
            ["serve", "--model", "llama-3.1-8b", "--gpu", "h100", "--weights", "fp8", "--kv", "fp8", "--prompt",
             "500", "--output", "100", "--requests", "40", "--rate", "4"],
        ),
        (
            lambda: roofline.plan(model="llama-3.1-8b", gpus="h100,h200", rps=5, prompt=1024, output=128, tpot_ms=50,
                                  ttft_ms=2000, price=["h100=2.5", "h200=3.5"]),
            ["plan", "--model", "llama-3.1-8b", "--gpus", "h100,h200", "--rps", "5", "--prompt", "1024", "--output",
             "128", "--tpot-ms", "50", "--ttft-ms", "2000", "--price", "h100=2.5", "--price", "h200=3.5"],
        ),
        (lambda: roofline.hardware(), ["hw", "list"]),
        (lambda: roofline.hardware("mi300x"), ["hw", "show", "mi300x"]),
    ],
    ids=["ridge", "attainable", "op-gemm-sweep", "op-attention", "llm", "llm-set", "serve", "plan", "hw-list",
         "hw-show"],
)
def test_the_result_is_the_cli_json_report(call, words):
    # As text too: the same keys in the same order, and each number of the same type (1 == 1.0 in
    # Python, not in the JSON text), since the module makes the result without going through JSON.
    result = call()
    expected = cli_report(*words)
    assert result == expected
    assert json.dumps(result) == json.dumps(expected)


@needs_binary
@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: roofline.op("gemm", m=4096, n=4096, gpu="h100"), ["op", "gemm", "--m", "4096", "--n", "4096",
                                                                    "--gpu", "h100"]),
        (lambda: roofline.op("gemm", m=-3, n=4096, k=1, gpu="h100"), ["op", "gemm", "--m", "-3", "--n", "4096",
                                                                       "--k", "1", "--gpu", "h100"]),
        (lambda: roofline.ridge(gpu="nosuch"), ["ridge", "--gpu", "nosuch"]),
        (lambda: roofline.ridge(gpu="h100", no_such_flag=1), ["ridge", "--gpu", "h100", "--no-such-flag", "1"]),
        (lambda: roofline.llm(model="llama-3.1-8b", gpu="h100", context=4096, weights="fp7"),
         ["llm", "--model", "llama-3.1-8b", "--gpu", "h100", "--context", "4096", "--weights", "fp7"]),
        (lambda: roofline.op("gemmm", m=1, gpu="h100"), ["op", "gemmm", "--m", "1", "--gpu", "h100"]),
    ],
    ids=["missing-flag", "negative-size", "unknown-gpu", "unknown-flag", "unknown-dtype", "unknown-kind"],
)
def test_bad_input_raises_the_cli_message(call, words):
    with pytest.raises(roofline.InputError) as raised:
        call()
    assert str(raised.value) == cli_error(*words)


@needs_binary
def test_a_reused_definition_keeps_no_earlier_value():
    # The module reuses a command's flag definitions for calls giving the same flags: other values
    # for the same flags, then fewer flags, must each give the CLI's report.
    roofline.op("attention", batch=2, heads=16, kv_heads=4, head_dim=128, seq=1024, causal=True, gpu="h100",
                set=["bf16_tflops=500"])
    second = roofline.op("attention", batch=1, heads=8, kv_heads=8, head_dim=64, seq=512, causal=True, gpu="h200",
                         set=["l2_mb=100"])
    assert second == cli_report("op", "attention", "--batch", "1", "--heads", "8", "--kv-heads", "8", "--head-dim",
                                "64", "--seq", "512", "--causal", "--gpu", "h200", "--set", "l2_mb=100")
    third = roofline.op("attention", batch=1, heads=8, head_dim=64, seq=512, gpu="h200", causal=False)
    assert third == cli_report("op", "attention", "--batch", "1", "--heads", "8", "--head-dim", "64", "--seq", "512",
                               "--gpu", "h200")


@needs_binary
def test_kept_model_presets_carry_nothing_into_the_next_call(tmp_path):
    # The bundled presets are parsed once and kept between calls: a --models-dir file replacing a
    # preset, a model cut to 2 layers by serve --layers, and a --set must each stay in their own call.
    words = ["llm", "--model", "llama-3.1-8b", "--gpu", "h100", "--context", "4096", "--batch", "8"]
    bundled = cli_report(*words)
    assert roofline.llm(model="llama-3.1-8b", gpu="h100", context=4096, batch=8) == bundled

    models_dir = tmp_path / "models"
    models_dir.mkdir()
    source = os.path.join(os.path.dirname(__file__), "..", "..", "models", "llama-3.1-8b.json")
    with open(source) as f:
        document = json.load(f)
    document["layers"] = 16  # half of LLaMA-3.1-8B's 32: half its weights' bytes per decode step
    (models_dir / "llama-3.1-8b.json").write_text(json.dumps(document))
    replaced = roofline.llm(model="llama-3.1-8b", gpu="h100", context=4096, batch=8, models_dir=str(models_dir))
    assert replaced == cli_report(*words, "--models-dir", str(models_dir))
    assert replaced["inputs"]["model"]["layers"] == 16

    roofline.serve(model="llama-3.1-8b", gpu="h100", prompt=100, output=10, requests=2, rate=1, layers=2)
    roofline.llm(model="llama-3.1-8b", gpu="h100", context=4096, batch=8, set=["hbm_bandwidth_tbps=1"])
    assert roofline.llm(model="llama-3.1-8b", gpu="h100", context=4096, batch=8) == bundled


def test_input_error_is_a_roofline_error():
    assert issubclass(roofline.InputError, roofline.Error)
    with pytest.raises(roofline.Error):
        roofline.ridge(gpu="nosuch")


def test_format_and_output_are_refused():
    for flags in ({"format": "csv"}, {"output": "ridge.json"}):
        with pytest.raises(roofline.InputError, match="returns the report itself"):
            roofline.ridge(gpu="h100", **flags)


def test_none_and_false_leave_a_flag_out():
    assert roofline.op("attention", batch=1, heads=8, head_dim=64, seq=512, gpu="h100", causal=False,
                       kv_heads=None) == roofline.op("attention", batch=1, heads=8, head_dim=64, seq=512, gpu="h100")


def test_models_lists_the_presets():
    by_id = {m["id"]: m for m in roofline.models()}
    assert {"llama-3.1-8b", "llama-3.1-70b", "deepseek-v3"} <= set(by_id)
    # LLaMA-3.1-70B's config.json: 80 layers, hidden size 8192, 64 query heads over 8 KV heads.
    llama = by_id["llama-3.1-70b"]
    assert (llama["layers"], llama["hidden_size"]) == (80, 8192)
    assert (llama["attention"]["heads"], llama["attention"]["kv_heads"]) == (64, 8)
    # DeepSeek-V3: 256 routed experts, 8 per token.
    assert (by_id["deepseek-v3"]["experts"], by_id["deepseek-v3"]["experts_per_token"]) == (256, 8)


def test_models_reads_a_models_dir(tmp_path):
    with pytest.raises(roofline.InputError):
        roofline.models(models_dir=str(tmp_path / "missing"))


def test_to_frame_is_one_row_per_point():
    pandas = pytest.importorskip("pandas")
    sweep = roofline.op("gemm", m="1024:8192:x2", n=4096, k=4096, gpu="h100")
    frame = roofline.to_frame(sweep, "gemm")
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame["m"]) == [1024, 2048, 4096, 8192]
    with pytest.raises(KeyError, match="no table 'decode'"):
        roofline.to_frame(sweep, "decode")


def test_results_hold_finite_numbers():
    report = roofline.llm(model="llama-3.1-8b", gpu="h100", context=4096)
    numbers = [v for row in report["results"]["decode"] for v in row.values() if isinstance(v, float)]
    assert numbers and all(math.isfinite(v) for v in numbers)
