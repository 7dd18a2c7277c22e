#!/usr/bin/env python3
"""Generate the Go package's protocol types and method table from the JSON Schema.

    python3 tools/codegen/gen_go.py           # (re)write go/schema_gen.go, go/methods_gen.go
    python3 tools/codegen/gen_go.py --check   # exit 1 if a checked-in file is out of date

Input: schema/v1/schema.json for package ``acpengine`` (``go/``) and schema/v2/schema.json
for package ``acpv2`` (``go/acpv2/``, ACP v2), loaded into the language-neutral IR of
``acp_schema``; this module only decides how each IR node looks in Go (the method table:
``gen_go_methods``). The generated code's JSON helpers are ``go/internal/wirejson``.

Mapping (Go names are the schema's names; JSON keys are the wire names):

* Struct -> a struct with ``json`` tags. Optional properties are pointers (or nil slices,
  maps and raw JSON) with ``omitempty``; a required array or map is written as ``[]`` /
  ``{}`` when nil. A struct with a union part gets the union as a field (``json:"-"``) whose
  properties share the struct's JSON object.
* TaggedUnion -> a struct with one pointer per variant (exactly one is set) and ``Unknown``
  (``Other`` when a variant is called unknown),
  the whole JSON of a value whose tag this schema does not list (kept as it is, so a newer
  peer's values pass through); a default variant is chosen when the tag is absent.
* UntaggedUnion -> a struct with one field per variant, told apart by shape (the JSON kind,
  the required properties), and ``Unknown`` for anything else.
* StringEnum / IntEnum -> a named string / integer type and its constants (any other value
  reads as is).  Newtype -> a named string; Alias -> a type alias.
* Unknown properties of a struct are dropped on reading (as the official TypeScript SDK's
  zod schemas do); unknown tags are kept.
* JSON is read and written with github.com/goccy/go-json (encoding/json's API and rules,
  measured 1.2x faster on a session/update and 1.8x on a 16 MiB file than encoding/json).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

sys.dont_write_bytecode = True  # no __pycache__ next to the sources
sys.path.insert(0, str(Path(__file__).resolve().parent))

import acp_schema as ir  # noqa: E402
import gen_go_methods  # noqa: E402
from gen_python import ROOT, write_or_check  # noqa: E402

GENERATOR = "tools/codegen/gen_go.py"
SCHEMA = "schema/v1/schema.json"
UNSTABLE_SCHEMA = "schema/v1/schema.unstable.json"
V2_SCHEMA = "schema/v2/schema.json"
V2_UNSTABLE_SCHEMA = "schema/v2/schema.unstable.json"
PACKAGE = "acpengine"
# Each generated package: its name, its schema (and the unstable one), its directory.
# ACP v2 (the draft) is package acpv2: a directory named v2 would read as the
# module's major version to Go's tools.
PACKAGES = [
    (PACKAGE, SCHEMA, UNSTABLE_SCHEMA, "go"),
    ("acpv2", V2_SCHEMA, V2_UNSTABLE_SCHEMA, "go/acpv2"),
]
# The engine's package, which the v2 package's method table calls.
ENGINE_IMPORT = "github.com/acp-engine/acp-engine/go"
# The generated types' JSON helpers, shared by the v1 and v2 packages.
WIREJSON = "github.com/acp-engine/acp-engine/go/internal/wirejson"

INT_FORMATS = {
    None: "int64",
    "int64": "int64",
    "int32": "int32",
    "int16": "int16",
    "uint64": "uint64",
    "uint32": "uint32",
    "uint16": "uint16",
    "uint8": "uint8",
    "uint": "uint64",
}


def go_doc(text: str, indent: str = "") -> list[str]:
    """A Go doc comment (none for empty text)."""
    text = (text or "").strip()
    if not text:
        return []
    return [f"{indent}// {ln}".rstrip() for ln in text.split("\n")]


def exported(words: str) -> str:
    """``agent_message_chunk`` / ``_meta`` / ``mimeType`` / ``date-time`` -> an exported Go name."""
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", words) if p]
    name = "".join(p[:1].upper() + p[1:] for p in parts)
    if not name or not name[0].isalpha():
        name = "X" + name
    return name


def first_paragraph(text: str) -> str:
    return (text or "").strip().split("\n\n")[0].strip()


class GoEmitter:
    def __init__(self, schema: ir.Schema, package: str = PACKAGE, source: str = SCHEMA):
        self.s = schema
        self.package = package
        self.source = source
        self.out: list[str] = []
        self.constants: dict[str, str] = {}

    # -- type expressions ------------------------------------------------------------------

    def go(self, t: ir.TypeExpr) -> str:
        if isinstance(t, ir.Prim):
            if t.kind == "string":
                return "string"
            if t.kind == "boolean":
                return "bool"
            if t.kind == "number":
                return "float64"
            return INT_FORMATS.get(t.format, "int64")
        if isinstance(t, ir.Ref):
            return t.name
        if isinstance(t, ir.Array):
            return "[]" + self.go(t.item)
        if isinstance(t, ir.MapOf):
            return "map[string]" + self.go(t.value)
        if isinstance(t, ir.JsonObject):
            return "map[string]any"
        if isinstance(t, ir.AnyValue):
            return "json.RawMessage"
        if isinstance(t, ir.Nullable):
            return self.optional(t.inner)
        raise ir.SchemaError(f"no Go type for {t}")

    def nilable(self, t: ir.TypeExpr) -> bool:
        """Whether the Go type of ``t`` has a nil of its own (no pointer needed)."""
        if isinstance(t, (ir.Array, ir.MapOf, ir.JsonObject, ir.AnyValue, ir.Nullable)):
            return True
        if isinstance(t, ir.Ref):
            d = self.s.get(t.name)
            if isinstance(d, ir.Alias):
                return self.nilable(d.target)
        return False

    def optional(self, t: ir.TypeExpr) -> str:
        return self.go(t) if self.nilable(t) else "*" + self.go(t)

    def empty_value(self, t: ir.TypeExpr) -> Optional[str]:
        """What a nil required array or map is written as."""
        if isinstance(t, ir.Array):
            return f"{self.go(t)}{{}}"
        if isinstance(t, (ir.MapOf, ir.JsonObject)):
            return f"{self.go(t)}{{}}"
        if isinstance(t, ir.Ref):
            d = self.s.get(t.name)
            if isinstance(d, ir.Alias):
                return self.empty_value(d.target)
        return None

    def emit(self, *lines: str) -> None:
        self.out.extend(lines)

    def constant(self, name: str, owner: str) -> str:
        if name in self.constants or name in self.s.definitions:
            raise ir.SchemaError(f"Go name {name} ({owner}) is used twice")
        self.constants[name] = owner
        return name

    # -- definitions -----------------------------------------------------------------------

    def generate(self) -> str:
        for d in self.s.definitions.values():
            if isinstance(d, ir.Struct):
                self.gen_struct(d)
            elif isinstance(d, ir.StringEnum):
                self.gen_enum(d, "string")
            elif isinstance(d, ir.IntEnum):
                self.gen_enum(d, INT_FORMATS.get(d.format, "int64"))
            elif isinstance(d, ir.TaggedUnion):
                self.gen_tagged_union(d)
            elif isinstance(d, ir.UntaggedUnion):
                self.gen_untagged_union(d)
            elif isinstance(d, ir.Newtype):
                self.emit("", *go_doc(d.doc), f"type {d.name} {self.go(d.inner)}")
            elif isinstance(d, ir.Alias):
                self.emit("", *go_doc(d.doc), f"type {d.name} = {self.go(d.target)}")
            else:
                raise ir.SchemaError(f"unknown definition kind {d}")
        self.emit(
            "",
            "// CurrentProtocolVersion is the protocol version these types describe.",
            f"const CurrentProtocolVersion ProtocolVersion = {self.s.protocol_version}",
        )
        return "\n".join(self.header() + self.out) + "\n"

    def header(self) -> list[str]:
        return [
            f"// Code generated by {GENERATOR} from {self.source}. DO NOT EDIT.",
            "// Change the schema or the generator, then run `make codegen`.",
            "",
            f"package {self.package}",
            "",
            "import (",
            '\tjson "github.com/goccy/go-json"',
            "",
            f'\t"{WIREJSON}"',
            ")",
        ]

    def method_doc(self, d: ir.Struct) -> str:
        if not d.method:
            return ""
        handler = {"agent": "the agent", "client": "the client"}.get(d.side or "", "either side")
        what = {"request": "Params of", "response": "Result of"}.get(d.method_kind or "", "Params of")
        kind = "notification" if d.method_kind == "notification" else "request"
        return f"{what} the `{d.method}` {kind} (handled by {handler})."

    def gen_struct(self, d: ir.Struct) -> None:
        doc = "\n\n".join(p for p in (d.doc.strip(), self.method_doc(d)) if p)
        if d.inline_of and not d.doc:
            doc = f"A variant's own properties in {d.inline_of}."
        self.emit("", *go_doc(f"{d.name}: {doc}" if doc else ""), f"type {d.name} struct {{")
        names = set()
        defaults = []
        for f in d.fields:
            name = exported(f.wire_name)
            if name in names:
                raise ir.SchemaError(f"{d.name}: two properties are {name} in Go")
            names.add(name)
            if f.required:
                gtype = self.go(f.type)
                tag = f.wire_name
                empty = self.empty_value(f.type)
                if empty:
                    defaults.append((name, empty))
            else:
                gtype = self.optional(f.type)
                tag = f"{f.wire_name},omitempty"
            self.emit(*go_doc(f.doc, "\t"), f'\t{name} {gtype} `json:"{tag}"`')
        if d.union:
            field = exported(d.union.field)
            if field in names:
                field += "Part"
            self.emit(*go_doc(d.union.doc, "\t"), f'\t{field} {d.union.union} `json:"-"`')
            self.gen_struct_with_union(d, field, defaults)
        elif defaults:
            self.emit("}")
            self.emit(
                "",
                "// MarshalJSON writes nil required arrays and maps as empty ones.",
                f"func (v {d.name}) MarshalJSON() ([]byte, error) {{",
                f"\ttype plain {d.name}",
                "\tp := plain(v)",
                *self.fill_defaults(defaults),
                "\treturn json.Marshal(p)",
                "}",
            )
        else:
            self.emit("}")
        self.emit(
            "",
            f"func (v *{d.name}) shapeKeys() []string {{ return {self.string_list(self.s.required_names(d.name))} }}",
        )

    def fill_defaults(self, defaults: list[tuple[str, str]]) -> list[str]:
        lines = []
        for name, empty in defaults:
            lines += [f"\tif p.{name} == nil {{", f"\t\tp.{name} = {empty}", "\t}"]
        return lines

    def gen_struct_with_union(self, d: ir.Struct, field: str, defaults: list[tuple[str, str]]) -> None:
        self.emit(
            "}",
            "",
            f"// MarshalJSON writes the struct's own properties and its {field} in one object.",
            f"func (v {d.name}) MarshalJSON() ([]byte, error) {{",
            f"\ttype plain {d.name}",
            "\tp := plain(v)",
            *self.fill_defaults(defaults),
            "\town, err := json.Marshal(p)",
            "\tif err != nil {",
            "\t\treturn nil, err",
            "\t}",
            f"\tpart, err := json.Marshal(v.{field})",
            "\tif err != nil {",
            "\t\treturn nil, err",
            "\t}",
            "\treturn wirejson.MergeObjects(own, part), nil",
            "}",
            "",
            f"// UnmarshalJSON reads the struct's own properties and its {field} from one object.",
            f"func (v *{d.name}) UnmarshalJSON(data []byte) error {{",
            f"\ttype plain {d.name}",
            "\tvar p plain",
            "\tif err := wirejson.Decode(data, &p); err != nil {",
            "\t\treturn err",
            "\t}",
            f"\tif err := wirejson.Decode(data, &p.{field}); err != nil {{",
            "\t\treturn err",
            "\t}",
            f"\t*v = {d.name}(p)",
            "\treturn nil",
            "}",
        )

    @staticmethod
    def string_list(values: list[str]) -> str:
        if not values:
            return "nil"
        return "[]string{" + ", ".join(json.dumps(v) for v in values) + "}"

    def gen_enum(self, d, base: str) -> None:
        doc = "\n\n".join(p for p in (d.doc.strip(), d.open and d.open_doc and f"Other values: {d.open_doc}") if p)
        self.emit("", *go_doc(f"{d.name}: {doc}" if doc else ""), f"type {d.name} {base}", "", "const (")
        for v in d.values:
            name = self.constant(d.name + exported(str(v.value if v.title is None or base == "string" else v.title)), d.name)
            self.emit(*go_doc(first_paragraph(v.doc), "\t"), f"\t{name} {d.name} = {json.dumps(v.value, ensure_ascii=False)}")
        self.emit(")")

    # -- unions ------------------------------------------------------------------------------

    def variant_field(self, u: ir.TaggedUnion, v: ir.TaggedVariant) -> str:
        return exported(v.tag)

    def gen_tagged_union(self, u: ir.TaggedUnion) -> None:
        doc = u.doc or (f"The `{u.tag}`-selected part of {u.embedded_in}." if u.embedded_in else "")
        self.emit(
            "",
            *go_doc(f"{u.name}: {doc}\n\nExactly one field is set." if doc else f"{u.name}: exactly one field is set."),
            f"type {u.name} struct {{",
        )
        fields = []
        for v in u.variants:
            name = self.variant_field(u, v)
            vdoc = first_paragraph(v.doc)
            prefix = f"`{u.tag}` is {json.dumps(v.tag)}"
            if v.payload:
                self.emit(*go_doc(f"{prefix}. {vdoc}".strip(), "\t"), f"\t{name} *{v.payload}")
            else:
                self.emit(*go_doc(f"{prefix} (no other properties). {vdoc}".strip(), "\t"), f"\t{name} bool")
            fields.append(name)
        default_field = None
        if u.default:
            default_field = exported(u.default.title)
            if default_field in fields:
                default_field += "Default"
            self.emit(
                *go_doc(f"No `{u.tag}` (or one not listed here, with this variant's required properties): {first_paragraph(u.default.doc)}".strip(), "\t"),
                f"\t{default_field} *{u.default.payload}",
            )
        absent_field = None
        if u.absent:
            absent_field = exported(u.absent.title)
            self.emit(*go_doc(f"`{u.tag}` absent or null. {first_paragraph(u.absent.doc)}".strip(), "\t"), f"\t{absent_field} bool")
        # A variant may itself be called "unknown" (StateUpdate): the kept JSON is then `Other`.
        unknown = "Other" if "Unknown" in fields else "Unknown"
        unknown_doc = f"A value whose `{u.tag}` this schema does not list: its JSON, kept as it is."
        if u.other:
            unknown_doc += " " + first_paragraph(u.other.doc)
        self.emit(*go_doc(unknown_doc, "\t"), f"\t{unknown} json.RawMessage", "}")

        # MarshalJSON
        self.emit("", f"// MarshalJSON writes the set variant with its `{u.tag}`.", f"func (v {u.name}) MarshalJSON() ([]byte, error) {{", "\tswitch {")
        key_json = json.dumps(json.dumps(u.tag))
        for variant, name in zip(u.variants, fields):
            tag_json = json.dumps(json.dumps(variant.tag))
            if variant.payload:
                self.emit(f"\tcase v.{name} != nil:", f'\t\treturn wirejson.Tagged({key_json}, {tag_json}, v.{name})')
            else:
                self.emit(f"\tcase v.{name}:", f'\t\treturn wirejson.Tagged({key_json}, {tag_json}, nil)')
        if default_field:
            self.emit(f"\tcase v.{default_field} != nil:", f"\t\treturn json.Marshal(v.{default_field})")
        if absent_field:
            self.emit(f"\tcase v.{absent_field}:", '\t\treturn []byte("{}"), nil')
        self.emit(f"\tcase v.{unknown} != nil:", f"\t\treturn v.{unknown}, nil", "\t}", f'\treturn nil, wirejson.EmptyUnion("{u.name}")', "}")

        # UnmarshalJSON
        self.emit(
            "",
            f"// UnmarshalJSON reads the variant its `{u.tag}` names.",
            f"func (v *{u.name}) UnmarshalJSON(data []byte) error {{",
            f"\t*v = {u.name}{{}}",
            f"\ttag, found, err := wirejson.TagOf(data, {json.dumps(u.tag)})",
            "\tif err != nil {",
            "\t\treturn err",
            "\t}",
        )
        if absent_field:
            self.emit("\tif !found {", f"\t\tv.{absent_field} = true", "\t\treturn nil", "\t}")
        self.emit("\tswitch {")
        for variant, name in zip(u.variants, fields):
            self.emit(f"\tcase found && tag == {json.dumps(variant.tag)}:")
            if variant.payload:
                self.emit(f"\t\tv.{name} = new({variant.payload})", f"\t\treturn wirejson.Decode(data, v.{name})")
            else:
                self.emit(f"\t\tv.{name} = true", "\t\treturn nil")
        if default_field:
            # An unlisted tag is a newer variant unless the value has the default's shape.
            self.emit(
                f"\tcase found && !wirejson.HasKeys(data, (*{u.default.payload}).shapeKeys(nil)):",
                f"\t\tv.{unknown} = append(json.RawMessage(nil), data...)",
                "\t\treturn nil",
            )
            self.emit("\tdefault:", f"\t\tv.{default_field} = new({u.default.payload})", f"\t\treturn wirejson.Decode(data, v.{default_field})")
        else:
            self.emit("\tdefault:", f"\t\tv.{unknown} = append(json.RawMessage(nil), data...)", "\t\treturn nil")
        self.emit("\t}", "}")

    def shape(self, t: ir.TypeExpr) -> str:
        """The check that JSON ``data`` has the shape of variant type ``t``."""
        if isinstance(t, ir.Null):
            return "wirejson.IsNull(data)"
        if isinstance(t, ir.Prim):
            return {
                "string": "wirejson.IsString(data)",
                "boolean": "wirejson.IsBool(data)",
                "number": "wirejson.IsNumber(data)",
                "integer": "wirejson.IsInteger(data)",
            }[t.kind]
        if isinstance(t, ir.Array):
            return "wirejson.IsArray(data)"
        if isinstance(t, ir.Ref):
            d = self.s.get(t.name)
            if isinstance(d, ir.Struct):
                return f"wirejson.HasKeys(data, (*{t.name}).shapeKeys(nil))"
            if isinstance(d, ir.Newtype):
                return "wirejson.IsString(data)"
            return "wirejson.IsObject(data)"
        return "true"

    def gen_untagged_union(self, u: ir.UntaggedUnion) -> None:
        doc = u.doc or (f"The part of {u.embedded_in} that is one of several shapes." if u.embedded_in else "")
        self.emit(
            "",
            *go_doc(f"{u.name}: {doc}\n\nAt most one field is set (none: JSON null, where allowed)." if doc else f"{u.name}: one of several shapes."),
            f"type {u.name} struct {{",
        )
        fields = []
        for v in u.variants:
            if isinstance(v.type, ir.Null):
                continue
            name = exported(v.title)
            fields.append((name, v))
            self.emit(*go_doc(first_paragraph(v.doc), "\t"), f"\t{name} {self.optional(v.type)}")
        self.emit("\t// Anything else: its JSON, kept as it is.", "\tUnknown json.RawMessage", "}")
        self.emit("", "// MarshalJSON writes the set variant.", f"func (v {u.name}) MarshalJSON() ([]byte, error) {{", "\tswitch {")
        for name, _ in fields:
            self.emit(f"\tcase v.{name} != nil:", f"\t\treturn json.Marshal(v.{name})")
        self.emit("\tcase v.Unknown != nil:", "\t\treturn v.Unknown, nil", "\t}")
        if any(isinstance(v.type, ir.Null) for v in u.variants):
            self.emit('\treturn []byte("null"), nil', "}")
        else:
            self.emit(f'\treturn nil, wirejson.EmptyUnion("{u.name}")', "}")
        self.emit(
            "",
            "// UnmarshalJSON reads the first variant whose shape the JSON has.",
            f"func (v *{u.name}) UnmarshalJSON(data []byte) error {{",
            f"\t*v = {u.name}{{}}",
            "\tswitch {",
        )
        if any(isinstance(v.type, ir.Null) for v in u.variants):
            self.emit("\tcase wirejson.IsNull(data):", "\t\treturn nil")
        for name, v in fields:
            self.emit(f"\tcase {self.shape(v.type)}:")
            inner = v.type
            if self.nilable(inner):
                self.emit(f"\t\treturn wirejson.Decode(data, &v.{name})")
            else:
                self.emit(f"\t\tv.{name} = new({self.go(inner)})", f"\t\treturn wirejson.Decode(data, v.{name})")
        self.emit("\t}", "\tv.Unknown = append(json.RawMessage(nil), data...)", "\treturn nil", "}")


def gofmt(text: str) -> str:
    """The text as gofmt writes it (it aligns struct fields and comments)."""
    tool = shutil.which("gofmt")
    if tool is None:
        raise SystemExit(f"{GENERATOR}: gofmt (the Go toolchain) is needed to generate the Go package")
    return subprocess.run([tool], input=text, capture_output=True, text=True, check=True).stdout


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the checked-in output is out of date")
    args = parser.parse_args(argv)
    outputs = []
    for package, stable, unstable, out in PACKAGES:
        schema = ir.load(ROOT / stable)
        wider = ir.load(ROOT / unstable, ROOT / stable)
        outputs += [
            (f"{out}/schema_gen.go", gofmt(GoEmitter(schema, package, stable).generate())),
            (f"{out}/methods_gen.go",
             gofmt(gen_go_methods.generate(schema, stable, GENERATOR, package, wider, unstable,
                                           "" if package == PACKAGE else ENGINE_IMPORT))),
        ]
    return write_or_check(outputs, args.check, GENERATOR)


if __name__ == "__main__":
    sys.exit(main())
