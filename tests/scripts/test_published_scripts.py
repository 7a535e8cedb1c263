#!/usr/bin/env python3
"""scripts/compare-published.py on hand-made runs of scripts/published-comparisons.sh, with no GPU
and no roofline binary: the layer check's summary and the figures that moved. Each expected number
is derived by hand in the comment beside it.

  python3 tests/scripts/test_published_scripts.py PROJECT_SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = None


def compare(*args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "compare-published.py"), *args],
                          capture_output=True, text=True, check=False)


def write(folder, name, text):
    with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
        f.write(text)


def layers(errors):
    return json.dumps({"results": {"layers": [{"id": i, "calibrated_error_pct": e} for i, e in errors.items()]}})


class ComparePublished(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.before = os.path.join(self.tmp.name, "before")
        self.after = os.path.join(self.tmp.name, "after")
        os.makedirs(self.before)
        os.makedirs(self.after)

    def tearDown(self):
        self.tmp.cleanup()

    def test_layer_check_and_moves(self):
        # Three layers: before -2, +9.8, -6.2 (3 within 10%, median |error| 6.2, worst +9.8); after
        # -2, +11, -2.3 (2 within, median 2.3, worst +11.0). Most moved: c (3.9 points), then b (1.2).
        write(self.before, "layer-check.json", layers({"a": -2.0, "b": 9.8, "c": -6.2}))
        write(self.after, "layer-check.json", layers({"a": -2.0, "b": 11.0, "c": -2.3}))
        # A prediction 4,503 -> 4,595: +2.04%; its error column (+7.4% -> +9.6%) and the TP (2) are
        # not ranked. 1,330.1 -> 1,354.7: +1.85%. A note that changed is skipped; an unchanged file is
        # named as such; a line whose count of numbers changed is listed unpaired.
        write(self.before, "serve.txt", "llama 2 1000/1000 4191 4503 +7.4%\nnote: 9 tables\nrow x 1330.1\n")
        write(self.after, "serve.txt", "llama 2 1000/1000 4191 4595 +9.6%\nnote: 8 tables\nrow x 1354.7\n")
        write(self.before, "same.txt", "12,345 tokens/s\n")
        write(self.after, "same.txt", "12,345 tokens/s\n")
        write(self.before, "shape.txt", "a 100 200\n")
        write(self.after, "shape.txt", "a 100\n")
        r = compare(self.before, self.after)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout
        self.assertIn("- before: 3/3 within 10%, median |error| 6.20%, worst +9.8%", out)
        self.assertIn("- after: 2/3 within 10%, median |error| 2.30%, worst +11.0%", out)
        self.assertLess(out.index("- c: -6.2% -> -2.3%"), out.index("- b: +9.8% -> +11.0%"))
        self.assertNotIn("- a:", out)
        self.assertIn("| 2.04% | serve.txt | llama 2 1000/1000 4191 4503 +7.4% | 4503 | 4595 |", out)
        self.assertIn("| 1.85% | serve.txt | row x 1330.1 | 1330.1 | 1354.7 |", out)
        self.assertLess(out.index("| 2.04%"), out.index("| 1.85%"))
        self.assertNotIn("7.4% | +9.6%", out)
        self.assertNotIn("tables", out)
        self.assertIn("Unchanged: same.txt.", out)
        self.assertIn('- shape.txt: "a 100 200" changed shape (numbers not paired)', out)

    def test_layer_checks_of_two_runs_are_named(self):
        # Each calibration checked against its own layer run: the summaries say which.
        write(self.before, "layer-check.json", json.dumps({"inputs": {"measured": ["old/layer.json"]},
                                                          "results": {"layers": [{"id": "a", "calibrated_error_pct": 1.0}]}}))
        write(self.after, "layer-check.json", json.dumps({"inputs": {"measured": ["new/layer.json"]},
                                                         "results": {"layers": [{"id": "a", "calibrated_error_pct": -3.0}]}}))
        out = compare(self.before, self.after).stdout
        self.assertIn("- before: 1/1 within 10%, median |error| 1.00%, worst +1.0% (old/layer.json)", out)
        self.assertIn("- after: 1/1 within 10%, median |error| 3.00%, worst -3.0% (new/layer.json)", out)

    def test_bad_input(self):
        r = compare(self.before, os.path.join(self.tmp.name, "missing"))
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)
        self.assertIn("is not a folder", r.stderr)
        write(self.before, "layer-check.json", "{}")
        write(self.after, "layer-check.json", "{}")
        r = compare(self.before, self.after)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a validate report", r.stderr)
        r = compare(self.before, self.after, "--top", "x")
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    ROOT = sys.argv.pop(1)
    unittest.main()
