#!/usr/bin/env python3
"""Generate TypeScript declarations for the ACP protocol types from the JSON Schema.

    python3 tools/codegen/gen_ts.py           # (re)write node/src/generated/
    python3 tools/codegen/gen_ts.py --check   # exit 1 if a checked-in file is out of date

Inputs: schema/v1/schema.json (``node/src/generated/``) and schema/v1/schema.unstable.json
(``node/src/generated/unstable/``), and the same two of the version 2 draft
(``node/src/generated/v2/``, ``v2/unstable/``; what v2 has exactly as v1 is imported from
v1's module), loaded into the language-neutral IR of ``acp_schema``;
this module only decides how each IR node looks in TypeScript (the method table:
``gen_ts_methods``).  ``schema.ts`` is a types-only module that passes ``tsc --strict``.

Mapping (property names are the wire names):

* Struct -> ``export interface`` (optional properties with ``?``, nullable ``| null``); a
  struct with a union part -> ``export type Foo = { ...own properties } & FooUnion``.  An
  unstable module's struct that the stable module has too extends it (``extends
  Omit<stable.Foo, "changed">``), restating only the properties it adds or changes.
* TaggedUnion -> discriminated union ``(Payload & { type: "tag" }) | ...``; a default
  variant is ``(Payload & { type?: undefined })``.  Catch-all variants (any other tag value)
  are not typed, only mentioned in the docs, so narrowing on the tag keeps working.
* StringEnum / IntEnum -> literal unions (open: ``| (string & {})`` / ``| (number & {})``).
* UntaggedUnion -> ``A | B``; Newtype / Alias -> ``export type SessionId = string``.
* Methods -> ``AgentMethods`` / ``ClientMethods`` / ``ProtocolMethods`` /
  ``ProxyMethods`` interfaces mapping each wire name to ``{ params: P; result: R }``
  (``result: void`` for notifications), and ``CurrentProtocolVersion``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from pathlib import Path
from typing import Optional

sys.dont_write_bytecode = True  # no __pycache__ next to the sources
sys.path.insert(0, str(Path(__file__).resolve().parent))

import acp_schema as ir  # noqa: E402
import gen_ts_envelopes  # noqa: E402
import gen_ts_guards  # noqa: E402
import gen_ts_methods  # noqa: E402
from gen_python import ROOT, write_or_check  # noqa: E402
from text import jsdoc  # noqa: E402

GENERATOR = "tools/codegen/gen_ts.py"

# (schema, the stable schema it extends or None, output directory, its path up to
# node/src), relative to ROOT.
# (schema, the stable schema whose methods it extends or None, the schema it shares types
# with (one directory up) or None, output directory, its way up to node/src).
TARGETS = [
    ("schema/v1/schema.json", None, None, "node/src/generated", ".."),
    ("schema/v1/schema.unstable.json", "schema/v1/schema.json", "schema/v1/schema.json", "node/src/generated/unstable", "../.."),
    ("schema/v2/schema.json", None, "schema/v1/schema.json", "node/src/generated/v2", "../.."),
    ("schema/v2/schema.unstable.json", "schema/v2/schema.json", "schema/v2/schema.json", "node/src/generated/v2/unstable",
     "../../.."),
]

# acp-engine's root (node/src/index.ts) keeps the 1.x SDK's class API, whose root had the
# unstable methods and types: its classes are the unstable module's, and it exports the
# unstable module's types the stable module lacks (`additions.ts`; a name both have keeps
# its stable shape, as in 2.x). So the stable module has no class API of its own.
ROOT_STABLE, ROOT_UNSTABLE = "node/src/generated", "node/src/generated/unstable"

# What an unstable module calls the stable module it layers its types on.
STABLE = "stable"
RESERVED = {STABLE, "AgentMethods", "ClientMethods", "ProtocolMethods", "ProxyMethods", "CurrentProtocolVersion"}
PRIMS = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean"}
JSON_OBJECT = "{ [key: string]: unknown }"


def prop_name(wire: str) -> str:
    return wire if re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]*", wire) else json.dumps(wire)


def join_docs(*parts: str) -> str:
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


EXPORTED = re.compile(r"export (?:type|interface) (\w+)")


class TsEmitter:
    def __init__(self, schema: ir.Schema, schema_rel: str, stable: Optional["TsEmitter"] = None):
        self.s = schema
        self.schema_rel = schema_rel
        self.out: list[str] = []
        # The exported names each definition brought (its type and helper types).
        self.names_of: dict[str, set[str]] = {}
        # The stable module's, for definitions this schema has as they are: imported from it.
        self.stable = stable
        self.shared = ir.same_as_stable(schema, stable.s, self.versioned_unions(stable)) if stable else set()
        self.imported: set[str] = set()
        self.layered = False  # whether a type extends the stable module's own
        clash = RESERVED & set(schema.definitions)
        if clash:
            raise ir.SchemaError(f"definition names {sorted(clash)} clash with names the module uses")

    def versioned_unions(self, stable: "TsEmitter") -> frozenset[str]:
        """Across versions, the unions with a catch-all variant: v2 brands it and v1 does
        not (`other_member`), so v2 writes them, and what holds them, itself."""
        if schema_version(self.s) == schema_version(stable.s):
            return frozenset()
        return frozenset(d.name for d in self.s.definitions.values() if isinstance(d, ir.TaggedUnion) and d.other)

    def ts(self, t: ir.TypeExpr) -> str:
        if isinstance(t, ir.Prim):
            return PRIMS[t.kind]
        if isinstance(t, ir.Ref):
            return t.name
        if isinstance(t, ir.Array):
            item = self.ts(t.item)
            return f"{item}[]" if re.fullmatch(r"\w+", item) else f"Array<{item}>"
        if isinstance(t, ir.MapOf):
            return f"{{ [key: string]: {self.ts(t.value)} }}"
        if isinstance(t, ir.JsonObject):
            return JSON_OBJECT
        if isinstance(t, ir.AnyValue):
            return "unknown"
        if isinstance(t, ir.Null):
            return "null"
        if isinstance(t, ir.Nullable):
            return f"{self.ts(t.inner)} | null"
        raise ir.SchemaError(f"no TypeScript type for {t}")

    def emit(self, *lines: str) -> None:
        self.out.extend(lines)

    def union(self, name: str, members: list[tuple[str, str]], doc: str) -> None:
        """``export type name = | a | b`` with a short doc comment per member."""
        self.emit("", *jsdoc(doc), f"export type {name} =")
        for i, (member, mdoc) in enumerate(members):
            end = ";" if i == len(members) - 1 else ""
            self.emit(*jsdoc(ir_first_paragraph(mdoc), "  "), f"  | {member}{end}")

    # -- definitions --------------------------------------------------------------------

    def generate(self) -> str:
        for d in self.s.definitions.values():
            start = len(self.out)
            if self.stable and d.name in self.shared:
                # Imported and exported again: a module sharing this one's types finds them here.
                self.names_of[d.name] = self.stable.names_of[d.name]
                self.imported |= self.names_of[d.name]
                continue
            if isinstance(d, ir.Struct):
                self.gen_struct(d)
            elif isinstance(d, (ir.StringEnum, ir.IntEnum)):
                values = [json.dumps(v.value, ensure_ascii=False) for v in d.values]
                if d.open:
                    values.append("(string & {})" if isinstance(d, ir.StringEnum) else "(number & {})")
                doc = join_docs(d.doc, d.open_doc and f"Other values: {d.open_doc}")
                self.emit("", *jsdoc(doc), f"export type {d.name} = {' | '.join(values)};")
            elif isinstance(d, ir.TaggedUnion):
                self.gen_tagged_union(d)
            elif isinstance(d, ir.UntaggedUnion):
                doc = d.doc or (f"The part of `{d.embedded_in}` that is one of several shapes." if d.embedded_in else "")
                self.union(d.name, [(self.ts(v.type), v.doc) for v in d.variants], doc)
            elif isinstance(d, ir.Newtype):
                self.emit("", *jsdoc(d.doc), f"export type {d.name} = {PRIMS[d.inner.kind]};")
            elif isinstance(d, ir.Alias):
                self.emit("", *jsdoc(d.doc), f"export type {d.name} = {self.ts(d.target)};")
            else:
                raise ir.SchemaError(f"unknown definition kind {d}")
            self.names_of[d.name] = {
                match.group(1) for line in self.out[start:] if (match := EXPORTED.match(line))
            }
        self.out[:0] = self.unknown_variant()
        self.gen_methods()
        raw = json.loads((ROOT / self.schema_rel).read_text())["$defs"]
        self.out += gen_ts_envelopes.generate(self.s.skipped, raw, self.exported())
        return "\n".join(self.header() + self.stable_import() + self.out) + "\n"

    def exported(self) -> set[str]:
        """Every type name the module exports, its own and those it imports and exports again."""
        return set().union(*self.names_of.values())

    def stable_import(self) -> list[str]:
        """The stable module's types this one has as they are (down to every type they hold),
        and the module itself for the types layered on its own."""
        lines = []
        if self.layered:
            lines += ["", "// The stable types this module's unstable ones extend, adding to them.",
                      f'import type * as {STABLE} from "../schema.js";']
        if not self.imported:
            return lines
        names = sorted(self.imported)
        return lines + ["", "// The types of the schema one directory up, where this one has them as they are.",
                        "import type {", *[f"  {name}," for name in names], '} from "../schema.js";',
                        "export type {", *[f"  {name}," for name in names], "};"]

    def method_doc(self, d: ir.Struct) -> str:
        if not d.method:
            return ""
        handler = {"agent": "the agent", "client": "the client"}.get(d.side or "", "either side")
        what = {"request": "Params of", "response": "Result of"}.get(d.method_kind or "", "Params of")
        kind = "notification" if d.method_kind == "notification" else "request"
        return f"{what} the `{d.method}` {kind} (handled by {handler})."

    def properties(self, d: ir.Struct) -> list[str]:
        lines = []
        for f in d.fields:
            opt = "" if f.required else "?"
            fdoc = f.doc
            if f.has_default:
                fdoc = join_docs(fdoc, f"Default: `{json.dumps(f.default, separators=(',', ':'))}`.")
            lines += jsdoc(fdoc, "  ") + [f"  {prop_name(f.wire_name)}{opt}: {self.ts(f.type)};"]
        return lines

    def stable_parent(self, d: ir.Struct) -> Optional[tuple[str, list[str]]]:
        """For an unstable module's struct the stable one has too: what it extends (the
        stable interface, less the properties it restates) and the properties it restates
        or adds; None when it inherits nothing."""
        layering = ir.layered_on(d, self.s, self.stable.s if self.stable else None, self.shared)
        if layering is None:
            return None
        base, inherited = layering
        self.layered = True
        restated = [f.wire_name for f in base.fields if f.wire_name not in inherited]
        own = dataclasses.replace(d, fields=[f for f in d.fields if f.wire_name not in inherited])
        parent = f"{STABLE}.{d.name}"
        if restated:
            parent = f"Omit<{parent}, {' | '.join(json.dumps(name) for name in restated)}>"
        return parent, self.properties(own)

    def gen_struct(self, d: ir.Struct) -> None:
        doc = join_docs(d.doc, self.method_doc(d))
        if d.inline_of and not d.doc:
            doc = f"A variant's own properties in `{d.inline_of}`."
        layered = self.stable_parent(d)
        if layered:
            parent, body = layered
            self.emit("", *jsdoc(doc), f"export interface {d.name} extends {parent} {{", *body, "}")
        elif not d.union:
            body = self.properties(d)
            self.emit("", *jsdoc(doc), f"export interface {d.name} {{", *body, "}")
        elif d.fields:
            self.emit("", *jsdoc(doc), f"export type {d.name} = {{", *self.properties(d), f"}} & {d.union.union};")
        else:
            self.emit("", *jsdoc(doc), f"export type {d.name} = {d.union.union};")

    def gen_tagged_union(self, u: ir.TaggedUnion) -> None:
        tag = prop_name(u.tag)
        members = []
        for v in u.variants:
            lit = f"{{ {tag}: {json.dumps(v.tag)} }}"
            members.append((f"({v.payload} & {lit})" if v.payload else lit, v.doc))
        notes = []
        if u.default:
            members.append((f"({u.default.payload} & {{ {tag}?: undefined }})", u.default.doc))
            notes.append(f"A value without `{u.tag}` is a `{u.default.payload}`.")
        if u.absent:
            members.append((f"{{ {tag}?: null }}", u.absent.doc))
        if u.other:
            members.append((self.other_member(u), u.other.doc))
        doc = u.doc or (f"The `{u.tag}`-selected part of `{u.embedded_in}`." if u.embedded_in else "")
        self.union(u.name, members, join_docs(doc, *notes))

    def other_member(self, u: ir.TaggedUnion) -> str:
        """A union's catch-all variant, as the official SDK types it: any other tag, with the
        properties it requires and any others. v1: `{ type: string; ... }`. v2 tells a custom
        variant (`_`-prefixed tag, one a program may build) from one a peer sent that this
        version does not know (`UnknownVariant`, a brand only received values carry)."""
        tag = prop_name(u.tag)
        required = "".join(f" {prop_name(wire)}: {'string' if kind == 'string' else 'unknown'};"
                           for wire, kind in u.other.required)

        def shape(tag_type: str) -> str:
            return f"{{ {tag}: {tag_type};{required} [key: string]: unknown }}"

        if schema_version(self.s) < 2:
            member = shape("string")
        else:
            member = f"({shape('`_${string}`')} | UnknownVariant<{shape('string')}>)"
        if u.other.one_of_refs:
            member = f"({' | '.join(u.other.one_of_refs)}) & {member}"
        return member

    def unknown_variant(self) -> list[str]:
        """v2's brand for a catch-all variant a peer sent (`other_member`): declared in the
        stable module, imported by the unstable one."""
        if schema_version(self.s) < 2:
            return []
        if self.stable and schema_version(self.stable.s) == schema_version(self.s):
            self.imported.add("UnknownVariant")
            return []
        return ["", "declare const unknownVariant: unique symbol;", *jsdoc(UNKNOWN_VARIANT_DOC),
                "export type UnknownVariant<T> = T & { readonly [unknownVariant]: true };"]

    # -- methods ------------------------------------------------------------------------

    def gen_methods(self) -> None:
        tables = [
            ("AgentMethods", "agent", "Methods the agent handles (the client sends them)"),
            ("ClientMethods", "client", "Methods the client handles (the agent sends them)"),
            ("ProtocolMethods", "protocol", "Protocol-level methods either side may send"),
            ("ProxyMethods", "proxy", "Methods of a proxy chain's conductor and proxies (requests)"),
        ]
        for name, side, doc in tables:
            self.emit(
                "",
                *jsdoc(f"{doc}: wire method name -> params and result types (`void` for notifications)."),
                f"export interface {name} {{",
            )
            seen = set()
            for m in self.s.methods:
                # Keyed by wire name: a method that is both (proxy/successor) is listed as
                # its request.
                if m.side != side or m.name in seen:
                    continue
                seen.add(m.name)
                kind = "notification" if m.notification else "request"
                self.emit(
                    f"  /** A {kind}; key `{m.key}`. */",
                    f"  {prop_name(m.name)}: {{ params: {m.params}; result: {m.result or 'void'} }};",
                )
            self.emit("}")
        self.emit(
            "",
            "/** The protocol version these types describe (a `ProtocolVersion`). */",
            f"export type CurrentProtocolVersion = {self.s.protocol_version};",
        )

    def header(self) -> list[str]:
        return [
            f"// ACP protocol types (schema v{self.s.protocol_version}): wire names, types only.",
            f"// @generated by {GENERATOR} from {self.schema_rel}.",
            "// Do not edit by hand: change the schema or the generator, then run `make codegen`.",
        ]


UNKNOWN_VARIANT_DOC = (
    "A variant of an extensible union that these types do not know, as received from a peer "
    "(one a newer ACP version added, say). Only received values have this type: a value a "
    "program builds is a known variant, checked property by property, or a custom one whose "
    "tag starts with `_`. The brand exists only in the types."
)


def schema_version(schema: ir.Schema) -> int:
    return int(schema.protocol_version)


def ir_first_paragraph(text: str) -> str:
    return (text or "").strip().split("\n\n")[0].strip()


# ---------------------------------------------------------------------------------------


def load(schema_rel: str, stable_rel: Optional[str]) -> ir.Schema:
    return ir.load(ROOT / schema_rel, ROOT / stable_rel if stable_rel else None)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the checked-in output is out of date")
    args = parser.parse_args(argv)
    outputs = []
    emitted: dict[str, TsEmitter] = {}
    for schema_rel, stable_rel, shares_rel, out_dir, up in TARGETS:
        schema = load(schema_rel, stable_rel)
        emitter = TsEmitter(schema, schema_rel, emitted.get(shares_rel or ""))
        emitted[schema_rel] = emitter
        outputs.append((f"{out_dir}/schema.ts", emitter.generate()))
        methods = gen_ts_methods.generate(schema, schema_rel, GENERATOR, up, class_api=out_dir != ROOT_STABLE)
        outputs.append((f"{out_dir}/methods.ts", methods))
        unstable = stable_rel is not None
        guards = gen_ts_guards.generate(schema, schema_rel, GENERATOR, up, unstable, frozenset(emitter.shared))
        outputs.append((f"{out_dir}/guards.ts", guards))
        if out_dir == ROOT_UNSTABLE:
            outputs.append((f"{out_dir}/additions.ts", additions(emitter, schema_rel)))
    return write_or_check(outputs, args.check, GENERATOR)


def additions(unstable: TsEmitter, schema_rel: str) -> str:
    """The unstable module's types the stable module lacks, for the root to export too."""
    assert unstable.stable is not None
    names = sorted(unstable.exported() - unstable.stable.exported())
    return "\n".join([
        "// The unstable schema's types that the stable one lacks, which the root exports",
        "// too (as the 1.x SDK's root did); a name both have keeps its stable shape there.",
        f"// @generated by {GENERATOR} from {schema_rel}.",
        "// Do not edit by hand: change the schema or the generator, then run `make codegen`.",
        "",
        "export type {", *[f"  {name}," for name in names], '} from "./schema.js";',
    ]) + "\n"


if __name__ == "__main__":
    sys.exit(main())
