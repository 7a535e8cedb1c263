#!/usr/bin/env python3
"""Fails when an #include "roofline/..." goes against the direction of the areas.

The library is layered one way (docs/architecture.md):

    core -> report -> hardware -> model -> basis -> llm -> serve -> bench -> validate -> plot -> profile -> cli

A file of an area may include the headers of its own area and of the areas before it, never of an
area after it. A file's area is its folder: include/roofline/<area>/, src/<area>/ (src/bench/cuda
and kernels/ are bench's), src/cli/, and the programs on top (speed/, fuzz/) may include anything.
Every public header lives in an area folder, and a source file named like a header (X.cpp for
X.hpp) lives in the same area under src/, unless that area has an X.cpp of its own.

usage: check-layers.py SOURCE_DIR
"""

import re
import sys
from pathlib import Path

AREAS = ["core", "report", "hardware", "model", "basis", "llm", "serve", "bench", "validate", "plot", "profile", "cli"]
RANK = {area: i for i, area in enumerate(AREAS)}
TOP = len(AREAS)  # programs and tests above the library
INCLUDE = re.compile(r'^\s*#\s*include\s+"roofline/([^"]+)"', re.MULTILINE)
SOURCES = (".hpp", ".cpp", ".cu", ".cuh", ".h")


def area_of_file(relative: Path) -> int | None:
    parts = relative.parts
    if parts[:2] == ("include", "roofline") and len(parts) > 3:
        return RANK.get(parts[2])
    if parts[0] == "src" and len(parts) > 2:
        return RANK.get(parts[1])
    if parts[0] == "kernels":
        return RANK["bench"]
    if parts[0] in ("speed", "fuzz", "tests"):
        return TOP
    return None


def main() -> int:
    root = Path(sys.argv[1]).resolve()
    problems: list[str] = []
    headers = {}
    for header in sorted((root / "include" / "roofline").rglob("*.hpp")):
        relative = header.relative_to(root / "include" / "roofline")
        if len(relative.parts) != 2 or relative.parts[0] not in RANK:
            problems.append(f"include/roofline/{relative}: a public header lives in include/roofline/<area>/ "
                            f"(areas: {', '.join(AREAS)})")
            continue
        headers[relative.stem] = relative.parts[0]

    for stem, area in headers.items():
        if (root / "src" / area / f"{stem}.cpp").exists():
            continue
        for source in root.glob(f"src/*/{stem}.cpp"):
            problems.append(f"{source.relative_to(root)}: the code of include/roofline/{area}/{stem}.hpp "
                            f"belongs in src/{area}/")

    checked = 0
    for folder in ("include", "src", "kernels", "speed", "fuzz", "tests"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SOURCES or not path.is_file():
                continue
            relative = path.relative_to(root)
            rank = area_of_file(relative)
            if rank is None:
                problems.append(f"{relative}: not in an area folder ({', '.join(AREAS)})")
                continue
            checked += 1
            text = path.read_text(encoding="utf-8", errors="replace")
            for match in INCLUDE.finditer(text):
                target = match.group(1)
                target_area = target.split("/")[0] if "/" in target else None
                if target_area not in RANK:
                    problems.append(f"{relative}: includes roofline/{target}, which is in no area folder")
                    continue
                if RANK[target_area] > rank:
                    line = text.count("\n", 0, match.start()) + 1
                    problems.append(f"{relative}:{line}: {AREAS[rank]} includes roofline/{target} "
                                    f"({target_area} comes after {AREAS[rank]})")

    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check-layers: {len(problems)} problem(s) in {checked} files", file=sys.stderr)
        return 1
    print(f"check-layers: {checked} files include only their own area and the areas before it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
