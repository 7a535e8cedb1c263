#!/usr/bin/env python3
"""Opens `--format html` reports of llm, serve, plan, plan --pareto, validate and an llm sweep in headless Chromium.

Usage: check_html_report.py ROOFLINE_BINARY SOURCE_DIR BENCH_REPORT_SAMPLE

For each report:
1. The file is self-contained: no <link>, no element with a src, no url() but a fragment, no
   @import, no link out of the page.
2. A copy of the page with a probe (an error handler first in <head>, a script last in <body>)
   is opened with --dump-dom: the page's own script ran (data-ready), no error reached the
   handler, Chromium logged no console error, every inline SVG laid out at a non-zero size, and a
   click on a numeric column's header sorted the rows by that column.
3. The charts hold the report's numbers: the same command's --format json gives the values the
   chart marks carry (data-value, data-x, data-y), checked per report below.

Chromium missing is a failure, not a skip (as in check_svg_renders.py).
"""
import html
import json
import math
import pathlib
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from check_svg_renders import fail, find_chromium, CHROMIUM_FLAGS  # noqa: E402

PROBE_HEAD = """<script>
window.probeErrors = [];
window.addEventListener("error", (e) => window.probeErrors.push(String(e.message)));
</script>"""

PROBE_BODY = """<pre id="probe">pending</pre>
<script>
window.addEventListener("load", () => {
  const result = {ready: document.documentElement.getAttribute("data-ready"), errors: window.probeErrors};
  result.svgs = Array.from(document.querySelectorAll("figure svg")).map((s) => {
    const box = s.getBoundingClientRect();
    return [Math.round(box.width), Math.round(box.height)];
  });
  // Sort the first table by its first all-numeric column, twice (ascending, then descending).
  const table = document.querySelector("table.report");
  result.sorted = null;
  if (table) {
    const rows = Array.from(table.tBodies[0].rows);
    const columns = table.tHead.rows[0].children.length;
    for (let c = 0; c < columns && rows.length > 1; ++c) {
      if (!rows.every((r) => r.children[c].classList.contains("num"))) continue;
      const header = table.tHead.rows[0].children[c];
      const values = () => Array.from(table.tBodies[0].rows).map((r) => Number(r.children[c].getAttribute("data-value")));
      header.click();
      const up = values();
      header.click();
      const down = values();
      result.sorted = {column: header.getAttribute("data-key"),
                       ascending: up.every((v, i) => i === 0 || up[i - 1] <= v),
                       descending: down.every((v, i) => i === 0 || down[i - 1] >= v)};
      break;
    }
  }
  // The filter hides what does not match.
  const filter = document.getElementById("filter");
  filter.value = "no row has this text";
  filter.dispatchEvent(new Event("input"));
  result.hidden_rows = document.querySelectorAll("table.report tbody tr.hidden").length;
  result.rows = document.querySelectorAll("table.report tbody tr").length;
  document.getElementById("probe").textContent = JSON.stringify(result);
});
</script>"""


def run(binary, args):
    done = subprocess.run([binary, *args], capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"roofline {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def self_contained(name, page):
    if re.search(r"<link\b", page, re.I):
        fail(f"{name}: the page links an external resource")
    if re.search(r"<(script|img|iframe|object|embed)\b[^>]*\bsrc=", page, re.I):
        fail(f"{name}: an element loads a src")
    for url in re.findall(r"url\(([^)]*)\)", page):
        if not url.strip("'\" ").startswith("#"):
            fail(f"{name}: url({url}) is not a fragment")
    if re.search(r"@import", page):
        fail(f"{name}: a style sheet imports another")
    # Links stay inside the page (text may name addresses: a model's source, in the inputs).
    for target in re.findall(r"\bhref=\"([^\"]*)\"", page):
        if not target.startswith("#"):
            fail(f"{name}: a link leaves the page: {target}")


def browse(chromium, work, name, page):
    probed = page.replace("<head>", "<head>\n" + PROBE_HEAD, 1).replace("</body>", PROBE_BODY + "\n</body>", 1)
    path = work / f"{name}.html"
    path.write_text(probed, encoding="utf-8")
    command = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={work / ('profile-' + name)}", "--enable-logging=stderr",
               "--v=0", "--dump-dom", path.as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        fail(f"{name}: chromium exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    console = [line for line in done.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    if console:
        fail(f"{name}: console messages: {console[:3]}")
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    if not found:
        fail(f"{name}: the dumped DOM has no probe result")
    try:
        result = json.loads(html.unescape(found.group(1)))
    except json.JSONDecodeError:
        fail(f"{name}: the probe did not finish: {found.group(1)[:200]!r}")
    if result["ready"] != "true":
        fail(f"{name}: the page's script did not run to its end")
    if result["errors"]:
        fail(f"{name}: script errors: {result['errors']}")
    if not result["svgs"] or any(w < 100 or h < 100 for w, h in result["svgs"]):
        fail(f"{name}: charts laid out at {result['svgs']}")
    sorted_ = result["sorted"]
    if sorted_ is not None and not (sorted_["ascending"] and sorted_["descending"]):
        fail(f"{name}: a click on {sorted_['column']} did not sort the rows: {sorted_}")
    if result["hidden_rows"] != result["rows"]:
        fail(f"{name}: the filter hid {result['hidden_rows']} of {result['rows']} rows")
    print(f"ok   {name}: rendered {len(result['svgs'])} charts {result['svgs']}, no console error, "
          f"sorted by {sorted_['column'] if sorted_ else '-'}, filter hides every row")


def marks(page, attribute_pattern):
    """The (label, {attribute: value}) of every SVG mark with a data-label."""
    out = []
    for tag in re.findall(r"<(?:rect|circle|path)\b[^>]*\bdata-label=[^>]*>", page):
        attributes = {k: html.unescape(v) for k, v in re.findall(r'(data-[a-z]+)="([^"]*)"', tag)}
        if attribute_pattern in attributes:
            out.append(attributes)
    return out


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def check_llm(page, report):
    # Each op's segment in the decode bar is its time_us x count / 1000 (ms), summed over the
    # groups that share the op's name; together they make the step, which is the TPOT.
    decode_bar = page[page.index('data-bar="decode step"'):]
    decode_bar = decode_bar[:decode_bar.index("</g>")]
    segments = {m["data-label"]: float(m["data-value"]) for m in marks(decode_bar, "data-value")}
    expected = {}
    for op in report["results"]["decode"]:
        expected[op["name"]] = expected.get(op["name"], 0.0) + op["time_us"] * op["count"] / 1e3
    if set(segments) != set(expected):
        fail(f"llm: decode segments {sorted(segments)} are not the decode table's ops {sorted(expected)}")
    for name, ms in expected.items():
        if not math.isclose(segments[name], ms, rel_tol=1e-9):
            fail(f"llm: decode segment {name} is {segments[name]} ms, the table says {ms}")
    total = sum(segments.values())
    if not math.isclose(total, report["results"]["tpot_ms"], rel_tol=1e-6):
        fail(f"llm: the decode bar adds up to {total} ms, TPOT is {report['results']['tpot_ms']} ms")
    weights = [float(m["data-value"]) for m in marks(page, "data-value") if m["data-label"] == "weights"]
    if weights != [report["results"]["memory"][0]["weights_gb"]]:
        fail(f"llm: the memory chart's weights {weights} are not the memory table's")
    print(f"ok   llm: {len(segments)} decode segments add up to TPOT {total:.4f} ms; weights {weights[0]:.2f} GB")


def check_plan(page, report):
    points = sorted((float(m["data-x"]), float(m["data-y"])) for m in marks(page, "data-x"))
    rows = sorted((r["tpot_ms"], r["usd_per_million_output_tokens"]) for r in report["results"]["ranked"])
    if len(points) != len(rows) or not all(close(a[0], b[0]) and close(a[1], b[1]) for a, b in zip(points, rows)):
        fail(f"plan: chart points {points[:3]} are not the ranked table's {rows[:3]}")
    print(f"ok   plan: {len(points)} candidates at the ranked table's TPOT and cost")


def check_pareto(page, report):
    # Every front point, every dominated sample point, and the chosen one once more (its own mark).
    points = sorted((float(m["data-x"]), float(m["data-y"])) for m in marks(page, "data-x"))
    results = report["results"]
    rows = sorted((r["tokens_per_s_per_user"], r["tokens_per_s_per_gpu"])
                  for r in results["front"] + results["dominated_sample"] + [results["chosen"]])
    if len(points) != len(rows) or not all(close(a[0], b[0]) and close(a[1], b[1]) for a, b in zip(points, rows)):
        fail(f"plan --pareto: chart points {points[:3]} are not the front and sample tables' {rows[:3]}")
    print(f"ok   plan --pareto: {len(points)} marks at the front, sample and chosen tokens/s per user and per GPU")


def check_serve(page, report):
    ys = sorted(float(m["data-y"]) for m in marks(page, "data-y"))
    rows = sorted(r[k] for r in report["results"]["latency"] for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms")
                  if r[k] is not None and r[k] > 0)
    if len(ys) != len(rows) or not all(close(a, b) for a, b in zip(ys, rows)):
        fail(f"serve: latency marks {ys[:4]} are not the latency table's {rows[:4]}")
    if "Engine over time" not in page:
        fail("serve: no timeline chart")
    print(f"ok   serve: {len(ys)} latency percentiles as in the latency table, and the timeline")


def check_validate(page, report):
    points = sorted((m["data-label"], float(m["data-x"]), float(m["data-y"])) for m in marks(page, "data-x"))
    rows = sorted((r["id"], r["measured_us"], r["roofline_us"]) for r in report["results"]["benchmarks"]
                  if r["measured_us"] and r["roofline_us"] and r["measured_us"] > 0 and r["roofline_us"] > 0)
    if len(points) != len(rows) or not all(a[0] == b[0] and close(a[1], b[1]) and close(a[2], b[2])
                                           for a, b in zip(points, rows)):
        fail(f"validate: chart points {points[:2]} are not the benchmarks table's {rows[:2]}")
    print(f"ok   validate: {len(points)} benchmarks at their measured and roofline times")


def check_sweep(page, report):
    points = sorted((float(m["data-x"]), float(m["data-y"])) for m in marks(page, "data-x"))
    rows = sorted((r["context"], r["tpot_ms"]) for r in report["results"]["sweep"])
    if len(points) != len(rows) or not all(close(a[0], b[0]) and close(a[1], b[1]) for a, b in zip(points, rows)):
        fail(f"llm sweep: chart points {points[:3]} are not the sweep table's {rows[:3]}")
    print(f"ok   llm sweep: {len(points)} points at the sweep table's context and TPOT")


def main():
    if len(sys.argv) != 4:
        fail("usage: check_html_report.py ROOFLINE_BINARY SOURCE_DIR BENCH_REPORT_SAMPLE")
    binary, source, sample = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    chromium = find_chromium()
    with tempfile.TemporaryDirectory(prefix="roofline-html-") as temp:
        work = pathlib.Path(temp)
        measured = work / "bench.json"
        measured.write_text(subprocess.run([sample], capture_output=True, text=True, check=True).stdout)
        cases = [
            ("llm", ["llm", "--model", "llama-3.1-8b", "--gpu", "h100", "--weights", "bf16", "--kv", "bf16",
                     "--context", "4096", "--batch", "8"], check_llm),
            ("serve", ["serve", "--model", "llama-3.1-8b", "--gpu", "h100", "--weights", "bf16", "--kv", "bf16",
                       "--prompt", "512", "--output", "64", "--requests", "40", "--rate", "8", "--seed", "1"],
             check_serve),
            ("plan", ["plan", "--model", "llama-3.1-8b", "--gpus", "h100,a100-80gb", "--rps", "5", "--prompt", "1000",
                      "--output", "200", "--tpot-ms", "50", "--ttft-ms", "2000", "--price", "all=2"], check_plan),
            ("pareto", ["plan", "--pareto", "--model", "mixtral-8x7b", "--gpus", "h100,h200", "--prompt-tokens", "1000",
                        "--output-tokens", "200", "--tpot-ms", "40"], check_pareto),
            # Disaggregated points too: diamonds, their own series (the same check of every mark).
            ("pareto-pools", ["plan", "--pareto", "--disaggregate", "--model", "mixtral-8x7b", "--gpus", "h100,h200",
                              "--prompt-tokens", "1000", "--output-tokens", "200", "--tpot-ms", "40"], check_pareto),
            ("validate", ["validate", "--measured", str(measured)], check_validate),
            ("sweep", ["llm", "--model", "llama-3.1-8b", "--gpu", "h100", "--context", "1024:8192:x2", "--batch",
                       "1,8,max"], check_sweep),
        ]
        for name, args, check in cases:
            page = run(binary, [*args, "--format", "html"])
            report = json.loads(run(binary, [*args, "--format", "json"]))
            self_contained(name, page)
            browse(chromium, work, name, page)
            check(page, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
