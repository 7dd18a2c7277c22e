#!/usr/bin/env python3
"""Fail when a generated file is not marked ``linguist-generated`` in ``.gitattributes``
(reviews and diffs fold what is marked), or a marked source file does not say in its first
lines that it is generated (what generates it, and not to edit it).

    python3 tools/house/generated_marked.py   # exit 1 and list the files, if any
"""

from __future__ import annotations

import re
import subprocess
import sys

from sources import ROOT, SOURCE, report

# What a generated file says in its first lines: that it is generated and not to be
# edited. A C header says it in a comment line of its own after its manual.
SAYS_GENERATED = re.compile(r"@generated|do not edit", re.IGNORECASE)
HEAD_LINES = 5
WARNING_LINE = re.compile(r"^/\*.*(@generated|do not edit).*\*/$", re.IGNORECASE | re.MULTILINE)


def says_generated(rel: str) -> bool:
    text = (ROOT / rel).read_text(encoding="utf-8", errors="replace")
    return bool(SAYS_GENERATED.search("\n".join(text.splitlines()[:HEAD_LINES])) or WARNING_LINE.search(text))


def marked(files: list[str]) -> set[str]:
    """Which of ``files`` git sees as ``linguist-generated``."""
    out = subprocess.run(["git", "check-attr", "linguist-generated", "--stdin"], cwd=ROOT, input="\n".join(files),
                         capture_output=True, text=True, check=True).stdout
    return {line.split(": ")[0] for line in out.splitlines() if line.endswith(": set")}


def main() -> int:
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    sources = [rel for rel in tracked if SOURCE.search(rel) and "node_modules" not in rel]
    says = {rel for rel in sources if says_generated(rel)}
    attributed = marked(sources)
    found = [f"{rel}: generated, not marked" for rel in sorted(says - attributed)]
    found += [f"{rel}: marked, does not say it is generated" for rel in sorted(attributed - says)]
    return report(
        found,
        "generated files and .gitattributes disagree (mark each generated file linguist-generated;\n"
        "a generated file says what generates it in its first lines):",
        f"every generated source file is marked ({len(says)} files)",
    )


if __name__ == "__main__":
    sys.exit(main())
