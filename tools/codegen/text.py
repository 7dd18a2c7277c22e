"""Text helpers every emitter shares: doc comments in each language's form, and the
phrases the method-table emitters put in them."""

from __future__ import annotations

from typing import Callable

import acp_schema as ir

# The method tables every language has, by x-side: (name, side, what they hold).
METHOD_TABLES = [
    ("AGENT_METHODS", "agent", "Methods the agent handles (the client sends them)"),
    ("CLIENT_METHODS", "client", "Methods the client handles (the agent sends them)"),
    ("PROTOCOL_METHODS", "protocol", "Protocol-level methods either side may send"),
    ("PROXY_METHODS", "proxy", "Methods a conductor exchanges with the proxies of a proxy chain (not routed by `Agent` or `Client`)"),
]


def docstring(text: str, indent: str) -> list[str]:
    """A Python docstring (none for empty text)."""
    text = (text or "").strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if not text:
        return []
    if text.endswith('"'):
        text += " "
    lines = text.split("\n")
    if len(lines) == 1:
        return [f'{indent}"""{text}"""']
    return [f'{indent}"""{lines[0]}'] + [(indent + ln).rstrip() for ln in lines[1:]] + [f'{indent}"""']


def jsdoc(text: str, indent: str = "") -> list[str]:
    """A JSDoc comment (none for empty text)."""
    text = (text or "").strip().replace("*/", "*\\/")
    if not text:
        return []
    lines = text.split("\n")
    if len(lines) == 1:
        return [f"{indent}/** {text} */"]
    return [f"{indent}/**"] + [f"{indent} * {ln}".rstrip() for ln in lines] + [f"{indent} */"]


def baseline_list(methods: list[ir.Method], name: Callable[[ir.Method], str]) -> str:
    """The baseline methods of a side as prose, requests first: "`a`, `b` and `c`"."""
    names = [f"`{name(m)}`" for m in sorted(methods, key=lambda m: m.notification) if m.baseline]
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)
