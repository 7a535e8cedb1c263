#!/usr/bin/env python3
"""Every relative link in the Markdown documents points at a file or folder that exists.

Usage: check_links.py SOURCE_DIR

Reads README.md and docs/**/*.md; a link [text](target) whose target is not a URL or an anchor
must name an existing path relative to the document (an #anchor suffix is ignored). Exits 1 with
one line per broken link.
"""
import pathlib
import re
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def documents(source: pathlib.Path):
    yield source / "README.md"
    yield from sorted((source / "docs").rglob("*.md"))


def main() -> int:
    source = pathlib.Path(sys.argv[1]).resolve()
    broken = 0
    checked = 0
    for doc in documents(source):
        in_code = False
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_code = not in_code
                continue
            if in_code:
                continue
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                path = target.split("#", 1)[0]
                checked += 1
                if not (doc.parent / path).exists():
                    print(f"{doc.relative_to(source)}:{number}: broken link {target}")
                    broken += 1
    print(f"{checked} relative links checked, {broken} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
