#!/usr/bin/env python3
"""Generate Python TypedDicts for the ACP protocol types from the JSON Schema.

    python3 tools/codegen/gen_python.py           # (re)write the generated Python modules
    python3 tools/codegen/gen_python.py --check   # exit 1 if a checked-in file is out of date

Inputs: schema/v1/schema.json (``acp_engine.schema`` and ``acp_engine._generated.methods``) and
schema/v1/schema.unstable.json (the same in ``acp_engine.unstable``), loaded into the
language-neutral IR of ``acp_schema``; this module only decides how each IR node looks in
Python (the method table: ``gen_python_methods``).  The output imports on Python 3.9+
without typing_extensions and is clean under ``mypy --strict``.

Mapping (dict keys are the wire names):

* Struct -> ``TypedDict``; required and optional keys are split over two classes
  (``_FooBase`` + ``Foo(_FooBase, total=False)``).  An unstable module's struct that has
  every key of the stable one's as it is extends it (``Foo(_stable.Foo, total=False)``) with
  the keys it adds.  A struct with a union part becomes a
  ``Union`` of one TypedDict per variant, each inheriting ``_FooFields`` (the struct's own
  keys) and the variant's keys; lifted unions and inline payloads get no name of their own.
* TaggedUnion -> ``Union`` of per-variant TypedDicts (``ContentBlockText``) with the tag as
  ``Literal["text"]``; a default variant is its payload as is (no tag key).  Catch-all
  variants (any other tag value) are not typed, only mentioned in the docs.
* StringEnum / IntEnum -> ``Literal[...]`` (open: ``Union[Literal[...], str]``).
* UntaggedUnion -> ``Union[...]``; Newtype / Alias -> plain aliases (``SessionId = str``).
* Methods -> ``AGENT_METHODS`` / ``CLIENT_METHODS`` / ``PROTOCOL_METHODS`` /
  ``PROXY_METHODS``: wire name -> ``MethodInfo(key, kind, params, result, handler,
  unstable)``; ``PROTOCOL_VERSION`` from the schema's directory (``v1``).

Definitions are emitted in dependency order, so references need no quotes (a reference
inside a cycle would be quoted).
"""

from __future__ import annotations

import argparse
import difflib
import json
import keyword
import sys
from pathlib import Path
from typing import NamedTuple, Optional

sys.dont_write_bytecode = True  # no __pycache__ next to the sources
sys.path.insert(0, str(Path(__file__).resolve().parent))

import acp_schema as ir  # noqa: E402
import gen_python_methods  # noqa: E402
from text import METHOD_TABLES, docstring  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = "tools/codegen/gen_python.py"

# (schema, the stable schema it extends or None, types module, methods module, package
# prefix of the methods module), relative to ROOT.
TARGETS = [
    ("schema/v1/schema.json", None, "python/acp_engine/schema.py", "python/acp_engine/_generated/methods.py", ".."),
    (
        "schema/v1/schema.unstable.json",
        "schema/v1/schema.json",
        "python/acp_engine/unstable/schema.py",
        "python/acp_engine/unstable/_generated/methods.py",
        "...",
    ),
    # The ACP version 2 draft (acp_engine.experimental.v2): its connections speak v2 only.
    (
        "schema/v2/schema.json",
        None,
        "python/acp_engine/experimental/v2/schema.py",
        "python/acp_engine/experimental/v2/_generated/methods.py",
        "....",
    ),
]

TYPING_NAMES = {"Any", "Dict", "Final", "List", "Literal", "NamedTuple", "Optional", "TypedDict", "Union"}
# What an unstable module calls the stable module some of its TypedDicts add keys to.
STABLE = "_stable"
RESERVED = TYPING_NAMES | {
    STABLE, "MethodInfo", "PROTOCOL_VERSION", "AGENT_METHODS", "CLIENT_METHODS", "PROTOCOL_METHODS", "PROXY_METHODS",
}
PRIMS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
LINE = 100


class Key(NamedTuple):
    """One TypedDict key: wire name, Python type, required, doc."""

    wire: str
    type: str
    required: bool
    doc: str = ""


class Shape(NamedTuple):
    """How a payload contributes to a variant TypedDict: name suffix, base classes, own keys."""

    suffix: str
    bases: list[str]
    keys: list[Key]


def first_paragraph(text: str) -> str:
    return (text or "").strip().split("\n\n")[0].strip()


def comment(text: str, indent: str) -> list[str]:
    """The first paragraph of a description as ``#`` lines."""
    para = first_paragraph(text)
    return [f"{indent}# {ln}".rstrip() for ln in para.split("\n")] if para else []


def bracket(head: str, items: list[str], indent: str = "") -> str:
    """``head[a, b]`` on one line, or one item per line when that is too long; a Union of
    one item is that item."""
    if head == "Union" and len(items) == 1:
        return items[0]
    one = f"{head}[{', '.join(items)}]"
    if len(indent) + len(one) <= LINE:
        return one
    return f"{head}[\n" + "".join(f"{indent}    {i},\n" for i in items) + f"{indent}]"


def is_plain_key(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("__")


class PythonEmitter:
    def __init__(self, schema: ir.Schema, schema_rel: str, stable: Optional["PythonEmitter"] = None):
        self.s = schema
        self.schema_rel = schema_rel
        self.out: list[str] = []
        self.defined: set[str] = set()
        # The top-level names each definition brought (the class, its bases and variants).
        self.names_of: dict[str, set[str]] = {}
        # The stable module's, for definitions this schema has as they are: imported from it.
        self.stable = stable
        self.shared = ir.same_as_stable(schema, stable.s) if stable else set()
        self.imported: set[str] = set()
        self.layered = False  # whether a TypedDict extends the stable module's own
        self.uses: set[str] = set()
        self.variant_classes: dict[str, list[str]] = {}  # struct with a union part -> its variant classes
        self.union_variants: dict[str, list[tuple[str, str]]] = {}  # a tagged union -> [(suffix, class)]
        clash = RESERVED & set(schema.definitions)
        if clash:
            raise ir.SchemaError(f"definition names {sorted(clash)} clash with names the module uses")

    # -- types --------------------------------------------------------------------------

    def py(self, t: ir.TypeExpr) -> str:
        if isinstance(t, ir.Prim):
            return PRIMS[t.kind]
        if isinstance(t, ir.Ref):
            return t.name if t.name in self.defined else json.dumps(t.name)
        if isinstance(t, ir.Array):
            return self.use("List") + f"[{self.py(t.item)}]"
        if isinstance(t, ir.MapOf):
            return self.use("Dict") + f"[str, {self.py(t.value)}]"
        if isinstance(t, ir.JsonObject):
            self.use("Any")
            return self.use("Dict") + "[str, Any]"
        if isinstance(t, ir.AnyValue):
            return self.use("Any")
        if isinstance(t, ir.Null):
            return "None"
        if isinstance(t, ir.Nullable):
            return self.use("Optional") + f"[{self.py(t.inner)}]"
        raise ir.SchemaError(f"no Python type for {t}")

    def use(self, name: str) -> str:
        self.uses.add(name)
        return name

    def literal(self, values: list, indent: str = "") -> str:
        return bracket(self.use("Literal"), [json.dumps(v, ensure_ascii=False) for v in values], indent)

    # -- ordering -----------------------------------------------------------------------

    def folded(self, d: ir.Definition) -> bool:
        """Lifted unions and inline payload structs: emitted as part of their owner (but a
        standalone untagged union's inline variants are classes of their own)."""
        if isinstance(d, (ir.TaggedUnion, ir.UntaggedUnion)):
            return d.embedded_in is not None
        if not (isinstance(d, ir.Struct) and d.inline_of is not None):
            return False
        owner = self.s.definitions.get(d.inline_of)
        return not (isinstance(owner, ir.UntaggedUnion) and owner.embedded_in is None)

    def deps(self, d: ir.Definition) -> list[str]:
        out: list[str] = []

        def walk(t: ir.TypeExpr) -> None:
            if isinstance(t, ir.Ref):
                out.append(t.name)
            elif isinstance(t, ir.Array):
                walk(t.item)
            elif isinstance(t, ir.MapOf):
                walk(t.value)
            elif isinstance(t, ir.Nullable):
                walk(t.inner)

        if isinstance(d, ir.Struct):
            for f in d.fields:
                walk(f.type)
            if d.union:
                out.append(d.union.union)
        elif isinstance(d, ir.TaggedUnion):
            out += [v.payload for v in d.variants if v.payload]
            if d.default:
                out.append(d.default.payload)
        elif isinstance(d, ir.UntaggedUnion):
            for v in d.variants:
                walk(v.type)
        elif isinstance(d, ir.Alias):
            walk(d.target)
        return out

    def order(self) -> list[ir.Definition]:
        """Schema order, except that a definition comes after what it refers to."""
        done: set[str] = set()
        out: list[ir.Definition] = []

        def visit(name: str) -> None:
            if name in done:
                return
            done.add(name)
            d = self.s.get(name)
            for dep in self.deps(d):
                visit(dep)
            out.append(d)

        for name in self.s.definitions:
            visit(name)
        return [d for d in out if not self.folded(d)]

    # -- output -------------------------------------------------------------------------

    def emit(self, *lines: str) -> None:
        self.out.extend(lines)

    def keys_of(self, d: ir.Struct) -> list[Key]:
        return [Key(f.wire_name, self.py(f.type), f.required, f.doc) for f in d.fields]

    def typeddict(self, name: str, bases: list[str], keys: list[Key], doc: str) -> None:
        """``class name(bases)`` with ``keys``; required and optional keys in two classes."""
        for b in bases:
            if b not in self.defined and not b.startswith(f"{STABLE}."):
                raise ir.SchemaError(f"{name}: base class {b} is not defined yet (a cycle?)")
        required = [k for k in keys if k.required]
        optional = [k for k in keys if not k.required]
        if required and optional:
            base = f"_{name.lstrip('_')}Base"
            self.typeddict_part(base, bases, required, True, "")
            self.typeddict_part(name, [base], optional, False, doc)
        else:
            self.typeddict_part(name, bases, keys, bool(required) or not keys, doc)

    def typeddict_part(self, name: str, bases: list[str], keys: list[Key], total: bool, doc: str) -> None:
        if name in self.defined:
            raise ir.SchemaError(f"Python name {name} defined twice")
        if not all(is_plain_key(k.wire) for k in keys):
            # Functional syntax for keys that are not identifiers; the class inherits them.
            keys_name = f"_{name.lstrip('_')}Keys"
            items = "".join(f"    {json.dumps(k.wire)}: {k.type},\n" for k in keys)
            total_arg = "" if total else ", total=False"
            self.emit("", f'{keys_name} = {self.use("TypedDict")}("{keys_name}", {{\n{items}}}{total_arg})')
            self.defined.add(keys_name)
            bases, keys, total = [keys_name] + bases, [], True
        head = ", ".join(bases or [self.use("TypedDict")]) + ("" if total else ", total=False")
        self.emit("", "", f"class {name}({head}):")
        body = docstring(doc, "    ")
        if body and keys:
            body.append("")
        for k in keys:
            body += comment(k.doc, "    ") + [f"    {k.wire}: {k.type}"]
        self.emit(*(body or ["    pass"]))
        self.defined.add(name)

    def alias(self, name: str, value: str, doc: str) -> None:
        self.emit("", "", f"{name} = {value}")
        self.emit(*docstring(doc, ""))
        self.defined.add(name)

    # -- definitions --------------------------------------------------------------------

    def generate(self) -> str:
        for d in self.order():
            before = set(self.defined)
            if self.stable and d.name in self.shared:
                self.imported |= self.stable.names_of[d.name]
                self.defined |= self.stable.names_of[d.name]
            elif isinstance(d, ir.Struct):
                self.gen_struct(d)
            elif isinstance(d, (ir.StringEnum, ir.IntEnum)):
                lit = self.literal([v.value for v in d.values])
                if d.open:
                    lit = bracket(self.use("Union"), [lit, "str" if isinstance(d, ir.StringEnum) else "int"])
                self.alias(d.name, lit, ir_doc(d.doc, d.open_doc and f"Other values: {d.open_doc}"))
            elif isinstance(d, ir.TaggedUnion):
                variants = self.tagged_variants(d.name, d, [])
                self.union_variants[d.name] = variants
                classes = [c for _, c in variants]
                self.alias(d.name, bracket(self.use("Union"), classes), self.union_doc(d, classes))
            elif isinstance(d, ir.UntaggedUnion):
                self.alias(d.name, bracket(self.use("Union"), [self.py(v.type) for v in d.variants]), d.doc)
            elif isinstance(d, ir.Newtype):
                self.alias(d.name, PRIMS[d.inner.kind], d.doc)
            elif isinstance(d, ir.Alias):
                self.alias(d.name, self.py(d.target), d.doc)
            else:
                raise ir.SchemaError(f"unknown definition kind {d}")
            self.names_of[d.name] = self.defined - before
        self.gen_methods()
        return "\n".join(self.header() + self.out) + "\n"

    def union_doc(self, u: ir.TaggedUnion, classes: list[str]) -> str:
        notes = []
        if u.default:
            notes.append(f"A value without `{u.tag}` is a `{classes[-1]}`.")
        if u.other:
            notes.append(f"Other `{u.tag}` values may appear too (not typed here): {first_paragraph(u.other.doc)}")
        return ir_doc(u.doc, *notes)

    def method_doc(self, d: ir.Struct) -> str:
        if not d.method:
            return ""
        handler = {"agent": "the agent", "client": "the client"}.get(d.side or "", "either side")
        what = {"request": "Params of", "response": "Result of"}.get(d.method_kind or "", "Params of")
        kind = "notification" if d.method_kind == "notification" else "request"
        return f"{what} the `{d.method}` {kind} (handled by {handler})."

    def stable_base(self, d: ir.Struct) -> Optional[list[Key]]:
        """The keys an unstable module's struct adds to the stable one's, when it has every
        stable key as it is (a TypedDict cannot restate a key it inherits); None otherwise."""
        layering = ir.layered_on(d, self.s, self.stable.s if self.stable else None, self.shared)
        if layering is None or len(layering[1]) != len(layering[0].fields):
            return None
        inherited = layering[1]
        self.layered = True
        return [k for k in self.keys_of(d) if k.wire not in inherited]

    def gen_struct(self, d: ir.Struct) -> None:
        doc = ir_doc(d.doc, self.method_doc(d))
        added = self.stable_base(d)
        if added is not None:
            self.typeddict(d.name, [f"{STABLE}.{d.name}"], added, doc)
            return
        if not d.union:
            self.typeddict(d.name, [], self.keys_of(d), doc)
            return
        bases = []
        if d.fields:
            bases = [f"_{d.name}Fields"]
            self.typeddict(bases[0], [], self.keys_of(d), f"The keys every `{d.name}` has.")
        u = self.s.get(d.union.union)
        if isinstance(u, ir.TaggedUnion):
            variants = self.tagged_variants(d.name, u, bases)
            doc = ir_doc(doc, self.union_doc(u, [c for _, c in variants]) if u.default or u.other else "")
        else:
            variants = self.untagged_variants(d.name, u, bases)
        self.variant_classes[d.name] = [c for _, c in variants]
        self.alias(d.name, bracket(self.use("Union"), self.variant_classes[d.name]), doc)

    def payload_shapes(self, payload: Optional[str]) -> list[Shape]:
        """What a variant's payload adds to the variant's TypedDict(s)."""
        if payload is None:
            return [Shape("", [], [])]
        p = self.s.get(payload)
        if isinstance(p, ir.TaggedUnion):
            # A union as a variant's payload (v2's `state_update`): one shape per its variant.
            return [Shape(suffix, [c], []) for suffix, c in self.union_variants[payload]]
        assert isinstance(p, ir.Struct), payload
        if p.inline_of:
            if p.union:
                raise ir.SchemaError(f"{payload}: inline payload with its own union part")
            return [Shape("", [], self.keys_of(p))]
        if p.union:
            classes = self.variant_classes[payload]
            return [Shape(c[len(payload):], [c], []) for c in classes]
        return [Shape("", [payload], [])]

    def claim(self, name: str) -> str:
        """A variant class name; ``...Variant`` when a definition already has the name."""
        return name + "Variant" if name in self.s.definitions and not self.s.get(name).inline_of else name

    def tagged_variants(self, owner: str, u: ir.TaggedUnion, bases: list[str]) -> list[tuple[str, str]]:
        """Emit one TypedDict per variant (and per shape of its payload); [(suffix, class)]."""
        out = []
        arms = [(ir.camel(v.tag), v.tag, v.payload, v.doc) for v in u.variants]
        if u.default:
            arms.append((u.default.title, None, u.default.payload, u.default.doc))
        if u.absent:
            arms.append((u.absent.title, None, None, u.absent.doc))
        for vname, tag, payload, vdoc in arms:
            for shape in self.payload_shapes(payload):
                if tag is None and not bases and not shape.keys and len(shape.bases) == 1:
                    out.append((vname + shape.suffix, shape.bases[0]))  # the payload as is
                    continue
                tag_key = [Key(u.tag, self.literal([tag]), True)] if tag is not None else []
                name = self.claim(owner + vname + shape.suffix)
                if tag is None:
                    vdoc = ir_doc(vdoc, f"Used when `{u.tag}` is absent.")
                self.typeddict(name, bases + shape.bases, tag_key + shape.keys, vdoc)
                out.append((vname + shape.suffix, name))
        return out

    def untagged_variants(self, owner: str, u: ir.UntaggedUnion, bases: list[str]) -> list[tuple[str, str]]:
        out = []
        for v in u.variants:
            assert isinstance(v.type, ir.Ref), u.name
            for shape in self.payload_shapes(v.type.name):
                name = self.claim(owner + v.title + shape.suffix)
                self.typeddict(name, bases + shape.bases, shape.keys, v.doc)
                out.append((v.title + shape.suffix, name))
        return out

    # -- methods ------------------------------------------------------------------------

    def gen_methods(self) -> None:
        self.use("NamedTuple")
        self.use("Optional")
        self.emit(
            "",
            "",
            "class MethodInfo(NamedTuple):",
            '    """A protocol method: its ``key`` (``session_new``), whether it is a request or a',
            "    notification, the names of its params and result types (``result`` is None for",
            "    notifications), the handler / peer method's name, and whether it is unstable.\"\"\"",
            "",
            "    key: str",
            f'    kind: {self.literal(["request", "notification"])}',
            "    params: str",
            "    result: Optional[str]",
            "    handler: str",
            "    unstable: bool",
        )
        self.use("Dict")
        for const, side, doc in METHOD_TABLES:
            self.emit("", "", f"{const}: Dict[str, MethodInfo] = {{")
            seen = set()
            for m in self.s.methods:
                # Keyed by wire name: a method that is both a request and a notification
                # (proxy/successor) is listed as its request.
                if m.side != side or m.name in seen:
                    continue
                seen.add(m.name)
                kind = "notification" if m.notification else "request"
                args = ", ".join("None" if x is None else json.dumps(x) for x in (m.key, kind, m.params, m.result, m.snake))
                self.emit(f"    {json.dumps(m.name)}: MethodInfo({args}, {m.unstable}),")
            self.emit("}")
            self.emit(f'"""{doc}, keyed by wire method name."""')
        self.use("Final")
        self.emit(
            "",
            f"PROTOCOL_VERSION: Final = {self.s.protocol_version}",
            '"""The protocol version these types describe."""',
        )

    def header(self) -> list[str]:
        return [
            '"""ACP protocol types (schema v1) as TypedDicts keyed by wire names, plus method tables.',
            "",
            f"Generated by {GENERATOR} from {self.schema_rel}.",
            "Do not edit: change the schema or the generator, then run `make codegen`.",
            "",
            "A struct with variants (e.g. `CreateElicitationRequest`) is a Union of one TypedDict per",
            "variant.  Tagged unions admit only the tags listed; a newer peer may send others.",
            '"""',
            "",
            f"from typing import {', '.join(sorted(self.uses))}",
        ] + self.stable_import()

    def stable_import(self) -> list[str]:
        """The stable module's types this one has as they are (down to every type they hold),
        and the module itself for the TypedDicts that add keys to its own."""
        lines = []
        if self.layered:
            lines += ["", f"from .. import schema as {STABLE}  # the stable TypedDicts some here add keys to"]
        if not self.imported:
            return lines
        return lines + ["", "from ..schema import (  # the stable types, where this schema has them as they are"] + [
            f"    {name} as {name}," for name in sorted(self.imported)] + [")"]


def ir_doc(*parts: str) -> str:
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


# ---------------------------------------------------------------------------------------


def emitter(schema_rel: str, stable_rel: Optional[str], stable: Optional[PythonEmitter]) -> PythonEmitter:
    """The emitter of ``schema_rel``; ``stable``: the stable schema's, already generated."""
    schema = ir.load(ROOT / schema_rel, ROOT / stable_rel if stable_rel else None)
    return PythonEmitter(schema, schema_rel, stable)


def generate_methods(schema_rel: str, stable_rel: Optional[str], prefix: str) -> str:
    schema = ir.load(ROOT / schema_rel, ROOT / stable_rel if stable_rel else None)
    # A version 2 schema's connections speak version 2 (the engine checks and selects it).
    versions = (2,) if "/v2/" in schema_rel else None
    return gen_python_methods.generate(schema, schema_rel, GENERATOR, prefix, versions)


def write_or_check(targets: list[tuple[str, str]], check: bool, generator: str) -> int:
    """Write each (output, text), or with ``check`` report the stale ones and return 1."""
    stale = []
    for out_rel, text in targets:
        path = ROOT / out_rel
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if check:
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
            f"\n{generator} --check: out of date: {', '.join(stale)}.\n"
            f"The schema or the generator changed; run `python3 {generator}` and commit the result.\n"
        )
        return 1
    if check:
        print(f"{generator}: generated files are up to date")
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the checked-in output is out of date")
    args = parser.parse_args(argv)
    outputs = []
    emitted: dict[str, PythonEmitter] = {}  # the stable module's names feed the unstable one
    for schema_rel, stable_rel, types_rel, methods_rel, prefix in TARGETS:
        emitted[schema_rel] = emitter(schema_rel, stable_rel, emitted.get(stable_rel or ""))
        outputs.append((types_rel, emitted[schema_rel].generate()))
        outputs.append((methods_rel, generate_methods(schema_rel, stable_rel, prefix)))
    return write_or_check(outputs, args.check, GENERATOR)


if __name__ == "__main__":
    sys.exit(main())
