#!/usr/bin/env python3
"""Generate the Rust ACP protocol types from the JSON Schema.

    python3 tools/codegen/gen_rust.py           # (re)write core/src/schema/v{1,2}{,_unstable}.rs, shared_*.rs
    python3 tools/codegen/gen_rust.py --check   # exit 1 if a checked-in file is out of date

Inputs: schema/v1/schema.json (stable) and schema/v1/schema.unstable.json (stable and
unstable; what the stable one lacks is marked unstable), and the same two of the version 2
draft (schema/v2/).  Each module after the first defines only what differs from the one it
builds on (v1_unstable and v2 on v1, v2_unstable on v2) and re-exports the rest.  What
differs only in the types it holds (v1_unstable's ``InitializeRequest`` holds its own
``ClientCapabilities``) is written once, in ``shared_<base>_<module>.rs``, which both
modules ``include!``.  The schema is loaded into the language-neutral IR of ``acp_schema``;
this module only decides how each IR node looks in Rust.  Output is piped through rustfmt
(with the workspace ``rustfmt.toml``) both when writing and when checking, so the check
compares exactly what is checked in.

Mapping (see core/src/schema/mod.rs for the user-facing summary):

* Struct -> ``pub struct`` with one field per property (``Option<T>`` unless required), a
  ``#[serde(flatten)] extra`` map for unknown properties, and ``new(required...)``.
  A struct with a union part gets a ``#[serde(flatten)]`` field holding that union and a
  hand-rolled ``Deserialize`` that lets the union take its properties first.
* StringEnum / IntEnum -> ``string_enum!`` / ``int_enum!`` (support.rs) with an
  ``Unknown(String)`` / ``Other(int)`` fallback.
* TaggedUnion -> enum with custom Serialize/Deserialize that dispatch on the tag.
* UntaggedUnion -> of objects: dispatch on which variant's required properties are
  present; of other values: ``#[serde(untagged)]``.
* Newtype -> ``#[serde(transparent)] pub struct Id(pub String)`` + ``string_newtype!``.
* Alias -> ``pub type``.
* Methods -> ``pub mod method`` constants and ``AGENT_METHODS`` / ``CLIENT_METHODS`` /
  ``PROTOCOL_METHODS`` tables of ``MethodInfo``.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import shutil
import subprocess
import textwrap
import sys
from pathlib import Path
from typing import Optional

sys.dont_write_bytecode = True  # no __pycache__ next to the sources
sys.path.insert(0, str(Path(__file__).resolve().parent))

import acp_schema as ir  # noqa: E402
from text import METHOD_TABLES, baseline_list  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = "tools/codegen/gen_rust.py"

# (schema, the stable schema whose methods it extends or None, the module it shares
# definitions with or None, output), relative to ROOT. A module is named after its file.
TARGETS = [
    ("schema/v1/schema.json", None, None, "core/src/schema/v1.rs"),
    ("schema/v1/schema.unstable.json", "schema/v1/schema.json", "v1", "core/src/schema/v1_unstable.rs"),
    ("schema/v2/schema.json", None, "v1", "core/src/schema/v2.rs"),
    ("schema/v2/schema.unstable.json", "schema/v2/schema.json", "v2", "core/src/schema/v2_unstable.rs"),
]
MODULE_SCHEMAS = {Path(out).stem: schema for schema, _, _, out in TARGETS}

RUST_KEYWORDS = {
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
}

# Names the generated module imports or relies on unqualified.
RESERVED_TYPE_NAMES = {
    "Map", "Value", "BTreeMap", "Serialize", "Deserialize", "Serializer", "Deserializer",
    "MethodInfo", "Option", "Result", "String", "Vec", "Box", "Self", "Some", "None", "Ok", "Err",
}

INTEGER_TYPES = {
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "uint": "u64", "int": "i64", None: "i64",
}
NUMBER_TYPES = {"float": "f32", "double": "f64", None: "f64"}

EXTRA_DOC = "Properties this version of the schema does not describe, kept so they survive a round trip."


def snake(wire: str) -> str:
    """``sessionId`` -> ``session_id``, ``_meta`` -> ``meta``, ``type`` -> ``r#type``."""
    name = wire.lstrip("_")
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    name = re.sub(r"[^A-Za-z0-9_]", "_", name).lower()
    if not name or name[0].isdigit():
        name = "f_" + name
    return "r#" + name if name in RUST_KEYWORDS else name


def rust_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def doc_lines(text: str, indent: str = "") -> list[str]:
    """A description as ``///`` lines (trimmed, blank lines kept as ``///``)."""
    text = (text or "").strip()
    if not text:
        return []
    out = []
    for line in text.split("\n"):
        line = line.rstrip().replace("\t", "    ")
        out.append(f"{indent}///" + (f" {line}" if line else ""))
    return out


def join_docs(*parts: str) -> str:
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


class RustEmitter:
    def __init__(
        self,
        schema: ir.Schema,
        schema_rel: str,
        shared: frozenset[str] = frozenset(),
        shared_module: str = "",
        schema_out: str = "",
    ):
        self.s = schema
        self.schema_rel = schema_rel
        self.schema_out = schema_out
        # Definitions `shared_module` already has as they are: re-exported, not repeated.
        self.shared = shared
        self.shared_module = shared_module
        self.out: list[str] = []
        self.uses: set[str] = set()
        self._default_memo: dict[str, bool] = {}
        for name in schema.definitions:
            if name in RESERVED_TYPE_NAMES:
                raise ir.SchemaError(f"definition name {name} clashes with a name the generated code uses")

    # -- types --------------------------------------------------------------------------

    def rust_type(self, t: ir.TypeExpr) -> str:
        if isinstance(t, ir.Prim):
            if t.kind == "string":
                return "String"
            if t.kind == "boolean":
                return "bool"
            if t.kind == "integer":
                if t.format not in INTEGER_TYPES:
                    raise ir.SchemaError(f"unsupported integer format {t.format}")
                return INTEGER_TYPES[t.format]
            if t.kind == "number":
                if t.format not in NUMBER_TYPES:
                    raise ir.SchemaError(f"unsupported number format {t.format}")
                return NUMBER_TYPES[t.format]
        if isinstance(t, ir.Ref):
            return t.name
        if isinstance(t, ir.Array):
            return f"Vec<{self.rust_type(t.item)}>"
        if isinstance(t, ir.MapOf):
            self.uses.add("BTreeMap")
            return f"BTreeMap<String, {self.rust_type(t.value)}>"
        if isinstance(t, ir.JsonObject):
            self.uses.add("Map")
            self.uses.add("Value")
            return "Map<String, Value>"
        if isinstance(t, ir.AnyValue):
            self.uses.add("Value")
            return "Value"
        if isinstance(t, ir.Nullable):
            return f"Option<{self.rust_type(t.inner)}>"
        if isinstance(t, ir.Null):
            return "()"
        raise ir.SchemaError(f"no Rust type for {t}")

    def is_defaultable(self, t: ir.TypeExpr) -> bool:
        if isinstance(t, (ir.Prim, ir.Array, ir.MapOf, ir.JsonObject, ir.AnyValue, ir.Nullable, ir.Null)):
            return True
        assert isinstance(t, ir.Ref)
        return self.def_defaultable(t.name)

    def def_defaultable(self, name: str) -> bool:
        if name in self._default_memo:
            return self._default_memo[name]
        self._default_memo[name] = True  # optimistic for cycles
        d = self.s.get(name)
        if isinstance(d, ir.Struct):
            ok = d.union is None and all(
                (not f.required) or isinstance(f.type, ir.Nullable) or self.is_defaultable(f.type) for f in d.fields
            )
        elif isinstance(d, ir.Newtype):
            ok = True
        elif isinstance(d, ir.Alias):
            ok = self.is_defaultable(d.target)
        else:
            ok = False
        self._default_memo[name] = ok
        return ok

    def is_eq_hash(self, t: ir.TypeExpr) -> bool:
        if isinstance(t, ir.Prim):
            return t.kind != "number"
        if isinstance(t, ir.Null):
            return True
        if isinstance(t, (ir.Array, ir.Nullable)):
            return self.is_eq_hash(t.item if isinstance(t, ir.Array) else t.inner)
        if isinstance(t, ir.Ref):
            d = self.s.get(t.name)
            if isinstance(d, (ir.Newtype, ir.StringEnum, ir.IntEnum)):
                return True
            if isinstance(d, ir.Alias):
                return self.is_eq_hash(d.target)
        return False

    def field_rust(self, f: ir.Field) -> tuple[str, str, list[str]]:
        """(rust field name, rust type, serde attribute items)."""
        name = snake(f.wire_name)
        attrs = [f"rename = {rust_str(f.wire_name)}"]
        inner = f.type.inner if isinstance(f.type, ir.Nullable) else f.type
        optional = (not f.required) or isinstance(f.type, ir.Nullable)
        ty = self.rust_type(inner)
        if optional:
            ty = f"Option<{ty}>"
        if not f.required:
            attrs.append("default")
            attrs.append('skip_serializing_if = "Option::is_none"')
        if f.skip_invalid_items and not f.lenient:
            # The array itself must be one (or null when optional); its invalid items are dropped.
            if not isinstance(inner, ir.Array) or optional:
                # Not used by the schema yet: add an optional variant of the helper when it is.
                raise ir.SchemaError(f"{f.wire_name}: skip-invalid-items is supported on required arrays only")
            attrs.append('deserialize_with = "support::skip_invalid_items"')
        if f.null_default and f.required and not optional:
            if f.lenient or not self.is_defaultable(inner):
                raise ir.SchemaError(f"{f.wire_name}: default-on-null on this property is not supported")
            # A required property whose JSON null reads as its default (optional ones read
            # null as None already).
            attrs.append('deserialize_with = "support::null_default"')
        if f.lenient:
            is_array = isinstance(inner, ir.Array)
            if f.skip_invalid_items and not is_array:
                raise ir.SchemaError(f"{f.wire_name}: skip-invalid-items on a non-array")
            if optional:
                func = "lenient_vec" if f.skip_invalid_items else "lenient"
                if f.required:
                    attrs.append("default")
            else:
                if not f.skip_invalid_items:
                    # Not used by the schema yet: add `support::lenient_default` when it is.
                    raise ir.SchemaError(f"{f.wire_name}: default-on-error on a required non-array property")
                func = "lenient_vec_default"
            attrs.append(f'deserialize_with = "support::{func}"')
        return name, ty, attrs

    # -- output helpers -----------------------------------------------------------------

    def emit(self, *lines: str) -> None:
        self.out.extend(lines)

    def emit_doc(self, text: str, indent: str = "") -> None:
        self.out.extend(doc_lines(text, indent))

    def emit_arms(self, arms: list[str]) -> None:
        """Match arms (each possibly several lines) inside a method body."""
        for arm in arms:
            self.emit(*("            " + line for line in arm.split("\n")))

    # -- definitions --------------------------------------------------------------------

    def definition_blocks(self) -> dict[str, str]:
        """Each definition's code by name, in schema order (those re-exported left out)."""
        blocks = {}
        for d in self.s.definitions.values():
            if d.name in self.shared:
                continue
            start = len(self.out)
            self.emit("")
            if isinstance(d, ir.Struct):
                self.gen_struct(d)
            elif isinstance(d, ir.StringEnum):
                self.gen_string_enum(d)
            elif isinstance(d, ir.IntEnum):
                self.gen_int_enum(d)
            elif isinstance(d, ir.TaggedUnion):
                self.gen_tagged_union(d)
            elif isinstance(d, ir.UntaggedUnion):
                self.gen_untagged_union(d)
            elif isinstance(d, ir.Newtype):
                self.gen_newtype(d)
            elif isinstance(d, ir.Alias):
                self.gen_alias(d)
            else:
                raise ir.SchemaError(f"unknown definition kind {d}")
            blocks[d.name] = "\n".join(self.out[start:])
        self.out = []
        return blocks

    def generate(self, blocks: dict[str, str], includes: list[SharedText]) -> str:
        """The module: its header, the `include!` of the text it shares with another
        module, its other definitions and its method tables."""
        shared = {name for text in includes for name in text.names}
        body = [block for name, block in blocks.items() if name not in shared]
        self.gen_methods()
        return "\n".join(self.header(includes) + body + self.out) + "\n"

    def header(self, includes: list[SharedText]) -> list[str]:
        lines = [
            f"// @generated by {GENERATOR} from {self.schema_rel}.",
            f"// Do not edit by hand: change the schema or the generator, then run `python3 {GENERATOR}`.",
            "",
            "// Some unions hold a large struct in one variant and a small one in another (ToolCallContent);",
            "// boxing would make the types awkward to build and match for little gain.",
            "#![allow(clippy::large_enum_variant)]",
            "",
        ]
        std = []
        if "BTreeMap" in self.uses:
            std.append("use std::collections::BTreeMap;")
        if std:
            lines += std + [""]
        if "de_error" in self.uses:
            lines.append("use serde::de::Error as _;")
        serde_items = ["Deserialize", "Serialize"]
        if "Deserializer" in self.uses:
            serde_items.append("Deserializer")
        if "Serializer" in self.uses:
            serde_items.append("Serializer")
        lines.append(f"use serde::{{{', '.join(sorted(serde_items))}}};")
        json_items = [x for x in ("Map", "Value") if x in self.uses]
        if json_items:
            lines.append(f"use serde_json::{{{', '.join(json_items)}}};" if len(json_items) > 1 else f"use serde_json::{json_items[0]};")
        lines.append("")
        lines.append("use super::support::{self, MethodInfo};")
        if self.shared:
            lines += ["", f"// The definitions of `{self.shared_module}` this schema has as they are (down to every",
                      "// type they hold); only what differs is defined below.",
                      f"pub use super::{self.shared_module}::{{{', '.join(sorted(self.shared))}}};"]
        for text in includes:
            other = text.target if text.base == Path(self.schema_out).stem else text.base
            lines += ["", f"// The definitions `{other}` writes as this module does, though they hold types each",
                      "// module defines its own way: one text, compiled against each module's types.",
                      f'include!("{Path(text.out).name}");']
        return lines

    def method_doc(self, d: ir.Struct) -> str:
        if not d.method:
            return ""
        handler = {"agent": "the agent", "client": "the client", "both": "either side", "protocol": "either side"}.get(
            d.side or "", "either side"
        )
        if d.method_kind == "request":
            return f"Params of the `{d.method}` request (handled by {handler})."
        if d.method_kind == "response":
            return f"Result of the `{d.method}` request (handled by {handler})."
        return f"Params of the `{d.method}` notification (handled by {handler})."

    def gen_struct(self, d: ir.Struct) -> None:
        default = self.def_defaultable(d.name)
        doc = join_docs(d.doc, self.method_doc(d))
        if d.inline_of and not d.doc:
            doc = f"An inline variant of [`{d.inline_of}`]."
        self.emit_doc(doc)
        # Deserialize: `support::read_struct!` below (or a union part's own impl).
        derives = ["Debug", "Clone", "PartialEq", "Serialize"]
        if default:
            derives.append("Default")
        self.emit(f"#[derive({', '.join(derives)})]", f"pub struct {d.name} {{")
        fields = []
        for f in d.fields:
            name, ty, attrs = self.field_rust(f)
            fields.append((f, name, ty, attrs))
            fdoc = f.doc
            if f.has_default:
                fdoc = join_docs(fdoc, f"Default: `{json.dumps(f.default, separators=(',', ':'))}`.")
            self.emit_doc(fdoc, "    ")
            self.emit(f"    #[serde({', '.join(attrs)})]", f"    pub {name}: {ty},")
        union_field = None
        if d.union:
            union_field = snake(d.union.field)
            self.emit_doc(d.union.doc, "    ")
            self.emit("    #[serde(flatten)]", f"    pub {union_field}: {d.union.union},")
        self.uses.update(["Map", "Value"])
        self.emit_doc(EXTRA_DOC, "    ")
        self.emit('    #[serde(flatten, skip_serializing_if = "support::skip_extra")]', "    pub extra: Map<String, Value>,", "}")

        # Constructor.
        params = []
        inits = []
        for f, name, ty, _ in fields:
            if f.required:
                if self.takes_into(f, ty):
                    # Strings and identifiers: `TextContent::new("Hello")`, no `.into()`.
                    params.append(f"{name}: impl Into<{ty}>")
                    inits.append(f"{name}: {name}.into()")
                else:
                    params.append(f"{name}: {ty}")
                    inits.append(name)
            else:
                inits.append(f"{name}: None")
        if union_field:
            params.append(f"{union_field}: {d.union.union}")
            inits.append(union_field)
        inits.append("extra: Map::new()")
        self.emit("", f"impl {d.name} {{")
        self.emit(
            "    /// Creates a value from its required properties (optional ones `None`, `extra` empty)."
        )
        self.emit(f"    pub fn new({', '.join(params)}) -> Self {{")
        self.emit(f"        Self {{ {', '.join(inits)} }}")
        self.emit("    }", "}")

        if d.union:
            self.gen_struct_deserialize(d, fields, union_field)
            self.emit("", f"support::check_by_parse!({d.name});")
        else:
            self.gen_read_struct(d, fields)

    def takes_into(self, f: ir.Field, ty: str) -> bool:
        """Whether a constructor takes this required field as `impl Into<_>`: a string
        or a string identifier (`SessionId`, which `From<&str>` and `From<String>`)."""
        if ty == "String":
            return True
        return isinstance(f.type, ir.Ref) and isinstance(self.s.get(f.type.name), ir.Newtype)

    def gen_read_struct(self, d: ir.Struct, fields) -> None:
        """`Deserialize` through `support::read_struct!`, with serde derive's rules."""
        lines = []
        for f, name, ty, attrs in fields:
            with_fn = next((a.split('"')[1] for a in attrs if a.startswith("deserialize_with")), None)
            if "default" in attrs or (with_fn is None and ty.startswith("Option<")):
                kind = "default"
            else:
                kind = "required"
            check = {
                "support::null_default": f"Option<{ty}>",
                # Any items, but an array.
                "support::skip_invalid_items": "Vec<serde_json::Value>",
            }.get(with_fn, "serde_json::Value")
            with_part = f" with {with_fn}, check {check}" if with_fn else ""
            lines.append(f"    {name}: {ty} = {rust_str(f.wire_name)}, {kind}{with_part};")
        self.emit("", f"support::read_struct! {{ {d.name} {{", *lines, "} }")

    def gen_struct_deserialize(self, d: ir.Struct, fields, union_field: str) -> None:
        self.uses.update(["Deserializer", "de_error"])
        self.emit(
            "",
            f"impl<'de> Deserialize<'de> for {d.name} {{",
            "    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {",
            "        #[derive(Deserialize)]",
            "        struct Common {",
        )
        for _, name, ty, attrs in fields:
            attrs = [a for a in attrs if not a.startswith("skip_serializing_if")]
            self.emit(f"            #[serde({', '.join(attrs)})]", f"            {name}: {ty},")
        self.emit(
            "            #[serde(flatten)]",
            "            extra: Map<String, Value>,",
            "        }",
            "",
            "        let mut map = support::object(deserializer)?;",
            f"        let {union_field} = {d.union.union}::take_from(&mut map).map_err(D::Error::custom)?;",
            "        let common: Common = support::from_map(map).map_err(D::Error::custom)?;",
            "        if !common.extra.is_empty() {",
            "            support::note_unknown();",
            "        }",
        )
        inits = [f"{name}: common.{name}" for _, name, _, _ in fields] + [union_field, "extra: common.extra"]
        self.emit(f"        Ok(Self {{ {', '.join(inits)} }})", "    }", "}")

    def gen_string_enum(self, d: ir.StringEnum) -> None:
        doc = join_docs(d.doc, d.open_doc and f"Other values: {d.open_doc}")
        self.emit("support::string_enum! {")
        self.emit_doc(doc, "    ")
        self.emit(f"    pub enum {d.name} {{")
        names = set()
        for v in d.values:
            vname = ir.camel(str(v.value))
            if vname == "Unknown":
                # A known value named like the fallback variant (`AuthState` "unknown").
                vname += re.findall(r"[A-Z][a-z0-9]*", d.name)[-1]
            if vname in names or vname == "Unknown":
                raise ir.SchemaError(f"{d.name}: variant name clash {vname}")
            names.add(vname)
            self.emit_doc(v.doc, "        ")
            self.emit(f"        {vname} = {rust_str(v.value)},")
        self.emit("    }", "}")

    def gen_int_enum(self, d: ir.IntEnum) -> None:
        ty = INTEGER_TYPES[d.format]
        doc = join_docs(d.doc, d.open_doc and f"Other values: {d.open_doc}")
        self.emit("support::int_enum! {")
        self.emit_doc(doc, "    ")
        self.emit(f"    pub enum {d.name}: {ty} {{")
        names = set()
        for v in d.values:
            vname = ir.camel(v.title or f"V{v.value}")
            if vname in names or vname == "Other":
                raise ir.SchemaError(f"{d.name}: variant name clash {vname}")
            names.add(vname)
            self.emit_doc(v.doc, "        ")
            self.emit(f"        {vname} = {v.value},")
        self.emit("    }", "}")

    def gen_newtype(self, d: ir.Newtype) -> None:
        if d.inner.kind != "string":
            raise ir.SchemaError(f"{d.name}: only string newtypes are supported")
        self.emit_doc(d.doc)
        self.emit(
            "#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]",
            "#[serde(transparent)]",
            f"pub struct {d.name}(pub String);",
            "",
            f"support::string_newtype!({d.name});",
        )

    def gen_alias(self, d: ir.Alias) -> None:
        self.emit_doc(d.doc)
        self.emit(f"pub type {d.name} = {self.rust_type(d.target)};")

    # -- unions -------------------------------------------------------------------------

    def variant_from_impls(self, union: str, variants: list[tuple[str, str]]) -> None:
        """``From<Payload> for Union`` for every payload type used by exactly one variant."""
        counts: dict[str, int] = {}
        for _, ty in variants:
            counts[ty] = counts.get(ty, 0) + 1
        for vname, ty in variants:
            if counts[ty] == 1 and ty != "()":
                self.emit(
                    "",
                    f"impl From<{ty}> for {union} {{",
                    f"    fn from(value: {ty}) -> Self {{",
                    f"        Self::{vname}(value)",
                    "    }",
                    "}",
                )

    def gen_tagged_union(self, u: ir.TaggedUnion) -> None:
        self.uses.update(["Serializer", "Value"])
        embedded = u.embedded_in is not None
        tag = rust_str(u.tag)
        doc = u.doc or (f"The `{u.tag}`-selected part of [`{u.embedded_in}`]." if embedded else "")
        self.emit_doc(doc)
        self.emit("#[derive(Debug, Clone, PartialEq)]", f"pub enum {u.name} {{")
        names: set[str] = set()
        arms_ser: list[str] = []
        payload_variants: list[tuple[str, str]] = []

        def claim(vname: str) -> str:
            if vname in names:
                raise ir.SchemaError(f"{u.name}: variant name clash {vname}")
            names.add(vname)
            return vname

        tagged = []
        for v in u.variants:
            vname = claim(ir.camel(v.tag))
            tagged.append((v, vname))
            vdoc = join_docs(v.doc, f"Tagged `\"{u.tag}\": {rust_str(v.tag)}`.")
            self.emit_doc(vdoc, "    ")
            if v.payload:
                self.emit(f"    {vname}({v.payload}),")
                payload_variants.append((vname, v.payload))
                arms_ser.append(f"Self::{vname}(v) => support::Tagged::new({tag}, {rust_str(v.tag)}, v).serialize(serializer),")
            else:
                self.emit(f"    {vname},")
                arms_ser.append(f"Self::{vname} => support::Tag::new({tag}, {rust_str(v.tag)}).serialize(serializer),")
        default_name = other_name = None
        if u.default:
            default_name = claim(u.default.title)
            vdoc = join_docs(u.default.doc, f"Used when `{u.tag}` is absent or not one of the values above.")
            self.emit_doc(vdoc, "    ")
            self.emit(f"    {default_name}({u.default.payload}),")
            payload_variants.append((default_name, u.default.payload))
            arms_ser.append(f"Self::{default_name}(v) => v.serialize(serializer),")
        absent_name = None
        if u.absent:
            if not embedded or u.default:
                raise ir.SchemaError(f"{u.name}: a tag-less variant is only supported in an object's union part")
            absent_name = claim("Absent" if u.absent.title == "None" else u.absent.title)
            vdoc = join_docs(u.absent.doc, f"`{u.tag}` is absent, null or not a string.")
            self.emit_doc(vdoc, "    ")
            self.emit(f"    {absent_name},")
            arms_ser.append(f"Self::{absent_name} => Map::<String, Value>::new().serialize(serializer),")
            self.uses.add("Map")
        if u.other:
            other_name = claim(u.other.title)
            if embedded:
                vdoc = join_docs(u.other.doc, f"Any other `{u.tag}` value (kept here; the object's other properties go to the enclosing `extra`).")
                self.emit_doc(vdoc, "    ")
                self.emit(f"    {other_name}(String),")
                arms_ser.append(f"Self::{other_name}(v) => support::Tag::new({tag}, v).serialize(serializer),")
            else:
                self.uses.add("Map")
                vdoc = join_docs(u.other.doc, f"Any other `{u.tag}` value: the whole object, `{u.tag}` included.")
                self.emit_doc(vdoc, "    ")
                self.emit(f"    {other_name}(Map<String, Value>),")
                arms_ser.append(f"Self::{other_name}(v) => v.serialize(serializer),")
        # A closed union still meets newer peers: an unrecognised tag keeps
        # the whole object (and round-trips) instead of failing the message.
        unknown_name = None
        if not (u.default or u.other or embedded):
            self.uses.add("Map")
            unknown_name = claim("Unknown")
            self.emit_doc(
                f"A `{u.tag}` this schema version does not know (a newer peer's): the whole object, "
                f"`{u.tag}` included, kept as is so it survives a round trip.",
                "    ",
            )
            self.emit(f"    {unknown_name}(Map<String, Value>),")
            arms_ser.append(f"Self::{unknown_name}(v) => v.serialize(serializer),")
        self.emit("}")

        self.emit(
            "",
            f"impl Serialize for {u.name} {{",
            "    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {",
            "        match self {",
        )
        self.emit(*[f"            {a}" for a in arms_ser])
        self.emit("        }", "    }", "}")

        known = ", ".join(rust_str(v.tag) for v, _ in tagged)
        arms = []
        for v, vname in tagged:
            if v.payload is None:
                arms.append(f"Some({rust_str(v.tag)}) => Ok(Self::{vname}),")
            elif embedded:
                fields = ", ".join(rust_str(n) for n in self.s.field_names(v.payload))
                arms.append(f"Some({rust_str(v.tag)}) => support::take_payload(map, &[{fields}]).map(Self::{vname}),")
            else:
                arms.append(f"Some({rust_str(v.tag)}) => support::from_map(map).map(Self::{vname}),")
        if other_name:
            # The catch-all's own required properties (v2's custom auth methods need a methodId).
            required = ", ".join(f"({rust_str(wire)}, {'true' if kind == 'string' else 'false'})"
                                 for wire, kind in u.other.required)
            target = "map" if embedded else "&map"
            check = f"support::check_required({target}, &[{required}])?;" if required else ""
            if u.other.one_of:
                alternatives = ", ".join(
                    "&[" + ", ".join(f"({rust_str(w)}, {'true' if k == 'string' else 'false'})" for w, k in alt) + "]"
                    for alt in u.other.one_of
                )
                check += f" support::check_one_of({target}, &[{alternatives}])?;"
            if embedded:
                arms.append(f"Some(other) => {{ {check} Ok(Self::{other_name}(other.to_owned())) }},")
            else:
                arms.append(f"Some(_) => {{ {check} Ok(Self::{other_name}(support::restore(map, {tag}, tag))) }},")
        if absent_name:
            arms.append(f"_ => Ok(Self::{absent_name}),")
        elif default_name:
            if embedded:
                fields = ", ".join(rust_str(n) for n in self.s.field_names(u.default.payload))
                arms.append(
                    "_ => {\n"
                    f"    support::restore_in(map, {tag}, tag);\n"
                    f"    support::take_payload(map, &[{fields}]).map(Self::{default_name})\n"
                    "}"
                )
            else:
                arms.append(f"_ => support::from_map(support::restore(map, {tag}, tag)).map(Self::{default_name}),")
        else:
            if unknown_name:
                arms.append(f"Some(_) => Ok(Self::{unknown_name}(support::restore(map, {tag}, tag))),")
            arms.append(f"_ => Err(support::bad_tag({tag}, tag.as_ref(), &[{known}])),")

        if embedded:
            self.emit(
                "",
                f"impl {u.name} {{",
                "    /// Moves this part's properties out of the enclosing object's `map`.",
                "    pub(crate) fn take_from(map: &mut support::Fields<'_>) -> Result<Self, serde_json::Error> {",
                f"        let tag = map.remove({tag});",
                "        match tag.as_ref().and_then(Value::as_str) {",
            )
            self.uses.add("Map")
        else:
            # One pass when the tag comes first (support::TaggedUnion); the
            # buffered path below for everything else.
            self.uses.add("Deserializer")
            # `fast` reads the variant, `checks` checks it (support::Check).
            fast, checks = [], []
            for v, vname in tagged:
                key = rust_str(v.tag)
                if v.payload is None:
                    fast.append(f"{key} => {{\n    support::skip_rest(rest)?;\n    Self::{vname}\n}}")
                    checks.append(f"{key} => support::skip_rest(rest)?,")
                else:
                    fast.append(f"{key} => Self::{vname}(support::read_rest(rest)?),")
                    checks.append(f"{key} => support::check_rest::<{v.payload}, A>(rest)?,")
            fast.append("_ => return Ok(Err(rest)),")
            checks.append("_ => return Ok(Err(rest)),")
            self.emit(
                "",
                f"impl support::TaggedUnion for {u.name} {{",
                f"    const TAG: &'static str = {tag};",
                "",
                "    fn read_variant<'de, A: serde::de::MapAccess<'de>>(",
                "        tag: &str,",
                "        rest: A,",
                "    ) -> Result<Result<Self, A>, A::Error> {",
                "        Ok(Ok(match tag {",
            )
            self.emit_arms(fast)
            self.emit(
                "        }))",
                "    }",
                "",
                "    fn check_variant<'de, A: serde::de::MapAccess<'de>>(",
                "        tag: &str,",
                "        rest: A,",
                "    ) -> Result<Result<(), A>, A::Error> {",
                "        match tag {",
            )
            self.emit_arms(checks)
            self.emit(
                "        }",
                "        Ok(Ok(()))",
                "    }",
                "",
                "    fn from_fields(mut map: support::Fields<'_>) -> Result<Self, serde_json::Error> {",
                "        let tag = map.remove(Self::TAG);",
                "        match tag.as_ref().and_then(Value::as_str) {",
            )
        self.emit_arms(arms)
        self.emit("        }", "    }", "}")
        if not embedded:
            self.emit(
                "",
                f"impl<'de> Deserialize<'de> for {u.name} {{",
                "    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {",
                "        support::tagged_union(deserializer)",
                "    }",
                "}",
                "",
                f"impl support::Check for {u.name} {{",
                "    fn check<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {",
                "        support::check_tagged::<Self, D>(deserializer)",
                "    }",
                "}",
            )
        self.variant_from_impls(u.name, payload_variants)

    def variant_doc(self, v) -> str:
        """A variant the schema says nothing about: named after what it holds."""
        if isinstance(v.type, ir.Ref):
            return f"A [`{v.type.name}`]."
        if isinstance(v.type, ir.Null):
            return "`null`."
        return "Any other value."

    def gen_untagged_union(self, u: ir.UntaggedUnion) -> None:
        embedded = u.embedded_in is not None
        objects = all(isinstance(v.type, ir.Ref) and isinstance(self.s.get(v.type.name), ir.Struct) for v in u.variants)
        self.emit_doc(u.doc)
        payloads = []
        if not objects:
            eq = all(self.is_eq_hash(v.type) for v in u.variants)
            derives = ["Debug", "Clone", "PartialEq"] + (["Eq", "Hash"] if eq else []) + ["Serialize", "Deserialize"]
            self.emit(f"#[derive({', '.join(derives)})]", "#[serde(untagged)]", f"pub enum {u.name} {{")
            for v in u.variants:
                self.emit_doc(v.doc or self.variant_doc(v), "    ")
                if isinstance(v.type, ir.Null):
                    self.emit(f"    {v.title},")
                else:
                    ty = self.rust_type(v.type)
                    self.emit(f"    {v.title}({ty}),")
                    payloads.append((v.title, ty))
            self.emit("}")
            if not embedded:
                self.emit("", f"support::check_by_parse!({u.name});")
            self.variant_from_impls(u.name, payloads)
            return

        self.uses.update(["Serializer", "Map", "Value"])
        self.emit("#[derive(Debug, Clone, PartialEq)]", f"pub enum {u.name} {{")
        for v in u.variants:
            self.emit_doc(v.doc, "    ")
            self.emit(f"    {v.title}({v.type.name}),")
            payloads.append((v.title, v.type.name))
        self.emit("}")
        self.emit(
            "",
            f"impl Serialize for {u.name} {{",
            "    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {",
            "        match self {",
        )
        for v in u.variants:
            self.emit(f"            Self::{v.title}(v) => v.serialize(serializer),")
        self.emit("        }", "    }", "}")

        required = []
        branches = []
        for v in u.variants:
            req = self.s.required_names(v.type.name)
            required.append(req)
            req_list = ", ".join(rust_str(n) for n in req)
            if embedded:
                fields = ", ".join(rust_str(n) for n in self.s.field_names(v.type.name))
                take = f"support::take_payload(map, &[{fields}]).map(Self::{v.title})"
            else:
                take = f"support::from_map(map).map(Self::{v.title})"
            cond = f"support::has_all({'map' if embedded else '&map'}, &[{req_list}])"
            branches.append((cond if req else None, take))
        shapes = ", ".join("&[" + ", ".join(rust_str(n) for n in r) + "]" for r in required)
        chain: list[str] = []
        for i, (cond, take) in enumerate(branches):
            if cond is None:
                chain += (["} else {"] if i else []) + [f"    {take}" if i else take]
                break
            chain += [("} else if " if i else "if ") + f"{cond} {{", f"    {take}"]
        else:
            chain += ["} else {", f"    Err(support::no_variant({rust_str(u.name)}, &[{shapes}]))"]
        if chain[0].startswith("if "):
            chain.append("}")
        if embedded:
            self.emit(
                "",
                f"impl {u.name} {{",
                "    /// Moves this part's properties out of the enclosing object's `map`.",
                "    pub(crate) fn take_from(map: &mut support::Fields<'_>) -> Result<Self, serde_json::Error> {",
            )
            self.emit(*["        " + line for line in chain])
            self.emit("    }", "}")
        else:
            self.uses.update(["Deserializer", "de_error"])
            self.emit(
                "",
                f"impl<'de> Deserialize<'de> for {u.name} {{",
                "    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {",
                "        let map = support::object(deserializer)?;",
            )
            chain[0] = "let value = " + chain[0]
            chain[-1] += ";"
            self.emit(*["        " + line for line in chain])
            self.emit("        value.map_err(D::Error::custom)", "    }", "}")
            self.emit("", f"support::check_by_parse!({u.name});")
        self.variant_from_impls(u.name, payloads)

    # -- methods ------------------------------------------------------------------------

    def gen_methods(self) -> None:
        methods = self.s.methods
        consts: dict[str, str] = {}
        for m in methods:
            if consts.setdefault(m.key.upper(), m.name) != m.name:
                raise ir.SchemaError(f"method constant {m.key.upper()} for two methods")
        self.emit(
            "",
            "/// Wire method names: one constant per method, named after the method (`session/new`:",
            "/// `SESSION_NEW`), as the official SDKs' method tables.",
            "pub mod method {",
        )
        first = True
        for key, name in consts.items():
            kinds = []
            for m in methods:
                if m.name != name:
                    continue
                if m.notification:
                    kinds.append(f"notification with params [`{m.params}`](super::{m.params})")
                else:
                    kinds.append(
                        f"request with params [`{m.params}`](super::{m.params}), "
                        f"result [`{m.result}`](super::{m.result})"
                    )
            if not first:
                self.emit("")
            first = False
            self.emit(f"    /// `{name}`: {'; or a '.join(kinds)}.", f"    pub const {key}: &str = {rust_str(name)};")
        self.emit("}")

        for const, side, doc in METHOD_TABLES:
            entries = [m for m in methods if m.side == side]
            self.emit("", f"/// {doc}.", f"pub const {const}: &[MethodInfo] = &[")
            for m in entries:
                result = f"Some({rust_str(m.result)})" if m.result else "None"
                self.emit(
                    "    MethodInfo {",
                    f"        name: method::{m.key.upper()},",
                    f"        params: {rust_str(m.params)},",
                    f"        result: {result},",
                    f"        notification: {'true' if m.notification else 'false'},",
                    f"        handler: {rust_str(m.snake)},",
                    f"        unstable: {'true' if m.unstable else 'false'},",
                    "    },",
                )
            self.emit("];")
        self.gen_checks()
        self.gen_extensible_check()

    def gen_checks(self) -> None:
        """The params check of every method, by the side that receives it (see
        `crate::method_check`, which adds the rules for methods not listed here)."""
        groups = [
            ("agent_request", "agent", False),
            ("agent_notification", "agent", True),
            ("client_request", "client", False),
            ("client_notification", "client", True),
        ]
        for name, side, notification in groups:
            entries = [m for m in self.s.methods if m.side == side and m.notification == notification]
            what = "notification" if notification else "request"
            self.emit(
                "",
                f"/// Checks the params of a {what} the {side} receives against its schema type, without",
                "/// building the value; `None` when the method is not one.",
                f"pub(crate) fn check_{name}(method: &str, params: Option<&str>) -> Option<Result<(), crate::RequestError>> {{",
                "    Some(match method {",
            )
            for m in entries:
                self.emit(f"        method::{m.key.upper()} => support::check_params::<{m.params}>(method, params),")
            self.emit("        _ => return None,", "    })", "}")
        self.emit(
            "",
            "/// Whether checking and parsing agree on `text` as the params of `method`, for every",
            "/// side and kind that receives it (the fuzzer's and the tests' comparison).",
            "pub(crate) fn check_agrees_with_parse(method: &str, text: &str) -> Vec<bool> {",
            "    let mut agree = Vec::new();",
        )
        for m in self.s.methods:
            if m.side in ("agent", "client"):
                self.emit(
                    f"    if method == method::{m.key.upper()} {{",
                    f"        agree.push(support::check_agrees::<{m.params}>(text));",
                    "    }",
                )
        self.emit("    agree", "}")


    def gen_extensible_check(self) -> None:
        """Whether a value is valid, for the definitions holding a union with a catch-all
        variant: the packages' narrowing guards (`CreateElicitationRequest.isForm()`)
        check the value's payload with it, as the engine checks the wire. The unstable
        module leaves the definitions it shares with the stable one to the stable check."""
        self.emit(
            "",
            "/// Whether `text` is a valid `definition`, for the definitions holding a union with a",
            "/// catch-all variant (what the packages' narrowing guards check); `None` for any other.",
            "pub(crate) fn is_valid_extensible(definition: &str, text: &str) -> Option<bool> {",
            "    Some(match definition {",
        )
        for name, _ in self.s.extensible():
            if name not in self.shared:
                self.emit(f"        {rust_str(name)} => serde_json::from_str::<{name}>(text).is_ok(),")
        fallback = f"super::{self.shared_module}::is_valid_extensible(definition, text)" if self.shared else "None"
        self.emit(f"        _ => return {fallback},", "    })", "}")


# ---------------------------------------------------------------------------------------
# The method tables: core/src/schema/methods.rs (v1), methods_v2.rs (the v2 draft)


class MethodTable:
    """One version's method table: where it comes from, where it goes, what it names."""

    def __init__(self, out: str, schema: str, stable: str, types: list[str], path: str) -> None:
        self.out = out
        self.schema = schema
        self.stable = stable
        self.types = types  # the `use` lines that bring the version's schema types in
        self.path = path  # where its Agent, Client and typed connections are public


METHOD_TABLES_OUT = [
    MethodTable(
        "core/src/schema/methods.rs",
        "schema/v1/schema.unstable.json",
        "schema/v1/schema.json",
        ["use crate::schema::*;"],
        "crate",
    ),
    MethodTable(
        "core/src/schema/methods_v2.rs",
        "schema/v2/schema.unstable.json",
        "schema/v2/schema.json",
        ["use crate::v2::schema::*;"],
        "crate::v2",
    ),
]

# What each side's handler trait says about itself; the baseline list is the schema IR's.
SIDE_DOCS = {
    "agent": (
        "Agent",
        "AgentSideConnection",
        "What an agent implements. {baseline} are required (the protocol's baseline); every other "
        "request answers -32601 (method not found) until implemented, and other notifications are "
        "ignored. Requests run concurrently; notifications one at a time, in arrival order. Params "
        "that do not match the schema never reach these methods: the client gets -32602.",
    ),
    "client": (
        "Client",
        "ClientSideConnection",
        "What a client (an editor) implements. {baseline} are required (the protocol's baseline); "
        "the capability-gated methods answer -32601 until implemented, so a client advertises only "
        "what it implements, and other notifications are ignored. Params that do not match the "
        "schema never reach these methods: the agent gets -32602.",
    ),
}

# Peer requests whose result the connection wraps: `terminal/create` returns a handle that
# releases the terminal.
HANDLE_RESULTS = {"CreateTerminalResponse"}


def method_entry(m: ir.Method, notification: bool, result: Optional[str] = None) -> list[str]:
    lines = doc_lines(m.doc, "        ")
    if m.unstable:
        lines += ["        ///", "        /// Needs the `unstable` cargo feature.", '        #[cfg(feature = "unstable")]']
    if notification:
        lines.append(f"        {m.snake}({m.params}) = {rust_str(m.name)};")
    else:
        lines.append(f"        {m.snake}({m.params}) -> {result or m.result} = {rust_str(m.name)};")
    return lines


def generate_methods(table: MethodTable) -> str:
    schema = ir.load(ROOT / table.schema, ROOT / table.stable)
    # Stable methods carry the stable schema's docs (its links point at the released
    # protocol, the unstable schema's at the draft).
    stable_docs = {m.params: m.doc for m in ir.load(ROOT / table.stable).methods}
    for m in schema.methods:
        m.doc = stable_docs.get(m.params, m.doc)
    p = table.path
    out = [
        f"// @generated by {GENERATOR} from {table.schema} (unstable: what",
        f"// {table.stable} lacks). Do not edit by hand: change the schema or the generator,",
        f"// then run `python3 {GENERATOR}`.",
        "",
        "//! The ACP method table, generated from the schema's `x-method` / `x-side`: the [`Agent`]",
        "//! and [`Client`] handler traits with their dispatch and checks, and the peer methods of",
        "//! [`AgentSideConnection`] and [`ClientSideConnection`]. Unstable methods need the",
        "//! `unstable` cargo feature.",
        "//!",
        f"//! [`Agent`]: {p}::Agent",
        f"//! [`Client`]: {p}::Client",
        f"//! [`AgentSideConnection`]: {p}::AgentSideConnection",
        f"//! [`ClientSideConnection`]: {p}::ClientSideConnection",
    ]
    for side, peer_side in (("agent", "client"), ("client", "agent")):
        trait, connection, doc = SIDE_DOCS[side]
        handled = [m for m in schema.methods if m.side == side]
        called = [m for m in schema.methods if m.side == peer_side]
        baseline = baseline_list(handled, lambda m: m.snake)
        out += [
            "",
            f"/// The {side} side: what an {side} handles, and what it calls on its {peer_side}.",
            f"pub(crate) mod {side} {{",
            "    use crate::error::RequestError;",
            *["    " + line for line in table.types],
            "",
            "    crate::typed::handler_trait! {",
            *doc_lines(textwrap.fill(doc.format(baseline=baseline), 88), "        "),
            "        ///",
            "        /// Methods return `impl Future + Send`: implement them with `async fn`.",
            f"        pub trait {trait};",
        ]
        groups = (
            ("required_requests", [m for m in handled if not m.notification and m.baseline], False),
            ("optional_requests", [m for m in handled if not m.notification and not m.baseline], False),
            ("required_notifications", [m for m in handled if m.notification and m.baseline], True),
            ("optional_notifications", [m for m in handled if m.notification and not m.baseline], True),
        )
        for group, entries, notification in groups:
            out.append(f"        {group} {{")
            for m in entries:
                if m.baseline and m.unstable:
                    raise ir.SchemaError(f"{m.name}: an unstable baseline method")
                out += ["    " + line for line in method_entry(m, notification)]
            out.append("        }")
        out += ["    }", "", f"    impl {p}::{connection} {{", "        crate::typed::peer_methods! {"]
        peer_groups = (
            ("requests", [m for m in called if not m.notification and m.result not in HANDLE_RESULTS], False),
            ("handles", [m for m in called if not m.notification and m.result in HANDLE_RESULTS], False),
            ("notifications", [m for m in called if m.notification], True),
        )
        for group, entries, notification in peer_groups:
            out.append(f"            {group} {{")
            for m in entries:
                result = "crate::TerminalHandle" if group == "handles" else None
                out += ["        " + line for line in method_entry(m, notification, result)]
            out.append("            }")
        out += ["        }", "    }", "}"]
    return rustfmt("\n".join(out) + "\n")


# ---------------------------------------------------------------------------------------


def rustfmt(text: str) -> str:
    exe = shutil.which("rustfmt")
    if exe is None:
        raise SystemExit(f"{GENERATOR}: rustfmt not found on PATH (needed to format the output)")
    cmd = [exe, "--edition", "2021", "--emit", "stdout"]
    config = ROOT / "rustfmt.toml"
    if config.exists():
        cmd += ["--config-path", str(config)]
    proc = subprocess.run(cmd, input=text, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"{GENERATOR}: rustfmt failed:\n{proc.stderr}")
    return proc.stdout


class SharedText:
    """The definitions two modules write alike (`target` builds on `base`), though they are
    not the same types: each holds the types its module defines (v1_unstable's
    `InitializeRequest` holds v1_unstable's `ClientCapabilities`). Written once, in `out`,
    which both modules `include!`."""

    def __init__(self, base: str, target: str) -> None:
        self.base = base
        self.target = target
        self.out = f"core/src/schema/shared_{base}_{target}.rs"
        self.names: list[str] = []

    def text(self, blocks: dict[str, str]) -> str:
        header = [
            f"// @generated by {GENERATOR}: the definitions `{self.base}` and `{self.target}` write alike,",
            f"// included by both (`include!`) and compiled against each module's own types.",
            f"// Do not edit by hand: change the schema or the generator, then run `python3 {GENERATOR}`.",
        ]
        return rustfmt("\n".join(header + [blocks[name] for name in self.names]) + "\n")


def generate_all() -> dict[str, str]:
    """Every output of TARGETS, and the text two of them share, by path."""
    emitters: dict[str, RustEmitter] = {}
    blocks: dict[str, dict[str, str]] = {}
    includes: dict[str, list[SharedText]] = {}
    placed: dict[str, set[str]] = {}  # per module: the names it already takes from a shared text
    for schema_rel, stable_rel, shared_module, out in TARGETS:
        module = Path(out).stem
        schema = ir.load(ROOT / schema_rel, ROOT / stable_rel if stable_rel else None)
        shared = frozenset()
        if shared_module:
            base_schema = ir.load(ROOT / MODULE_SCHEMAS[shared_module])
            shared = frozenset(ir.same_as_stable(schema, base_schema))
            # An unstable module's definition shaped as the stable one's, holding types of
            # its own, says what the stable one says (the draft's copy differs in links
            # only): the two modules then write it alike and share the text. Another
            # version's prose stays its own.
            if stable_rel:
                for name in ir.same_shape(schema, base_schema) - shared:
                    schema.definitions[name] = base_schema.definitions[name]
        emitters[module] = RustEmitter(schema, schema_rel, shared, shared_module or "", out)
        blocks[module] = emitters[module].definition_blocks()
        includes[module], placed[module] = [], set()
        if not shared_module:
            continue
        text = SharedText(shared_module, module)
        base = blocks[shared_module]
        text.names = [
            name for name, block in blocks[module].items()
            if base.get(name) == block and name not in placed[shared_module]
        ]
        if text.names:
            for side in (shared_module, module):
                includes[side].append(text)
                placed[side].update(text.names)
    outputs = {}
    for module, emitter in emitters.items():
        outputs[emitter.schema_out] = rustfmt(emitter.generate(blocks[module], includes[module]))
        for text in includes[module]:
            if text.target == module:
                outputs[text.out] = text.text(blocks[module])
    return outputs


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if a checked-in output is out of date")
    args = parser.parse_args(argv)
    stale = []
    outputs = list(generate_all().items())
    outputs += [(table.out, generate_methods(table)) for table in METHOD_TABLES_OUT]
    for out_rel, text in outputs:
        path = ROOT / out_rel
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if args.check:
            if current != text:
                stale.append(out_rel)
                diff = difflib.unified_diff(
                    (current or "").splitlines(), text.splitlines(), out_rel, f"{out_rel} (generated)", lineterm=""
                )
                lines = list(diff)
                sys.stderr.write("\n".join(lines[:60]) + ("\n..." if len(lines) > 60 else "") + "\n")
        elif current != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {out_rel}")
        else:
            print(f"{out_rel} is up to date")
    if stale:
        sys.stderr.write(
            f"\n{GENERATOR} --check: out of date: {', '.join(stale)}.\n"
            f"The schema or the generator changed; run `python3 {GENERATOR}` and commit the result.\n"
        )
        return 1
    if args.check:
        print("generated schema types are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
