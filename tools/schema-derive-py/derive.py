#!/usr/bin/env python3
"""Derive the ACP definitions that only the official Python SDK has, as JSON Schema.

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
  ``ClientCapabilities.nes``) that the ``--have`` capability objects lack, with what they
  refer to: the capabilities those methods come with (the fields themselves stay the
  others');
* ``x-method`` / ``x-side`` on params and results, as the crate annotates them, and a
  top-level ``x-methods`` list (wire name, side, kind, params, result) saying where each
  goes in the JSON-RPC envelopes;
* schemars' shapes: nullable primitives as ``type: [T, "null"]``, references with
  siblings through ``allOf``, no titles, ``x-deserialize-default-on-error`` where the
  model's field falls back to its default on a bad value; a discriminated union the
  model inlines becomes a named definition (``NesSuggestion``) whose variants carry the
  tag next to ``allOf`` of a payload definition (``NesEditSuggestion``), and an inline
  string enum a named definition of string constants (``{Model}{Field}``).

With ``--version v2`` it reads the package's ACP v2 draft (``acp.experimental.v2``) and
writes the npm v2 draft's shapes: an open union (``anyOf`` of ``{X}Variant`` models and an
``Other{Union}`` catch-all) becomes the tagged variants and one titled ``other`` whose tag
is any other value; an open string enum (``Literal[...] | str``) the constants and one
``other`` string.

    python derive.py --have schema/upstream/npm/v1/schema.unstable.json \
        --have schema/upstream/crate/v1/schema.unstable.json --out schema/upstream/pypi/v1
    python derive.py --version v2 --have schema/upstream/npm/v2/schema.unstable.json \
        --out schema/upstream/pypi/v2

Standard library and the installed ``acp`` / ``pydantic`` only. Deterministic.
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any, Optional

import acp
import acp.experimental.v2.interfaces
import acp.experimental.v2.schema
import acp.interfaces
import acp.schema
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

REF = "#/$defs/"
PROTOCOLS = {"Agent": "agent", "Client": "client"}
# Where each protocol version's interfaces and models live in the official package.
VERSIONS = {
    "v1": (acp.interfaces, acp.schema),
    "v2": (acp.experimental.v2.interfaces, acp.experimental.v2.schema),
}


def camel(word: str) -> str:
    return word[:1].upper() + word[1:]


def snake_to_camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(camel(w) for w in rest)


def missing_methods(interfaces: ModuleType, have_methods: set[str]) -> list[dict[str, Any]]:
    """The protocols' methods (wire name, side, kind, params, result) that ``--have`` lacks."""
    found = []
    for protocol_name, side in PROTOCOLS.items():
        protocol = getattr(interfaces, protocol_name)
        for _attr, member in inspect.getmembers(protocol):
            route = getattr(member, "__route__", None)
            if route is None or route.method in have_methods:
                continue
            params = route.request_type.__name__
            result = None
            if route.kind == "request":
                annotation = inspect.signature(member).return_annotation
                result = str(annotation).split(" | ")[0].strip().removeprefix("schema.")
            found.append({"method": route.method, "side": side, "kind": route.kind, "params": params,
                          "result": result})
    return sorted(found, key=lambda m: (m["method"], m["kind"]))


def missing_capabilities(models_module: ModuleType, have: dict[str, Any]) -> list[str]:
    """The models of the ``AgentCapabilities`` / ``ClientCapabilities`` fields ``--have`` lacks."""
    found = set()
    for owner in (models_module.AgentCapabilities, models_module.ClientCapabilities):
        theirs = have.get(owner.__name__, {}).get("properties", {})
        for field_name, field in owner.model_fields.items():
            if (field.alias or field_name) in theirs:
                continue  # the field is theirs, with their type (under their name)
            for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", str(field.annotation)):
                model = getattr(models_module, name, None)
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

    def __init__(self, defs: dict[str, Any], models_module: ModuleType) -> None:
        self.raw = defs
        self.models_module = models_module
        self.out: dict[str, Any] = {}
        self.renamed: dict[str, str] = {}  # a variant model -> its payload definition
        self.inlined: set[str] = set()  # catch-all models written inside their open union

    def node(self, node: Any, owner: str, field: Optional[str]) -> Any:
        if isinstance(node, list):
            return [self.node(item, owner, field) for item in node]
        if not isinstance(node, dict):
            return node
        if "discriminator" in node and "oneOf" in node:
            return {"$ref": REF + self.lift_union(node)}
        tag = self.open_union_tag(node["anyOf"]) if "anyOf" in node else None
        if tag is not None:
            return {"$ref": REF + self.lift_open_union(node["anyOf"], tag)}
        if "enum" in node and node.get("type") == "string" and field is not None:
            return {"$ref": REF + self.lift_enum(owner, field, node["enum"], open_=False)}
        branches = [b for b in node.get("anyOf", []) if b != {"type": "null"}]
        if field is not None and self.is_open_string_enum(branches):
            ref = {"$ref": REF + self.lift_enum(owner, field, [b["const"] for b in branches if "const" in b], open_=True)}
            rest = {k: v for k, v in node.items() if k not in ("anyOf", "title") and not (k == "default" and v is None)}
            if len(branches) < len(node["anyOf"]):
                return {"anyOf": [ref, {"type": "null"}], **rest}
            return {**ref, **rest}
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
        mapping = {ref[len(REF):]: value for value, ref in node["discriminator"]["mapping"].items()}
        order = [branch["$ref"][len(REF):] for branch in node["oneOf"]]
        name, variants = self.lift_variants(tag, [(mapping[variant], variant) for variant in order])
        self.out[name] = {"description": f"One of the variants told apart by `{tag}`.", "oneOf": variants,
                          "discriminator": {"propertyName": tag}}
        return name

    def lift_enum(self, owner: str, field: str, values: list[str], open_: bool) -> str:
        """An inline string enum -> a named definition ``{Model}{Field}`` of its constants
        (``oneOf``); an open one (v2) also takes any other string (``anyOf`` with ``other``)."""
        name = owner + camel(snake_to_camel(field))
        constants = [{"description": f"`{value}`.", "type": "string", "const": value} for value in values]
        if open_:
            self.out[name] = {"description": f"The values of `{owner}.{field}`, or any other string.",
                              "anyOf": constants + [{"title": "other", "description": "Any other value.", "type": "string"}]}
        else:
            self.out[name] = {"description": f"The values of `{owner}.{field}`.", "oneOf": constants}
        return name

    @staticmethod
    def is_open_string_enum(branches: list[Any]) -> bool:
        """String constants and one plain string (v2's open enums: ``Literal[...] | str``)."""
        plain = [b for b in branches if b == {"type": "string"}]
        constants = [b for b in branches if isinstance(b, dict) and b.get("type") == "string" and "const" in b]
        return len(plain) == 1 and len(constants) + 1 == len(branches) and bool(constants)

    def open_union_tag(self, branches: list[Any]) -> Optional[str]:
        """The tag of a v2 open union (``anyOf`` of ``{X}Variant`` models and one ``Other{Union}``
        catch-all that allows any other value), or None."""
        names = [b.get("$ref", "")[len(REF):] if isinstance(b, dict) and len(b) == 1 else "" for b in branches]
        others = [n for n in names if n.startswith("Other") and self.raw.get(n, {}).get("additionalProperties")]
        variants = [n for n in names if n.endswith("Variant")]
        if len(others) != 1 or len(variants) + 1 != len(names):
            return None
        (tag,) = {key for n in variants for key, prop in self.raw[n]["properties"].items() if "const" in prop}
        return tag

    def lift_open_union(self, branches: list[Any], tag: str) -> str:
        """A v2 open union -> ``{Union}`` in the npm v2 schema's shape: the tagged variants
        (payload definitions, as ``lift_union``), then the catch-all titled ``other``, its
        tag any value but theirs, its other fields the catch-all model's."""
        names = [branch["$ref"][len(REF):] for branch in branches]
        variants = [n for n in names if n.endswith("Variant")]
        (other,) = [n for n in names if n not in variants]
        values = [self.raw[n]["properties"][tag]["const"] for n in variants]
        name, lifted = self.lift_variants(tag, list(zip(values, variants)))
        if other != f"Other{name}":
            raise SystemExit(f"derive: the catch-all of {name} is {other}, not Other{name}")
        catch_all = self.node(self.raw[other], other, None)
        self.inlined.add(other)
        known = [{"type": "object", "properties": {tag: {"type": "string", "const": value}}, "required": [tag]}
                 for value in values]
        lifted.append({"title": "other", "description": catch_all["properties"][tag]["description"],
                       **{k: v for k, v in catch_all.items() if k != "description"}, "not": {"anyOf": known}})
        self.out[name] = {"description": f"One of the variants told apart by `{tag}`, or any other `{tag}`.",
                          "anyOf": lifted}
        return name

    def lift_variants(self, tag: str, variants: list[tuple[str, str]]) -> tuple[str, list[dict[str, Any]]]:
        """Each ``(tag value, variant model)``'s payload defined without the tag; the union's
        name (a payload's name without its tag value) and its tagged branches, in order."""
        branches = []
        union_names = set()
        for value, variant in variants:
            payload = variant.removesuffix("Variant")
            union_names.add(payload.replace(camel(value), "", 1))
            self.renamed[variant] = payload
            raw = json.loads(json.dumps(self.raw[variant]))
            raw["properties"].pop(tag, None)
            raw["required"] = [r for r in raw.get("required", []) if r != tag]
            self.define(payload, raw)
            branches.append({"description": f"The `{value}` variant.", "type": "object",
                             "properties": {tag: {"type": "string", "const": value}},
                             "required": [tag], "allOf": [{"$ref": REF + payload}]})
        (name,) = union_names
        return name, branches

    def define(self, name: str, raw: dict[str, Any]) -> None:
        converted = self.node(raw, name, None)
        converted = {"description": raw.get("description") or f"`{name}` (undocumented in the source).", **converted}
        model = getattr(self.models_module, name, None)
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
    parser.add_argument("--version", choices=sorted(VERSIONS), default="v1",
                        help="the protocol version whose models to read (v2: acp.experimental.v2)")
    args = parser.parse_args()
    interfaces, models_module = VERSIONS[args.version]
    have = {name: d for path in args.have for name, d in json.loads(path.read_text())["$defs"].items()}
    have_methods = {d["x-method"] for d in have.values() if "x-method" in d}
    methods = missing_methods(interfaces, have_methods)
    models = sorted({m["params"] for m in methods} | {m["result"] for m in methods if m["result"]}
                    | set(missing_capabilities(models_module, have)))
    _, top = models_json_schema([(getattr(models_module, n), "validation") for n in models], by_alias=True,
                                ref_template=REF + "{model}")
    raw = top["$defs"]
    converter = Converter(raw, models_module)
    for name in sorted(raw):
        if name in have or name.endswith("Variant"):
            continue
        converter.define(name, raw[name])
    for name in converter.inlined:
        converter.out.pop(name, None)
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
