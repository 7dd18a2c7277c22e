#!/usr/bin/env python3
"""The official Python SDK's handler signatures, as data for the compat layer's codegen.

Each method of the official ``Agent`` / ``Client`` protocols (``acp.interfaces``, and
``acp.experimental.v2.interfaces`` for v2) takes the params model's fields as keyword
arguments, in an order of its own (its schema's, a newer one than ours), required ones
first. ``tools/codegen/gen_py_compat.py`` orders our generated protocols' and peers'
parameters the same way, so that a call written against the official package, positional
or keyword, means the same on ours. Run in a Python that has the package installed:

    python signatures.py --out schema/upstream/pypi/signatures.json

Output: per protocol version, per ``"<wire name> <request|notification>"``: ``parameters``,
those after ``self`` and before ``**kwargs`` (``[name, required, keyword_only]``), and
``may_return_none``, whether the handler may return ``None`` (``-> X | None``: the
package answers ``{}``), which an override written against it may declare too.
Standard library and the installed ``acp`` only. Deterministic.
"""

from __future__ import annotations

import argparse
import inspect
import json
from pathlib import Path
from typing import Any

import acp.experimental.v2.interfaces
import acp.interfaces

VERSIONS = {"v1": acp.interfaces, "v2": acp.experimental.v2.interfaces}


def may_return_none(member: Any) -> bool:
    """Whether the handler's return annotation admits ``None`` (the protocols' annotations
    are strings: ``from __future__ import annotations``)."""
    returns = inspect.signature(member).return_annotation
    return isinstance(returns, str) and "None" in [part.strip() for part in returns.split("|")]


def signatures(interfaces: Any) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for protocol in (interfaces.Agent, interfaces.Client):
        for _name, member in inspect.getmembers(protocol):
            route = getattr(member, "__route__", None)
            if route is None:
                continue
            parameters = list(inspect.signature(member).parameters.values())[1:]  # after self
            found[f"{route.method} {route.kind}"] = {
                "parameters": [
                    [p.name, p.default is inspect.Parameter.empty, p.kind is inspect.Parameter.KEYWORD_ONLY]
                    for p in parameters
                    if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
                ],
                "may_return_none": route.kind == "request" and may_return_none(member),
            }
    return dict(sorted(found.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    data = {version: signatures(interfaces) for version, interfaces in VERSIONS.items()}
    lines = ["{"]
    for v, (version, table) in enumerate(data.items()):
        lines.append(f"  {json.dumps(version)}: {{")
        for m, (key, parameters) in enumerate(table.items()):
            comma = "," if m + 1 < len(table) else ""
            lines.append(f"    {json.dumps(key)}: {json.dumps(parameters)}{comma}")
        lines.append("  }" + ("," if v + 1 < len(data) else ""))
    args.out.write_text("\n".join(lines + ["}"]) + "\n")
    print(f"{sum(map(len, data.values()))} signatures -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
