#!/usr/bin/env python3
"""Fail when a wire method name is typed by hand: every method name of the schema
(``x-method``) may appear as a string literal only in generated files (the method tables
of every language), tests and the tools that test against other SDKs.

    python3 tools/house/wire_names.py   # exit 1 and list the places, if any
"""

from __future__ import annotations

import json
import re
import sys

from sources import ROOT, code_lines, report

# Hand-written product code and examples: what users get and read.
SCANNED = ["core/src", "core/examples", "bindings", "python/acp_engine", "python/examples", "node/src",
           "node/examples", "go", "kotlin", "cli"]


# Files that speak another protocol whose method names collide with ACP's: the
# MCP stdio bridge sends MCP's own `initialize` to an MCP server, and the MCP
# HTTP bridge refuses MCP's `initialize` (MCP 2026-07-28 has none).
OTHER_PROTOCOL = {("core/src/mcp/stdio_bridge.rs", "initialize"), ("core/src/mcp/http_bridge/checks.rs", "initialize")}


def wire_names() -> set[str]:
    names = set()
    for version in ("v1", "v2"):
        for schema in ("schema.json", "schema.unstable.json"):
            defs = json.loads((ROOT / "schema" / version / schema).read_text())["$defs"]
            names |= {d["x-method"] for d in defs.values() if "x-method" in d}
    return names


def main() -> int:
    names = wire_names()
    literal = re.compile(r"""(["'])(%s)\1""" % "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)))
    found = [f"{rel}:{number}: {match.group(0)}"
             for rel, number, line in code_lines(SCANNED) for match in literal.finditer(line)
             if (rel, match.group(2)) not in OTHER_PROTOCOL]
    return report(
        found,
        "wire method names typed by hand (use the generated method table: Rust `schema::method`,\n"
        "Python `acp_engine.schema.*_METHODS`, Node `AGENT_METHODS`..., C `ACP_METHOD_*`):",
        f"no wire method name typed by hand ({len(names)} names)",
    )


if __name__ == "__main__":
    sys.exit(main())
