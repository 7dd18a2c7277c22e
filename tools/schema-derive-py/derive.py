#!/usr/bin/env python3
"""Derive the ACP v1 definitions that only the official Python SDK has, as JSON Schema.

The official Python SDK (PyPI ``agent-client-protocol``) is generated from a newer
schema release than the TypeScript SDK's bundle and the Rust schema crate reachable
here: it has methods they lack (next edit suggestions ``nes/*``, ``document/*``,
``mcp/connect`` / ``mcp/disconnect``). Its pydantic models are the only source of
those definitions on any registry, so this script, run in a Python that has the
package installed, writes them as JSON Schema in the shape the official generator
(schemars) gives the others, for ``merge_schema.py --extra``:

* every method of the package's ``Agent`` / ``Client`` protocols whose wire name is
  in no ``--have`` (the other sources' schemas), its params and result models and
  every model they refer to that no ``--have`` has;
* the models of the capability fields (``AgentCapabilities.nes``,
  ``ClientCapabilities.nes``) that no ``--have`` has, with what they refer to: the
  capabilities those methods come with (the fields themselves stay the others');
* ``x-method`` / ``x-side`` on params and results, as the crate annotates them, and a
  top-level ``x-methods`` list (wire name, side, kind, params, result) saying where each
  goes in the JSON-RPC envelopes;
* schemars' shapes: nullable primitives as ``type: [T, "null"]``, references with
  siblings through ``allOf``, no titles, ``x-deserialize-default-on-error`` where the
  model's field falls back to its default on a bad value; a discriminated union the
  model inlines becomes a named definition (``NesSuggestion``) whose variants carry the
  tag next to ``allOf`` of a payload definition (``NesEditSuggestion``), and an inline
  string enum a named definition of string constants (``{Model}{Field}``).

    python derive.py --have schema/upstream/npm/v1/schema.unstable.json \
        --have schema/upstream/crate/v1/schema.unstable.json --out schema/upstream/pypi/v1

Standard library and the installed ``acp`` / ``pydantic`` only. Deterministic.
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
from pathlib import Path
from typing import Any, Optional

import acp
import acp.interfaces
import acp.schema
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

REF = "#/$defs/"
PROTOCOLS = {"Agent": "agent", "Client": "client"}


def camel(word: str) -> str:
    return word[:1].upper() + word[1:]


def snake_to_camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(camel(w) for w in rest)


def missing_methods(have_methods: set[str]) -> list[dict[str, Any]]:
    """The protocols' methods (wire name, side, kind, params, result) that ``--have`` lacks."""
    found = []
    for protocol_name, side in PROTOCOLS.items():
        protocol = getattr(acp.interfaces, protocol_name)
        for _attr, member in inspect.getmembers(protocol):
            route = getattr(member, "__route__", None)
            if route is None or route.method in have_methods:
                continue
            params = route.request_type.__name__
            result = None
            if route.kind == "request":
                annotation = inspect.signature(member).return_annotation
                result = str(annotation).split(" | ")[0].strip()
            found.append({"method": route.method, "side": side, "kind": route.kind, "params": params,
                          "result": result})
    return sorted(found, key=lambda m: (m["method"], m["kind"]))


def missing_capabilities(have: dict[str, Any]) -> list[str]:
    """The models of ``AgentCapabilities`` / ``ClientCapabilities`` fields that ``--have`` lacks."""
    found = set()
    for owner in (acp.schema.AgentCapabilities, acp.schema.ClientCapabilities):
        for field in owner.model_fields.values():
            for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", str(field.annotation)):
                model = getattr(acp.schema, name, None)
                if isinstance(model, type) and issubclass(model, BaseModel) and name not in have:
                    found.add(name)
    return sorted(found)


def lenient_fields(model: type[BaseModel]) -> set[str]:
    """Fields (by alias) the model replaces by their default when the value does not parse."""
    fields: set[str] = set()
    for decorator in model.__pydantic_decorators__.field_validators.values():
        if decorator.info.mode == "wrap" and "default_on_error" in decorator.cls_var_name:
            for name in decorator.info.fields:
                info = model.model_fields.get(name)
                if info is not None:
                    fields.add(info.alias or name)
    return fields


class Converter:
    """pydantic's JSON Schema -> schemars' shape, lifting inline unions and enums."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self.raw = defs
        self.out: dict[str, Any] = {}
        self.renamed: dict[str, str] = {}  # a variant model -> its payload definition

    def node(self, node: Any, owner: str, field: Optional[str]) -> Any:
        if isinstance(node, list):
            return [self.node(item, owner, field) for item in node]
        if not isinstance(node, dict):
            return node
        if "discriminator" in node and "oneOf" in node:
            return {"$ref": REF + self.lift_union(node)}
        if "enum" in node and node.get("type") == "string" and field is not None:
            name = owner + camel(snake_to_camel(field))
            self.out[name] = {
                "description": f"The values of `{owner}.{field}`.",
                "oneOf": [{"description": f"`{value}`.", "type": "string", "const": value} for value in node["enum"]],
            }
            return {"$ref": REF + name}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("title",) or (key == "default" and value is None):
                continue
            if key == "properties":
                out[key] = {name: self.property(prop, owner, name) for name, prop in value.items()}
            elif key == "$ref":
                out[key] = REF + self.renamed.get(value[len(REF):], value[len(REF):])
            else:
                out[key] = self.node(value, owner, field)
        if "anyOf" in out and len(out["anyOf"]) == 2 and {"type": "null"} in out["anyOf"]:
            inner = next(branch for branch in out["anyOf"] if branch != {"type": "null"})
            if "$ref" not in inner and isinstance(inner.get("type"), str):
                rest = {k: v for k, v in out.items() if k != "anyOf"}
                return {**rest, **inner, "type": [inner["type"], "null"]}
        return out

    def property(self, prop: dict[str, Any], owner: str, name: str) -> dict[str, Any]:
        converted = self.node(prop, owner, name)
        # The source has no text for some: every generated field is documented.
        converted.setdefault("description", f"`{name}` (undocumented in the source).")
        if "$ref" in converted and len(converted) > 1:
            ref = converted.pop("$ref")
            converted = {**converted, "allOf": [{"$ref": ref}]}
        return converted

    def lift_union(self, node: dict[str, Any]) -> str:
        """A discriminated union of variant models -> ``{Union}`` with payload definitions."""
        tag = node["discriminator"]["propertyName"]
        variants = []
        union_names = set()
        for value, ref in sorted(node["discriminator"]["mapping"].items(), key=lambda item: item[1]):
            variant = ref[len(REF):]
            payload = variant.removesuffix("Variant")
            union_names.add(payload.replace(camel(value), "", 1))
            self.renamed[variant] = payload
            raw = json.loads(json.dumps(self.raw[variant]))
            raw["properties"].pop(tag, None)
            raw["required"] = [r for r in raw.get("required", []) if r != tag]
            self.define(payload, raw)
            variants.append({"description": f"The `{value}` variant.", "type": "object",
                             "properties": {tag: {"type": "string", "const": value}},
                             "required": [tag], "allOf": [{"$ref": REF + payload}]})
        (name,) = union_names
        order = [ref[len(REF):].removesuffix("Variant") for ref in (b["$ref"] for b in node["oneOf"])]
        variants.sort(key=lambda v: order.index(v["allOf"][0]["$ref"][len(REF):]))
        self.out[name] = {"description": f"One of the variants told apart by `{tag}`.", "oneOf": variants,
                          "discriminator": {"propertyName": tag}}
        return name

    def define(self, name: str, raw: dict[str, Any]) -> None:
        converted = self.node(raw, name, None)
        converted = {"description": raw.get("description") or f"`{name}` (undocumented in the source).", **converted}
        model = getattr(acp.schema, name, None)
        if isinstance(model, type) and issubclass(model, BaseModel):
            for prop in lenient_fields(model):
                if prop in converted.get("properties", {}):
                    converted["properties"][prop]["x-deserialize-default-on-error"] = True
        self.out[name] = converted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--have", type=Path, action="append", required=True,
                        help="a schema of the other sources (repeat: npm's, the crate's)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    have = {name: d for path in args.have for name, d in json.loads(path.read_text())["$defs"].items()}
    have_methods = {d["x-method"] for d in have.values() if "x-method" in d}
    methods = missing_methods(have_methods)
    models = sorted({m["params"] for m in methods} | {m["result"] for m in methods if m["result"]}
                    | set(missing_capabilities(have)))
    _, top = models_json_schema([(getattr(acp.schema, n), "validation") for n in models], by_alias=True,
                                ref_template=REF + "{model}")
    raw = top["$defs"]
    converter = Converter(raw)
    for name in sorted(raw):
        if name in have or name.endswith("Variant"):
            continue
        converter.define(name, raw[name])
    for m in methods:
        for role in ("params", "result"):
            if m[role]:
                if converter.out[m[role]]["description"].endswith("(undocumented in the source)."):
                    what = "Parameters of" if role == "params" else "The result of"
                    converter.out[m[role]]["description"] = f"{what} the `{m['method']}` {m['kind']}."
                converter.out[m[role]]["x-side"] = m["side"]
                converter.out[m[role]]["x-method"] = m["method"]
    # What the definitions refer to must exist here or in --have.
    text = json.dumps(converter.out)
    dangling = sorted({r for r in re.findall(r'"#/\$defs/([A-Za-z0-9_]+)"', text)} - converter.out.keys() - have.keys())
    if dangling:
        raise SystemExit(f"derived definitions refer to unknown ones: {dangling}")
    source = {"package": "agent-client-protocol", "version": acp.__dict__.get("__version__") or _version()}
    schema = {"x-source": source, "x-methods": methods, "$defs": dict(sorted(converter.out.items()))}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "schema.unstable.json").write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n")
    print(f"{len(converter.out)} definitions, {len(methods)} methods -> {args.out / 'schema.unstable.json'}")
    return 0


def _version() -> str:
    from importlib.metadata import version

    return version("agent-client-protocol")


if __name__ == "__main__":
    raise SystemExit(main())
