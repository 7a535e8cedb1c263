#!/usr/bin/env python3
"""Opens a `roofline plot` chart in a real browser (headless Chromium) and checks that it renders.

Usage: check_svg_renders.py ROOFLINE_BINARY

1. The chart (both kinds of points, all three roof provenances, labels that need escaping) is
   written with `roofline plot -o chart.svg` and must be well-formed XML.
2. An HTML page loads it through <img src="chart.svg">, whose onload/onerror handler writes the
   outcome into the DOM; the page also inlines the same SVG, so that the browser's own text
   layout can be measured: no two rendered texts of the chart may overlap. Chromium's
   --dump-dom prints the DOM after the page has loaded.
3. A --screenshot of the chart must be a PNG of the chart's size that is mostly but not wholly
   white and shows the colour of every solid compute roof (a 2 px horizontal line always covers
   one row of pixels fully, so its exact colour appears).

Chromium missing is a failure, not a skip: CI must run this test.
"""
import html
import json
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
import zlib

SVG_NS = "{http://www.w3.org/2000/svg}"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--virtual-time-budget=10000",
]

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>roofline chart render check</title>
<style>body { margin: 0; } #inline svg { display: block; }</style>
<script>
// Defined before the <img>: its load event may fire as soon as the element is parsed.
const report = {image: "pending"};
function loaded(img) {
  report.image = "loaded";
  report.width = img.naturalWidth;
  report.height = img.naturalHeight;
}
function failed() { report.image = "error"; }
</script></head>
<body>
<pre id="result">pending</pre>
<img id="chart" src="chart.svg" alt="roofline chart" onload="loaded(this)" onerror="failed()">
<div id="inline">INLINE_SVG</div>
<script>
window.addEventListener("load", () => {
  const texts = Array.from(document.querySelectorAll("#inline text"));
  const boxes = texts.map((t) => t.getBoundingClientRect());
  const overlaps = [];
  const slack = 0.5;  // sub-pixel rounding
  for (let i = 0; i < boxes.length; ++i) {
    for (let j = i + 1; j < boxes.length; ++j) {
      const a = boxes[i], b = boxes[j];
      if (a.left < b.right - slack && b.left < a.right - slack && a.top < b.bottom - slack && b.top < a.bottom - slack) {
        overlaps.push(texts[i].textContent + " | " + texts[j].textContent);
      }
    }
  }
  report.texts = texts.length;
  report.empty_texts = boxes.filter((b) => b.width < 1 || b.height < 1).length;
  report.overlaps = overlaps;
  document.getElementById("result").textContent = JSON.stringify(report);
});
</script>
</body></html>
"""


def fail(message):
    print(f"FAIL {message}")
    sys.exit(1)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    fail("chromium is missing: install Debian's package (apt-get install chromium; scripts/install-deps.sh does)")
    return None


def run_chromium(chromium, profile, args, timeout=120):
    command = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
    run = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        fail(f"chromium exited {run.returncode}: {run.stderr.strip()[-2000:]}")
    return run.stdout


def png_pixels(path):
    """Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes) into rows of pixels."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path.name} is not a PNG")
    pos, chunks, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace != 0:
        fail(f"{path.name}: unexpected PNG format (depth {depth}, colour type {color}, interlace {interlace})")
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                predictor = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
                line[x] = (line[x] + predictor) & 0xFF
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, channels)])
        previous = line
    return width, height, rows


def main():
    if len(sys.argv) != 2:
        fail("usage: check_svg_renders.py ROOFLINE_BINARY")
    binary = sys.argv[1]
    chromium = find_chromium()
    with tempfile.TemporaryDirectory(prefix="roofline-browser-") as temp:
        work = pathlib.Path(temp)
        chart = work / "chart.svg"
        plot = subprocess.run(
            [binary, "plot", "--gpu", "h100", "--l2-tbps", "7", "--smem-tbps", "30",
             "--point", "GEMV batch 1:1:3.35", "--point", "RMSNorm:1.25:4.1875",
             "--point", "attention <flash> & \"causal\":400:989.4",
             "--measured-point", "cuBLAS GEMM 4096\u00b3:1365:741", "--measured-point", "cuBLAS GEMV:1:3.03",
             "-o", str(chart)],
            capture_output=True, text=True)
        if plot.returncode != 0:
            fail(f"roofline plot exited {plot.returncode}: {plot.stderr.strip()}")

        # 1. Well-formed XML with an SVG root and a size.
        try:
            root = ElementTree.parse(chart).getroot()
        except ElementTree.ParseError as error:
            fail(f"chart.svg is not well-formed XML: {error}")
        if root.tag != SVG_NS + "svg":
            fail(f"the root element is {root.tag}, not svg")
        width, height = float(root.get("width")), float(root.get("height"))
        texts = root.findall(f".//{SVG_NS}text")
        roof_colors = sorted({line.get("stroke") for line in root.find(f"{SVG_NS}g[@id='roofs']")
                              if line.get("stroke-dasharray") is None and "TFLOP/s" in line.findtext(f"{SVG_NS}title")})
        print(f"ok   chart.svg is well-formed: {width:g} x {height:g} px, {len(texts)} texts")

        # 2. The browser loads it, and its own text layout has no overlaps.
        svg_text = chart.read_text(encoding="utf-8")
        inline = re.sub(r"^<\?xml[^>]*\?>\s*", "", svg_text)
        page = work / "page.html"
        page.write_text(PAGE.replace("INLINE_SVG", inline), encoding="utf-8")
        dom = run_chromium(chromium, work / "profile-dom", ["--dump-dom", page.as_uri()])
        found = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
        if not found:
            fail("the dumped DOM has no result element")
        try:
            report = json.loads(html.unescape(found.group(1)))
        except json.JSONDecodeError:
            fail(f"the page did not finish: result is {found.group(1)!r}")
        if report.get("image") != "loaded":
            fail(f"<img src=chart.svg> did not load: {report.get('image')}")
        if (report["width"], report["height"]) != (round(width), round(height)):
            fail(f"the image loaded at {report['width']}x{report['height']}, not {width:g}x{height:g}")
        if report["texts"] != len(texts) or report["empty_texts"]:
            fail(f"{report['texts']} texts rendered ({report['empty_texts']} empty); the file has {len(texts)}")
        if report["overlaps"]:
            fail("rendered texts overlap (is fonts-liberation installed?): " + "; ".join(report["overlaps"]))
        print(f"ok   the browser loaded the image ({report['width']}x{report['height']}) "
              f"and laid out {report['texts']} texts without overlap")

        # 3. A screenshot shows the chart.
        shot = work / "chart.png"
        run_chromium(chromium, work / "profile-shot",
                     [f"--window-size={round(width)},{round(height)}", f"--screenshot={shot}", chart.as_uri()])
        if not shot.exists() or shot.stat().st_size < 20000:
            fail(f"the screenshot is missing or trivial ({shot.stat().st_size if shot.exists() else 0} bytes)")
        shot_width, shot_height, rows = png_pixels(shot)
        if (shot_width, shot_height) != (round(width), round(height)):
            fail(f"the screenshot is {shot_width}x{shot_height}, not {width:g}x{height:g}")
        colors = {}
        for row in rows:
            for pixel in row:
                colors[pixel] = colors.get(pixel, 0) + 1
        total = shot_width * shot_height
        white = colors.get((255, 255, 255), 0) / total
        if not 0.5 < white < 0.98:
            fail(f"the screenshot is {white:.1%} white: blank or garbled")
        missing = [c for c in roof_colors if tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) not in colors]
        if missing:
            fail(f"roof colours {missing} do not appear in the screenshot")
        print(f"ok   screenshot {shot_width}x{shot_height}, {shot.stat().st_size} bytes, {white:.1%} white, "
              f"{len(colors)} colours, every solid compute roof's colour present ({len(roof_colors)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
