#!/usr/bin/env python3
"""Fail when a protocol rule the core owns is written again in a binding.

A binding converts and nothing more. The rules this guards, with where they live:

* a client's ``session/cancel`` answers that session's open permission requests
  ``cancelled`` (``core/src/permission_cancel.rs``, ``core/src/host/responders.rs``):
  no binding or package code names the permission or the cancel method;
* an empty result becomes ``{}`` (``HostConnection::respond``): no binding substitutes
  one for a missing result;
* the connection-closed error is told by its code (``error::codes::CONNECTION_CLOSED``),
  never by its message text.

    python3 tools/house/rules_in_core.py   # exit 1 and list the places, if any
"""

from __future__ import annotations

import re
import sys

from sources import code_lines

# The Go package is go/*.go (go/examples are user programs, which name these methods);
# the Kotlin package is kotlin/src/main (kotlin/examples are user programs too).
SCANNED = ["bindings/c/src", "bindings/python/src", "bindings/node/src", "python/acp_engine", "node/src", ":(glob)go/*.go", "kotlin/src/main"]

# Helpers for user code shipped in a package: they build what a user's agent
# sends (a permission request for a tool call), as the examples do.
USER_SIDE_HELPERS = ("python/acp_engine/compat/contrib/",)

# (what the rule says, the pattern, paths exempt from it)
RULES = [
    ("permission requests are answered by the core's session/cancel rule",
     re.compile(r"request_permission|requestPermission|REQUEST_PERMISSION|RequestPermission|session/cancel|SESSION_CANCEL"),
     USER_SIDE_HELPERS),
    ("an empty result becomes {} in the core", re.compile(r"""voidResult|if result is None else result"""), ()),
    ("the connection-closed error is told by its code",
     re.compile(r"""["']Connection closed["']\s*(===|==|!=|!==)|(===|==|!=|!==)\s*["']Connection closed["']"""), ()),
]


def main() -> int:
    found = [f"{rel}:{number}: {rule}: {line.strip()[:100]}"
             for rel, number, line in code_lines(SCANNED)
             for rule, pattern, exempt in RULES if pattern.search(line) and not rel.startswith(exempt)]
    if found:
        sys.stderr.write("protocol rules written again in a binding (they live in core/):\n" + "\n".join(found) + "\n")
        return 1
    print(f"no core rule written again in a binding ({len(RULES)} rules)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
