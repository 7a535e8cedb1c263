#!/usr/bin/env python3
"""The GPU machine's analysis scripts (scripts/gpu/) on hand-made inputs, with no GPU: the merge of a
comparison's rounds that the calibration learns from (merge_rounds.py), the A/B summary of a kernel's
variants (summarize_variants.py), the flash-attention table beside PyTorch's backends
(flash_attention_table.py), the GEMM kernels beside cuBLAS (library_ratio_tables.py), and the SASS
listing of where ptxas placed a kernel's waits
(sass_order.py). Each expected number is derived by hand in the comment beside it.

  python3 tests/scripts/test_gpu_scripts.py PROJECT_SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = None


def script(name):
    return os.path.join(ROOT, "scripts", "gpu", name)


def run(name, *args):
    return subprocess.run([sys.executable, script(name), *args], capture_output=True, text=True, check=False)


def write_json(folder, name, value):
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f)
    return path


def bench_report(rows, clock):
    """A roofline bench report: timed rows in `attention`, an untimed derived table beside them."""
    return {"schema": "roofline.bench.v1", "device": {"sm_clock_mhz": clock},
            "results": {"attention": rows, "attention_by_n": [{"seq": 1024, "note": f"round at {clock}"}]}}


class MergeRounds(unittest.TestCase):
    def test_bench_rounds_take_the_round_of_median_time_whole(self):
        with tempfile.TemporaryDirectory() as folder:
            # Case a: 10, 12, 11 us over three rounds -> sorted 10, 11, 12, the middle one is round 3's
            # row (its clock, 1900, comes with it). Case b failed in round 2 -> the failed row. Case c
            # is missing from round 2: two rounds, 9 and 7 -> the lower middle of (7, 9), round 3's 7.
            r1 = bench_report([{"id": "a", "median_us": 10.0, "status": "passed", "sm_clock_mhz": 1980},
                               {"id": "b", "median_us": 5.0, "status": "passed"},
                               {"id": "c", "median_us": 9.0, "status": "passed"}], 1980)
            r2 = bench_report([{"id": "a", "median_us": 12.0, "status": "passed", "sm_clock_mhz": 1700},
                               {"id": "b", "median_us": None, "status": "failed"}], 1700)
            r3 = bench_report([{"id": "a", "median_us": 11.0, "status": "passed", "sm_clock_mhz": 1900},
                               {"id": "b", "median_us": 6.0, "status": "passed"},
                               {"id": "c", "median_us": 7.0, "status": "passed"}], 1900)
            paths = [write_json(folder, f"flash-r{i}.json", r) for i, r in enumerate((r1, r2, r3), 1)]
            out = os.path.join(folder, "flash.json")
            result = run("merge_rounds.py", out, *paths)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(out, encoding="utf-8") as f:
                merged = json.load(f)
            rows = {row["id"]: row for row in merged["results"]["attention"]}
            self.assertEqual([row["id"] for row in merged["results"]["attention"]], ["a", "b", "c"])
            self.assertEqual(rows["a"]["median_us"], 11.0)
            self.assertEqual(rows["a"]["sm_clock_mhz"], 1900)
            self.assertEqual(rows["a"]["median_us_rounds"], [10.0, 12.0, 11.0])
            self.assertEqual(rows["b"]["status"], "failed")
            self.assertNotIn("median_us_rounds", rows["b"])
            self.assertEqual(rows["c"]["median_us"], 7.0)
            self.assertEqual(rows["c"]["median_us_rounds"], [9.0, 7.0])
            # Everything but the timed tables is the first round's, and the untimed table says so.
            self.assertEqual(merged["device"]["sm_clock_mhz"], 1980)
            self.assertEqual(merged["results"]["attention_by_n"], r1["results"]["attention_by_n"])
            self.assertEqual(merged["untimed_tables_from"], {"attention_by_n": "flash-r1.json"})
            self.assertEqual(merged["merged_rounds"], ["flash-r1.json", "flash-r2.json", "flash-r3.json"])

    def test_tables_some_rounds_lack_are_kept(self):
        with tempfile.TemporaryDirectory() as folder:
            # Round 1 ran attention only; rounds 2 and 3 also gemm (3.0 and 2.0 us -> the lower middle,
            # 2.0) and a summary table of their own, which comes from round 2, the first that has it.
            r1 = bench_report([{"id": "a", "median_us": 10.0, "status": "passed"}], 1980)
            r2 = bench_report([{"id": "a", "median_us": 12.0, "status": "passed"}], 1970)
            r3 = bench_report([{"id": "a", "median_us": 11.0, "status": "passed"}], 1960)
            for report, us in ((r2, 3.0), (r3, 2.0)):
                report["results"]["gemm"] = [{"id": "g", "median_us": us, "status": "passed"}]
                report["results"]["gemm_summary"] = {"note": f"{us}"}
            paths = [write_json(folder, f"r{i}.json", r) for i, r in enumerate((r1, r2, r3), 1)]
            out = os.path.join(folder, "merged.json")
            result = run("merge_rounds.py", out, *paths)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(out, encoding="utf-8") as f:
                merged = json.load(f)
            self.assertEqual(list(merged["results"]), ["attention", "attention_by_n", "gemm", "gemm_summary"])
            self.assertEqual(merged["results"]["gemm"][0]["median_us"], 2.0)
            self.assertEqual(merged["results"]["gemm"][0]["median_us_rounds"], [3.0, 2.0])
            self.assertEqual(merged["results"]["gemm_summary"], {"note": "3.0"})
            self.assertEqual(merged["untimed_tables_from"], {"attention_by_n": "r1.json", "gemm_summary": "r2.json"})

    def test_library_rounds_match_rows_by_shape_and_backend(self):
        with tempfile.TemporaryDirectory() as folder:
            # PyTorch's report: a list of rows, a case keyed by its strings and integers but status.
            # cudnn at N 1024: 5.0 and 4.0 us -> the lower middle, 4.0 (round 2); flash at N 1024:
            # 9.0 and 8.0 -> 8.0. The float `tflops` differs between rounds and is not part of the key.
            def rows(cudnn, flash):
                return [{"backend": "cudnn", "seq": 1024, "causal": True, "median_us": cudnn, "tflops": 100 / cudnn,
                         "status": "passed"},
                        {"backend": "flash", "seq": 1024, "causal": True, "median_us": flash, "tflops": 100 / flash,
                         "status": "passed"}]
            paths = [write_json(folder, "torch-r1.json", {"results": rows(5.0, 9.0)}),
                     write_json(folder, "torch-r2.json", {"results": rows(4.0, 8.0)})]
            out = os.path.join(folder, "torch.json")
            result = run("merge_rounds.py", out, *paths)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(out, encoding="utf-8") as f:
                merged = json.load(f)["results"]
            self.assertEqual([(r["backend"], r["median_us"]) for r in merged], [("cudnn", 4.0), ("flash", 8.0)])
            self.assertEqual(merged[0]["tflops"], 25.0)

    def test_bad_input_writes_nothing(self):
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "merged.json")
            good = write_json(folder, "r1.json", bench_report([{"id": "a", "median_us": 1.0}], 1980))
            for bad in (os.path.join(folder, "missing.json"), write_json(folder, "r2.json", {"rows": []})):
                result = run("merge_rounds.py", out, good, bad)
                self.assertEqual(result.returncode, 2)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                self.assertFalse(os.path.exists(out))
            self.assertEqual(sorted(os.listdir(folder)), ["r1.json", "r2.json"])  # no temporary file left


class SummarizeVariants(unittest.TestCase):
    def test_medians_ranges_and_ratios(self):
        with tempfile.TemporaryDirectory() as folder:
            # Case x: variant 0 at 100, 110, 90 us (median 100), variant 1 at 95, 97, 99 (median 97):
            # 1 / 0 = 0.970. Case y: variant 0 at 10, 10, 10, variant 1 at 11, 12, 13 (median 12):
            # 1.200. Over the two cases: median of (0.970, 1.200) = 1.085, range 0.970 - 1.200.
            times = {"0": {"x": [100, 110, 90], "y": [10, 10, 10]}, "1": {"x": [95, 97, 99], "y": [11, 12, 13]}}
            for value, cases in times.items():
                for r in range(3):
                    rows = [{"id": case, "median_us": us[r]} for case, us in cases.items()]
                    write_json(folder, f"flash-r{r + 1}-v{value}.json", {"results": {"attention": rows}})
            result = run("summarize_variants.py", folder, "flash", "0", "1")
            self.assertEqual(result.returncode, 0, result.stderr)
            lines = result.stdout.splitlines()
            self.assertIn("| x | 100.0 (90.0-110.0) | 97.0 (95.0-99.0) | 0.970 |", lines)
            self.assertIn("| y | 10.0 (10.0-10.0) | 12.0 (11.0-13.0) | 1.200 |", lines)
            self.assertIn("Up to 3 rounds a variant.", lines)
            self.assertIn("1 / 0: median 1.085 over 2 cases, 0.970 - 1.200.", lines)

    def test_bad_input(self):
        with tempfile.TemporaryDirectory() as folder:
            result = run("summarize_variants.py", folder, "flash", "0", "1")
            self.assertEqual(result.returncode, 2)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
            with open(os.path.join(folder, "flash-r1-v0.json"), "w", encoding="utf-8") as f:
                f.write("{not json")
            result = run("summarize_variants.py", folder, "flash", "0", "1")
            self.assertEqual(result.returncode, 2)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)


class FlashAttentionTable(unittest.TestCase):
    def test_ratio_is_the_library_time_over_ours(self):
        with tempfile.TemporaryDirectory() as folder:
            # Causal d 128, B4 H32, N 1024: ours 100 us, cuDNN 90 us -> 90 / 100 = 0.90 (cuDNN faster).
            # Full, N 2048: ours 200 us, cuDNN 220 -> 1.10. d 64 full N 512: cuDNN fails its check, so the
            # faster of the backends that pass, FA2 at 50 us (efficient 70) -> 50 / 40 = 1.25, named.
            def ours(mask, d, seq, us):
                return {"id": f"attn.bf16.{mask}.d{d}.b4h32kv32.n{seq}.flashwgmma", "median_us": us,
                        "status": "passed", "tflops": 1000.0 / us, "sm_clock_mhz": 1980.0}

            def lib(backend, causal, d, seq, us, status="passed"):
                return {"backend": backend, "causal": causal, "head_dim": d, "head_dim_v": d, "seq": seq, "batch": 4,
                        "heads": 32, "kv_heads": 32, "median_us": us, "tflops": 1000.0 / us, "status": status,
                        "sm_clock_mhz": [1980.0, 1965.0]}
            bench = write_json(folder, "flash.json", {"results": {"attention": [
                ours("causal", 128, 1024, 100.0), ours("full", 128, 2048, 200.0), ours("full", 64, 512, 40.0)]}})
            torch = write_json(folder, "torch.json", {
                "torch": "2.11", "cuda": "13.0", "cudnn": 91900, "device": "NVIDIA H200", "results": [
                    lib("cudnn", True, 128, 1024, 90.0), lib("flash", True, 128, 1024, 150.0),
                    lib("cudnn", False, 128, 2048, 220.0),
                    lib("cudnn", False, 64, 512, 30.0, "failed"), lib("flash", False, 64, 512, 50.0),
                    lib("efficient", False, 64, 512, 70.0)]})
            result = run("flash_attention_table.py", bench, torch)
            self.assertEqual(result.returncode, 0, result.stderr)
            rows = [line for line in result.stdout.splitlines() if line.startswith("| 128 ") or line.startswith("| 64 ")]
            # d 128 first, causal before full, then d 64.
            self.assertEqual(rows[0], "| 128 | causal | 1024 | 4 | 32 / 32 | 100.0 | 10 | 1980 | 90.0 | 11 | 1980-1965 "
                                      "| 7 | - | 0.90 |")
            self.assertEqual(rows[1], "| 128 | full | 2048 | 4 | 32 / 32 | 200.0 | 5 | 1980 | 220.0 | 5 | 1980-1965 "
                                      "| - | - | 1.10 |")
            self.assertEqual(rows[2], "| 64 | full | 512 | 4 | 32 / 32 | 40.0 | 25 | 1980 | - | - | - | 20 | 14 "
                                      "| 1.25 (flash) |")
            self.assertIn("Head dim 128: 1 of 2 shapes at or above the library; library / roofline 0.90 - 1.10.",
                          result.stdout.splitlines())

    def test_bad_input(self):
        with tempfile.TemporaryDirectory() as folder:
            bench = write_json(folder, "flash.json", {"results": {"attention": []}})
            torch = write_json(folder, "torch.json", {"results": []})
            for args in ((bench, os.path.join(folder, "missing.json")), (torch, bench), (bench,)):
                result = run("flash_attention_table.py", *args)
                self.assertEqual(result.returncode, 2, args)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)


class LibraryRatioTables(unittest.TestCase):
    def test_every_listed_kernel_beside_the_library(self):
        with tempfile.TemporaryDirectory() as folder:
            # 256 x 10240 x 8192: wgmma 100 us, streamk 70 us, cuBLAS 63 us -> 63 / 100 = 0.63 and
            # 63 / 70 = 0.90; an earlier run's streamk at 84 us -> 84 / 70 = 1.20. A shape without
            # cuBLAS is left out; a ragged id's dots in the shape are kept whole.
            def row(case, us):
                return {"id": case, "min_us": us, "tflops": 100.0 / us, "sm_clock_mhz": 1980.0}
            now = write_json(folder, "now.json", {"results": {"gemm": [
                row("gemm.bf16.256x10240x8192.wgmma", 100.0), row("gemm.bf16.256x10240x8192.streamk", 70.0),
                row("gemm.bf16.256x10240x8192.cublas", 63.0), row("gemm.bf16.64x64x64.wgmma", 5.0)]}})
            before = write_json(folder, "before.json", {"results": {"gemm": [
                row("gemm.bf16.256x10240x8192.streamk", 84.0)]}})
            result = run("library_ratio_tables.py", "gemm", now, before)
            self.assertEqual(result.returncode, 0, result.stderr)
            rows = [line for line in result.stdout.splitlines() if line.startswith("| gemm.")]
            self.assertEqual(rows, [
                "| gemm.bf16.256x10240x8192 | wgmma | 100.0 | 1 | 1980 | 63.0 | 2 | 1980 | 0.63 | - | - |",
                "| gemm.bf16.256x10240x8192 | streamk | 70.0 | 1 | 1980 | 63.0 | 2 | 1980 | 0.90 | 84.0 | 1.20 |",
            ])

    def test_bad_input(self):
        with tempfile.TemporaryDirectory() as folder:
            library_list = write_json(folder, "torch.json", {"results": []})
            for args in (("gemm", os.path.join(folder, "missing.json")), ("gemm", library_list), ("gemx", library_list)):
                result = run("library_ratio_tables.py", *args)
                self.assertEqual(result.returncode, 2, args)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)


# A cuobjdump -sass listing of one function, cut to what the script reads: a loop from 0x0020 to
# 0x0090 with one HGMMA, a wgmma wait, exponentials on both sides of it and one pack after it.
SASS = """
        Function : _Z6kernelv_other
        /*0000*/                   NOP ;
        Function : _Z12flash_kernelILi128EEvv
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4+0x30000], R2 ;
        /*0020*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR16], RZ, !UPT ;
        /*0030*/                   MUFU.EX2 R3, R3 ;
        /*0040*/                   MUFU.EX2 R4, R4 ;
        /*0050*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0060*/                   MUFU.EX2 R5, R5 ;
        /*0070*/                   F2FP.BF16.F32.PACK_AB R6, R4, R3 ;
        /*0080*/                   FADD R7, R7, R5 ;
        /*0090*/               @P1 BRA 0x20 ;
        /*00a0*/                   EXIT ;
"""


class SassOrder(unittest.TestCase):
    def listing(self, folder):
        path = os.path.join(folder, "all.sass")
        with open(path, "w", encoding="utf-8") as f:
            f.write(SASS)
        return path

    def test_order_folds_runs(self):
        with tempfile.TemporaryDirectory() as folder:
            result = run("sass_order.py", self.listing(folder), "flash_kernel")
            self.assertEqual(result.returncode, 0, result.stderr)
            # Kept: the wait on the mbarrier, HGMMA, two MUFU folded into one line with a count, the
            # wgmma wait, one MUFU, the pack; MOV, FADD, BRA and the other function are not listed.
            self.assertEqual(result.stdout.splitlines(), [
                "_Z12flash_kernelILi128EEvv",
                "0010 SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4+0x30000], R2",
                "0020 HGMMA.64x128x16.F32.BF16 R24, gdesc[UR16], RZ, !UPT",
                "0030 MUFU.EX2 R3, R3",
                "      ... 2 x MUFU in all",
                "0050 WARPGROUP.DEPBAR.LE gsb0, 0x0",
                "0060 MUFU.EX2 R5, R5",
                "0070 F2FP.BF16.F32.PACK_AB R6, R4, R3",
            ])

    def test_loops(self):
        with tempfile.TemporaryDirectory() as folder:
            result = run("sass_order.py", self.listing(folder), "flash_kernel", "--loops")
            self.assertEqual(result.returncode, 0, result.stderr)
            lines = result.stdout.splitlines()
            # The loop: 0x20 to the branch at 0x90, 8 instructions; MUFU.EX2 at 0x30 and 0x40 before
            # the wait at 0x50, one at 0x60 after; the one F2FP after.
            self.assertEqual(lines[1], "loop 0020-0090: 8 instructions, 1 HGMMA, 1 wgmma waits; relative to the "
                                       "last wait: MUFU.EX2 2 before / 1 after, F2FP 0 before / 1 after")
            self.assertTrue(lines[2].startswith("  MUFU.EX2 3, "), lines[2])

    def test_bad_input(self):
        with tempfile.TemporaryDirectory() as folder:
            for args in ((self.listing(folder), "no_such_kernel"), (os.path.join(folder, "missing.sass"), "k"),
                         (self.listing(folder),)):
                result = run("sass_order.py", *args)
                self.assertEqual(result.returncode, 2, args)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: test_gpu_scripts.py PROJECT_SOURCE_DIR", file=sys.stderr)
        sys.exit(2)
    ROOT = sys.argv.pop(1)
    unittest.main(verbosity=1)
