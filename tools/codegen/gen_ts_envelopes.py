"""The JSON-RPC envelopes (``AgentRequest``, ``ClientResponse``, ``ProxyNotification``, ...) as
TypeScript types, with the official SDK's shapes: the messages each side sends, an object type
(a response: the union of its result and its error object).

They are not definitions of the IR (``Schema.skipped`` names them): read from the schema's JSON.
A property's type is the union of what its schema allows, each named definition by its name
(every one is in the module's scope: defined there or imported), anything unnamed ``unknown``.
Used by gen_ts.py for every schema module.
"""

from __future__ import annotations

from text import jsdoc

PRIMITIVES = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean", "null": "null"}


def members(schema: dict, in_scope: set[str]) -> list[str]:
    """The TypeScript types `schema` allows, unions flattened, without repeats."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return [name if name in in_scope else "unknown"]
    if len(schema.get("allOf", [])) == 1:
        return members(schema["allOf"][0], in_scope)
    parts = schema.get("anyOf") or schema.get("oneOf")
    if parts:
        found: list[str] = []
        for part in parts:
            found += [member for member in members(part, in_scope) if member not in found]
        return found
    kind = schema.get("type")
    return [PRIMITIVES.get(kind, "unknown") if isinstance(kind, str) else "unknown"]


def type_of(schema: dict, in_scope: set[str]) -> str:
    found = members(schema, in_scope)
    return "unknown" if "unknown" in found else " | ".join(found)


def properties(schema: dict, in_scope: set[str], indent: str) -> list[str]:
    required = set(schema.get("required", []))
    lines: list[str] = []
    for wire, prop in schema["properties"].items():
        optional = "" if wire in required else "?"
        lines += [*jsdoc(prop.get("description", "").strip(), indent), f"{indent}{wire}{optional}: {type_of(prop, in_scope)};"]
    return lines


def generate(names: list[str], raw: dict, in_scope: set[str]) -> list[str]:
    """The envelopes `names` of the schema whose ``$defs`` are `raw`."""
    out: list[str] = []
    for name in names:
        schema = raw[name]
        out += ["", *jsdoc(schema.get("description", "").strip())]
        if "properties" in schema:
            out += [f"export type {name} = {{", *properties(schema, in_scope, "  "), "};"]
            continue
        out.append(f"export type {name} =")
        for part in schema["anyOf"]:
            out += ["  | {", *properties(part, in_scope, "      "), "    }"]
        out[-1] += ";"
    return out
