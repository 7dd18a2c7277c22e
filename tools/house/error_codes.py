#!/usr/bin/env python3
"""Fail when an error code or an error's message is typed by hand: the codes and messages
of core/tables.json (with the schema's ErrorCode) may appear as literals only in
the generated tables of every language (tools/codegen/gen_tables.py), tests and prose.

    python3 tools/house/error_codes.py   # exit 1 and list the places, if any
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from sources import ROOT, code_lines, report

sys.path.insert(0, str(ROOT / "tools/codegen"))
from gen_tables import load  # noqa: E402

from wire_names import SCANNED  # noqa: E402

# Prose inside code lines: a string that is a sentence, a comment after code.
PROSE = re.compile(r"(//|#).*$|\"\"\".*|'''.*")


def main() -> int:
    tables = load()
    codes = sorted({str(error["code"]) for error in tables["errors"]}, key=len, reverse=True)
    messages = sorted({message["message"] for message in tables["messages"]}, key=len, reverse=True)
    code = re.compile(r"(?<![\w.])(%s)(?![\w.])" % "|".join(re.escape(c) for c in codes))
    message = re.compile(r"""(["'])(%s)\1""" % "|".join(re.escape(m) for m in messages))
    found = []
    state: dict[str, str] = {}  # per file: "string" inside a long string
    tests_from: dict[str, int] = {}
    for rel, number, line in code_lines(SCANNED):
        if rel not in tests_from:
            lines = (ROOT / rel).read_text(errors="replace").splitlines()
            tests_from[rel] = next((i for i, l in enumerate(lines, 1) if l.strip() == "#[cfg(test)]"), 1 << 30)
        if number > tests_from[rel]:
            continue  # a Rust file's test module
        quote = '"""' if rel.endswith(".py") else '"'
        unescaped = len(re.findall(r'(?<![\\\'])' + re.escape(quote), line))
        inside = state.get(rel) == "string"
        if unescaped % 2:
            state[rel] = "" if inside else "string"
        if inside or (unescaped % 2 and not inside and quote == '"""'):
            continue  # a line of a docstring or a multi-line string: prose
        text = PROSE.sub("", line)
        # A number inside a string is prose ("answered -32603"), not a code.
        bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
        for match in code.finditer(bare):
            found.append(f"{rel}:{number}: {match.group(0)}")
        for match in message.finditer(text):
            found.append(f"{rel}:{number}: {match.group(0)}")
    return report(
        found,
        "error codes or messages typed by hand (use the generated tables: Rust `error::codes` and the\n"
        "RequestError factories, C `ACP_ERROR_*`, Python `_tables.Codes` / `Messages`, Node `ERROR_CODES` /\n"
        "`ERROR_MESSAGES`, Go `Code*`; Kotlin `RequestError.Codes`):",
        f"no error code or message typed by hand ({len(codes)} codes, {len(messages)} messages)",
    )


if __name__ == "__main__":
    sys.exit(main())
