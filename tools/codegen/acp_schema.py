"""Load the ACP JSON Schema into a small, language-neutral intermediate representation.

The Agent Client Protocol publishes its wire format as a JSON Schema (draft 2020-12)
produced by `schemars` from the official Rust crate.  This module turns that schema into
a handful of plain dataclasses that code emitters (Rust today; Python TypedDicts and
TypeScript later) can walk without knowing anything about JSON Schema.

Standard library only.  Entry point: :func:`load`.

Intermediate representation
===========================

Type expressions (what a field, array item, map value or union variant holds):

* :class:`Prim`       -- ``string`` / ``integer`` / ``number`` / ``boolean`` plus the schema
                         ``format`` (``int64``, ``uint32``, ``double``, ``uri``, ...).
* :class:`Ref`        -- a named definition (always one of ``Schema.definitions``).
* :class:`Array`      -- a JSON array of one item type.
* :class:`MapOf`      -- a JSON object used as a string-keyed map (``additionalProperties: <schema>``).
* :class:`JsonObject` -- a free-form JSON object (``additionalProperties: true``), e.g. ``_meta``.
* :class:`AnyValue`   -- any JSON value (``{}``).
* :class:`Null`       -- the JSON ``null`` (only as a variant of an untagged union).
* :class:`Nullable`   -- ``T | null`` (``type: [T, "null"]`` or ``anyOf: [T, {type: null}]``).

Definitions (``Schema.definitions``, keyed by name, in schema order; types lifted out of a
definition come right after it):

* :class:`Struct`       -- an object with named :class:`Field` s; unknown fields are always
                           allowed on the wire.  A struct may also carry a ``union`` part
                           (:class:`UnionPart`): the object's oneOf/anyOf, whose variant
                           fields live in the same JSON object as the struct's own fields.
* :class:`StringEnum`   -- a closed or open set of string constants.
* :class:`IntEnum`      -- a set of integer constants, usually open (``ErrorCode``).
* :class:`TaggedUnion`  -- variants told apart by a string property (the *tag*): either a
                           ``oneOf`` with ``discriminator.propertyName`` or an ``anyOf`` whose
                           variants carry a ``const`` on a common property.  Each tagged
                           variant's payload is a struct whose fields sit next to the tag.
                           Optionally one *default* variant (no tag; chosen when the tag is
                           absent or unrecognised) and one *other* variant (any other tag
                           string; free-form).
* :class:`UntaggedUnion` -- variants told apart by shape (``anyOf`` without a tag).
* :class:`Newtype`      -- a named primitive used as an identifier (``SessionId``: a string).
* :class:`Alias`        -- a plain name for a type expression (``ProtocolVersion`` = uint16,
                           ``ExtRequest`` = any JSON value).

Unions embedded in an object (``Struct.union``) are lifted into their own definition with
``embedded_in`` set to the parent's name; their "other" variant then only carries the tag
value, the remaining properties belonging to the parent.

Methods (``Schema.methods``): one :class:`Method` per (wire method, kind), found from the
``x-method`` / ``x-side`` annotations and from the JSON-RPC envelope definitions, which say
whether a definition is request params, a response result, or notification params.  They are
the one method table of every language: its key (``session_new``), the handler / peer method
name (``new_session``, from the params type's name), whether it is unstable and whether it
belongs to the protocol's baseline.  Methods are ordered by side, then wire name.

JSON-RPC envelope definitions (``AgentRequest``, ``ClientResponse``, ...) are not part of the
IR: their names are listed in ``Schema.skipped``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union


class SchemaError(Exception):
    """The schema uses a construct this loader does not understand."""


# --------------------------------------------------------------------------------------
# Type expressions


@dataclass(frozen=True)
class Prim:
    """A JSON primitive: kind is ``string``, ``integer``, ``number`` or ``boolean``."""

    kind: str
    format: Optional[str] = None


@dataclass(frozen=True)
class Ref:
    """A reference to the definition called ``name``."""

    name: str


@dataclass(frozen=True)
class Array:
    item: "TypeExpr"


@dataclass(frozen=True)
class MapOf:
    """A JSON object used as a map from string keys to ``value``."""

    value: "TypeExpr"


@dataclass(frozen=True)
class JsonObject:
    """A free-form JSON object (any keys, any values)."""


@dataclass(frozen=True)
class AnyValue:
    """Any JSON value."""


@dataclass(frozen=True)
class Null:
    """The JSON null value."""


@dataclass(frozen=True)
class Nullable:
    """``inner`` or JSON null."""

    inner: "TypeExpr"


TypeExpr = Union[Prim, Ref, Array, MapOf, JsonObject, AnyValue, Null, Nullable]


# --------------------------------------------------------------------------------------
# Definitions


@dataclass
class Field:
    """One property of an object.

    ``wire_name``: the JSON property name.  ``required``: listed in ``required``.
    ``type``: may be :class:`Nullable` (the property may be JSON null).
    ``default``: the schema ``default`` (JSON value) or ``None`` when there is none (check
    ``has_default``).  ``lenient``: ``x-deserialize-default-on-error`` -- a value that does
    not parse is replaced by the default/absent value instead of failing the whole message.
    ``skip_invalid_items``: ``x-deserialize-skip-invalid-items`` -- array items that do not
    parse are dropped.  ``null_default``: ``x-deserialize-default-on-null`` -- a JSON null
    reads as the type's default (an empty array), though the property stays required.
    """

    wire_name: str
    type: TypeExpr
    required: bool
    doc: str = ""
    has_default: bool = False
    default: Any = None
    lenient: bool = False
    skip_invalid_items: bool = False
    null_default: bool = False


@dataclass
class Definition:
    name: str
    doc: str = ""


@dataclass
class UnionPart:
    """The oneOf/anyOf part of an object.  ``union``: the lifted union definition's name.
    ``field``: a name for the part (``kind`` for a ``type`` tag, else the tag's wire name, or
    a word the variants share such as ``scope``); emitters case it as they like."""

    union: str
    field: str
    doc: str = ""


@dataclass
class Struct(Definition):
    """An object.  ``fields`` in schema order.  ``inline_of``: set when this struct was
    lifted from an inline schema inside definition ``inline_of``.  ``method``/``method_kind``
    are filled from ``x-method`` for params/result definitions."""

    fields: list[Field] = field(default_factory=list)
    union: Optional[UnionPart] = None
    inline_of: Optional[str] = None
    method: Optional[str] = None
    method_kind: Optional[str] = None  # "request" | "response" | "notification"
    side: Optional[str] = None  # x-side: "agent" | "client" | "protocol" | "both"


@dataclass
class EnumValue:
    """A constant: ``value`` is the wire value; ``title`` the schema title, if any."""

    value: Any
    doc: str = ""
    title: Optional[str] = None


@dataclass
class StringEnum(Definition):
    """``open``: the schema itself admits any other string (a titled catch-all variant)."""

    values: list[EnumValue] = field(default_factory=list)
    open: bool = False
    open_title: Optional[str] = None
    open_doc: str = ""


@dataclass
class IntEnum(Definition):
    values: list[EnumValue] = field(default_factory=list)
    format: Optional[str] = None
    open: bool = False
    open_title: Optional[str] = None
    open_doc: str = ""


@dataclass
class TaggedVariant:
    """``tag``: the tag's wire value.  ``payload``: name of the struct holding the fields that
    sit next to the tag, or ``None`` for a variant that is only the tag."""

    tag: str
    payload: Optional[str]
    doc: str = ""


@dataclass
class DefaultVariant:
    """The tag-less variant of a tagged ``anyOf``: used when the tag is absent or matches no
    tagged variant (``McpServer`` stdio, ``AuthMethod`` agent).  ``payload``: struct name."""

    title: str
    payload: str
    doc: str = ""


@dataclass
class AbsentVariant:
    """The variant chosen when the tag property is absent or JSON null (and nothing else:
    an unknown tag string is the *other* variant).  It carries no fields of its own."""

    title: str
    doc: str = ""


@dataclass
class OtherVariant:
    """The catch-all variant (any tag string not listed), whose content is free-form but for
    ``required``: the properties (besides the tag) it must have, each with what its value must
    be (``"string"``, or ``"any"``)."""

    title: str
    doc: str = ""
    required: list[tuple[str, str]] = field(default_factory=list)
    #: Alternatives (an ``anyOf`` of objects, such as an elicitation's scopes), each a
    #: ``required`` of its own: at least one must hold.
    one_of: list[list[tuple[str, str]]] = field(default_factory=list)
    #: The definitions those alternatives are, where each is one (for the languages that
    #: type the catch-all variant as one of them).
    one_of_refs: list[str] = field(default_factory=list)


@dataclass
class TaggedUnion(Definition):
    """``closed``: a ``oneOf`` with a discriminator (no default/other variant)."""

    tag: str = ""
    variants: list[TaggedVariant] = field(default_factory=list)
    default: Optional[DefaultVariant] = None
    other: Optional[OtherVariant] = None
    absent: Optional[AbsentVariant] = None
    closed: bool = True
    embedded_in: Optional[str] = None


@dataclass
class UntaggedVariant:
    title: str
    type: TypeExpr
    doc: str = ""


@dataclass
class UntaggedUnion(Definition):
    variants: list[UntaggedVariant] = field(default_factory=list)
    embedded_in: Optional[str] = None


@dataclass
class Newtype(Definition):
    """A named primitive (in practice: string identifiers)."""

    inner: Prim = field(default_factory=lambda: Prim("string"))


@dataclass
class Alias(Definition):
    target: TypeExpr = field(default_factory=AnyValue)


# Handler and peer method names come from the params type's name (`NewSessionRequest` ->
# `new_session`), as in the official SDKs; these are the exceptions.
_METHOD_NAME_OVERRIDES = {"SessionNotification": ["session", "update"]}

# The methods every agent and every client must implement (the protocol's baseline): the
# handler interfaces of every language declare them without a default.
BASELINE_PARAMS = {
    "InitializeRequest", "NewSessionRequest", "PromptRequest", "CancelNotification",
    "RequestPermissionRequest", "SessionNotification",
}


def words_of(type_name: str) -> list[str]:
    """``NewSessionRequest`` -> ``["new", "session"]`` (suffix Request/Notification dropped)."""
    if type_name in _METHOD_NAME_OVERRIDES:
        return list(_METHOD_NAME_OVERRIDES[type_name])
    base = re.sub(r"(Request|Notification)$", "", type_name)
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z][a-z0-9]*", base)]


@dataclass
class Method:
    """A protocol method.  ``side``: who handles it (x-side: agent / client / protocol /
    proxy).  ``params``: definition name of the params; ``result``: definition name of the
    result (``None`` for notifications).  ``key``: the wire name as an identifier
    (``session/new`` -> ``session_new``, ``$/cancel_request`` -> ``cancel_request``), the
    official SDKs' ``AGENT_METHODS`` keys.  ``words``: the handler / peer method's name, to be
    cased by each language (``["new", "session"]``).  ``unstable``: not in the stable schema.
    ``baseline``: every implementation of that side must handle it."""

    name: str
    side: str
    params: str
    result: Optional[str]
    notification: bool
    key: str = ""
    words: list[str] = field(default_factory=list)
    unstable: bool = False
    baseline: bool = False
    doc: str = ""

    @property
    def snake(self) -> str:
        return "_".join(self.words)

    @property
    def camel(self) -> str:
        return self.words[0] + "".join(w[:1].upper() + w[1:] for w in self.words[1:])


def method_key(wire: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", wire).strip("_")


@dataclass
class Schema:
    """The whole IR.  ``stable``: definition names of the stable schema, when this one was
    loaded next to it (anything else is unstable); ``protocol_version``: from the schema's
    directory (``schema/v1``); ``notes``: human-readable remarks about
    constructs that were simplified while loading."""

    definitions: dict[str, Definition]
    methods: list[Method]
    skipped: list[str]
    source: str
    stable: Optional[set[str]] = None
    protocol_version: int = 1
    notes: list[str] = field(default_factory=list)

    def get(self, name: str) -> Definition:
        return self.definitions[name]

    def field_names(self, name: str) -> list[str]:
        """Every wire property a value of struct ``name`` can own: its own fields, then
        those of its union part (see :meth:`union_field_names`)."""
        d = self.definitions[name]
        assert isinstance(d, Struct), name
        out = [f.wire_name for f in d.fields]
        if d.union:
            out += [n for n in self.union_field_names(d.union.union) if n not in out]
        return out

    def union_field_names(self, name: str) -> list[str]:
        """Every wire property a value of union ``name`` can own: the tag and all variant
        payload fields (recursively)."""
        u = self.definitions[name]
        out: list[str] = []
        payloads: list[str] = []
        if isinstance(u, TaggedUnion):
            out.append(u.tag)
            payloads = [v.payload for v in u.variants if v.payload]
            if u.default:
                payloads.append(u.default.payload)
        elif isinstance(u, UntaggedUnion):
            payloads = [v.type.name for v in u.variants if isinstance(v.type, Ref)]
        for p in payloads:
            out += [n for n in self.field_names(p) if n not in out]
        return out

    def required_names(self, name: str) -> list[str]:
        """The required wire properties of struct ``name`` (own fields only)."""
        d = self.definitions[name]
        assert isinstance(d, Struct), name
        return [f.wire_name for f in d.fields if f.required]

    def extensible(self) -> list[tuple[str, TaggedUnion]]:
        """The unions with a catch-all (*other*) variant, each with the definition that
        holds it (the union itself, or the struct it is embedded in), by that name: what
        the packages' narrowing guards cover."""
        return sorted(
            ((d.embedded_in or d.name, d) for d in self.definitions.values()
             if isinstance(d, TaggedUnion) and d.other is not None),
            key=lambda pair: pair[0],
        )


# --------------------------------------------------------------------------------------
# Loading

_ENVELOPE_KEYS = {"jsonrpc", "id", "method", "params", "result", "error"}
_IGNORED_KEYS = {
    "description",
    "title",
    "x-deserialize-default-on-error",
    "x-deserialize-skip-invalid-items",
    "x-deserialize-default-on-null",
    "x-docs-ignore",
    "x-side",
    "x-method",
    "minimum",
    "maximum",
    "minLength",
    "default",
}


def camel(text: str) -> str:
    """``agent_message_chunk`` / ``date-time`` / ``Parse error`` / ``searchAndReplace`` ->
    ``AgentMessageChunk`` / ``DateTime`` / ``ParseError`` / ``SearchAndReplace``."""
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", text) if p]
    if not parts:
        raise SchemaError(f"cannot make a name from {text!r}")
    out = "".join(p[0].upper() + p[1:] for p in parts)
    if out[0].isdigit():
        out = "V" + out
    return out


def _ref_name(ref: str) -> str:
    prefix = "#/$defs/"
    if not ref.startswith(prefix):
        raise SchemaError(f"unsupported $ref {ref!r}")
    return ref[len(prefix):]


def _doc(node: dict) -> str:
    return (node.get("description") or "").strip()


def _single_allof_ref(node: dict) -> Optional[str]:
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
        return _ref_name(all_of[0]["$ref"])
    return None


def _is_envelope(node: dict) -> bool:
    """A JSON-RPC message wrapper: its (or every branch's) properties are envelope keys."""
    if not node.get("x-docs-ignore"):
        return False
    branches = node.get("anyOf", [node]) if "properties" not in node else [node]
    for b in branches:
        props = b.get("properties")
        if not isinstance(props, dict) or not set(props) <= _ENVELOPE_KEYS:
            return False
    return True


class _Loader:
    def __init__(self, raw: dict, source: str):
        self.raw = raw
        self.defs_raw: dict = raw.get("$defs", {})
        self.source = source
        self.defs: dict[str, Definition] = {}
        self.notes: list[str] = []
        self.skipped: list[str] = []

    # -- type expressions ---------------------------------------------------------------

    def type_expr(self, node: dict, where: str) -> TypeExpr:
        if "$ref" in node:
            return Ref(_ref_name(node["$ref"]))
        ref = _single_allof_ref(node)
        if ref is not None:
            return Ref(ref)
        any_of = node.get("anyOf")
        if isinstance(any_of, list):
            non_null = [b for b in any_of if b.get("type") != "null"]
            if len(non_null) == 1 and len(any_of) == 2:
                return Nullable(self.type_expr(non_null[0], where))
            raise SchemaError(f"{where}: inline anyOf is only supported as `T | null`")
        if "oneOf" in node:
            raise SchemaError(f"{where}: inline oneOf in a property is not supported")
        t = node.get("type")
        if isinstance(t, list):
            rest = [x for x in t if x != "null"]
            if len(rest) != 1 or len(t) != 2:
                raise SchemaError(f"{where}: unsupported type list {t}")
            inner = dict(node)
            inner["type"] = rest[0]
            return Nullable(self.type_expr(inner, where))
        if t in ("string", "integer", "number", "boolean"):
            if "const" in node or "enum" in node:
                raise SchemaError(f"{where}: inline constants are not supported here")
            return Prim(t, node.get("format"))
        if t == "array":
            items = node.get("items")
            if not isinstance(items, dict):
                raise SchemaError(f"{where}: array without a single item schema")
            return Array(self.type_expr(items, where + "[]"))
        if t == "object":
            ap = node.get("additionalProperties")
            if node.get("properties"):
                raise SchemaError(f"{where}: inline object with properties is not supported here")
            if isinstance(ap, dict) and ap:
                return MapOf(self.type_expr(ap, where + "{}"))
            return JsonObject()
        if t is None:
            meaningful = set(node) - _IGNORED_KEYS
            if not meaningful:
                return AnyValue()
        if t == "null":
            return Null()
        raise SchemaError(f"{where}: unsupported schema {json.dumps(node)[:200]}")

    # -- definitions --------------------------------------------------------------------

    def load_all(self) -> None:
        for name, node in self.defs_raw.items():
            if _is_envelope(node):
                self.skipped.append(name)
                continue
            self.load_def(name, node)

    def add(self, d: Definition) -> None:
        if d.name in self.defs:
            raise SchemaError(f"duplicate definition name {d.name}")
        self.defs[d.name] = d

    def load_def(self, name: str, node: dict) -> None:
        doc = _doc(node)
        t = node.get("type")
        union_key = "oneOf" if "oneOf" in node else ("anyOf" if "anyOf" in node else None)

        if t == "object":
            ap = node.get("additionalProperties")
            if not node.get("properties") and not union_key and isinstance(ap, dict) and ap:
                self.add(Alias(name, doc, MapOf(self.type_expr(ap, name + "{}"))))
            else:
                self.load_struct(name, node, doc)
            return
        if t == "string" and not union_key and "const" not in node and "enum" not in node:
            self.add(Newtype(name, doc, Prim("string", node.get("format"))))
            return
        if t in ("integer", "number", "boolean") and not union_key:
            self.add(Alias(name, doc, Prim(t, node.get("format"))))
            return
        if t is None and not union_key and _single_allof_ref(node):
            # Another name for a definition (`InitializeProxyRequest` = `InitializeRequest`).
            self.add(Alias(name, doc, Ref(_single_allof_ref(node))))
            return
        if t is None and not union_key:
            meaningful = set(node) - _IGNORED_KEYS
            if meaningful:
                raise SchemaError(f"{name}: unsupported definition keys {sorted(meaningful)}")
            self.add(Alias(name, doc, AnyValue()))
            return
        if union_key and t is None:
            branches = node[union_key]
            enum = self.try_const_enum(name, doc, branches)
            if enum is not None:
                self.add(enum)
                return
            self.add_union(name, doc, node, union_key, embedded_in=None)
            return
        raise SchemaError(f"{name}: unsupported definition {json.dumps(node)[:200]}")

    def try_const_enum(self, name: str, doc: str, branches: list) -> Optional[Definition]:
        kinds = set()
        values: list[EnumValue] = []
        open_branch = None
        for b in branches:
            bt = b.get("type")
            if "const" in b and bt in ("string", "integer"):
                kinds.add(bt)
                values.append(EnumValue(b["const"], _doc(b), b.get("title")))
            elif bt in ("string", "integer") and set(b) <= {"type", "title", "description", "format"}:
                if open_branch is not None:
                    return None
                kinds.add(bt)
                open_branch = b
            else:
                return None
        if len(kinds) != 1 or not values:
            return None
        kind = kinds.pop()
        if kind == "string":
            return StringEnum(
                name,
                doc,
                values,
                open=open_branch is not None,
                open_title=(open_branch or {}).get("title"),
                open_doc=_doc(open_branch or {}),
            )
        fmt = {b.get("format") for b in branches}
        if len(fmt) != 1:
            raise SchemaError(f"{name}: integer constants with mixed formats")
        return IntEnum(
            name,
            doc,
            values,
            format=fmt.pop(),
            open=open_branch is not None,
            open_title=(open_branch or {}).get("title"),
            open_doc=_doc(open_branch or {}),
        )

    def load_fields(self, name: str, node: dict) -> list[Field]:
        required = list(node.get("required", []))
        props = node.get("properties", {}) or {}
        for r in required:
            if r not in props:
                raise SchemaError(f"{name}: required property {r!r} is not declared")
        fields = []
        for pname, pnode in props.items():
            fields.append(
                Field(
                    wire_name=pname,
                    type=self.type_expr(pnode, f"{name}.{pname}"),
                    required=pname in required,
                    doc=_doc(pnode),
                    has_default="default" in pnode,
                    default=pnode.get("default"),
                    lenient=bool(pnode.get("x-deserialize-default-on-error")),
                    skip_invalid_items=bool(pnode.get("x-deserialize-skip-invalid-items")),
                    null_default=bool(pnode.get("x-deserialize-default-on-null")),
                )
            )
        return fields

    def load_struct(self, name: str, node: dict, doc: str, inline_of: Optional[str] = None) -> Struct:
        allowed = {
            "type", "properties", "required", "description", "title", "additionalProperties",
            "x-side", "x-method", "oneOf", "anyOf", "discriminator", "unevaluatedProperties",
        }
        unknown = set(node) - allowed
        if unknown:
            raise SchemaError(f"{name}: unsupported object keys {sorted(unknown)}")
        ap = node.get("additionalProperties")
        if ap is False or (isinstance(ap, dict) and ap):
            raise SchemaError(f"{name}: objects with properties and typed/closed additionalProperties are not supported")
        s = Struct(name, doc, self.load_fields(name, node), inline_of=inline_of)
        s.method = node.get("x-method")
        s.side = node.get("x-side")
        self.add(s)  # first, so lifted types follow their parent in definition order
        union_key = "oneOf" if "oneOf" in node else ("anyOf" if "anyOf" in node else None)
        if union_key:
            s.union = self.add_union(name, "", node, union_key, embedded_in=name)
            tagged = self.defs.get(s.union.union) if s.union else None
            if isinstance(tagged, TaggedUnion) and tagged.tag in [f.wire_name for f in s.fields]:
                # The object declares its union's tag as a property of its own too
                # (`IdleStateUpdate.stopReason`): the union part owns it.
                s.fields = [f for f in s.fields if f.wire_name != tagged.tag]
                self.notes.append(f"{name}: `{tagged.tag}` is read as the tag of its union part")
        return s

    def find_tag(self, name: str, node: dict, branches: list) -> Optional[str]:
        disc = node.get("discriminator")
        if isinstance(disc, dict) and disc.get("propertyName"):
            return disc["propertyName"]
        candidates: dict[str, int] = {}
        for b in branches:
            for pname, pnode in (b.get("properties") or {}).items():
                if "const" in pnode and pnode.get("type") == "string":
                    candidates[pname] = candidates.get(pname, 0) + 1
        if not candidates:
            return None
        if len(candidates) > 1:
            raise SchemaError(f"{name}: ambiguous union tag {sorted(candidates)}")
        return next(iter(candidates))

    def add_union(
        self, name: str, doc: str, node: dict, union_key: str, embedded_in: Optional[str]
    ) -> Optional[UnionPart]:
        """Register the oneOf/anyOf of ``node``.  Standalone (``embedded_in`` is None): the
        union is definition ``name``.  Embedded in object ``name``: the union is lifted into
        its own definition and the returned :class:`UnionPart` says where it lives."""
        branches = node[union_key]
        tag = self.find_tag(name, node, branches)
        if tag is not None:
            part_field = "kind" if tag == "type" else tag
            union_name = name if embedded_in is None else name + camel(part_field)
            u = TaggedUnion(union_name, doc, tag=tag, closed=(union_key == "oneOf"), embedded_in=embedded_in)
            self.add(u)  # before its lifted payload structs, for a readable order
            for b in branches:
                self.add_tagged_variant(u, name, b)
            if u.closed and (u.default or u.other):
                raise SchemaError(f"{name}: oneOf discriminator with a catch-all variant")
            if not embedded_in:
                return None
            return UnionPart(u.name, part_field, f"The part of this object selected by its `{tag}` property.")

        variants = []
        for b in branches:
            ref = _single_allof_ref(b)
            title = b.get("title")
            if ref and set(b) - {"allOf", "title", "description"}:
                raise SchemaError(f"{name}: untagged variant with a $ref and more")
            if not ref and b.get("type") == "object" and b.get("properties") and title:
                # An inline object variant (`MessageMcpResponse`'s Result / Error): lifted.
                ref = self.lift_inline_struct(name, camel(title), b, exclude=None)
            texpr = Ref(ref) if ref else self.type_expr(b, f"{name}.{title}")
            if not title:
                if not isinstance(texpr, Ref):
                    raise SchemaError(f"{name}: untagged variant without a title")
                title = texpr.name
            variants.append(UntaggedVariant(camel(title), texpr, _doc(b)))
        if embedded_in is None:
            self.add(UntaggedUnion(name, doc, variants))
            return None

        refs = [v.type.name for v in variants if isinstance(v.type, Ref)]
        if len(refs) != len(variants):
            raise SchemaError(f"{name}: embedded untagged union with non-object variants")
        # Name an embedded untagged union after what its variants' names share:
        # ElicitationSessionScope | ElicitationRequestScope -> `ElicitationScope`, field `scope`.
        words = [re.findall(r"[A-Z][a-z0-9]*", r) for r in refs]
        prefix = _common(words)
        suffix = _common([w[::-1] for w in words])[::-1]
        if prefix and suffix and len(prefix) + len(suffix) < min(len(w) for w in words):
            union_name, part_field = "".join(prefix + suffix), suffix[-1].lower()
        else:
            union_name, part_field = f"{name}Variant", "variant"
        existing = self.defs.get(union_name)
        shareable = (
            isinstance(existing, UntaggedUnion)
            and existing.embedded_in is not None
            and [(v.title, v.type) for v in existing.variants] == [(v.title, v.type) for v in variants]
        )
        if not shareable and (union_name in self.defs or union_name in self.defs_raw):
            union_name = name + camel(part_field)
        if not shareable:
            vdoc = " or ".join(f"`{r}`" for r in refs)
            self.add(UntaggedUnion(union_name, f"One of {vdoc}, told apart by their required properties.",
                                   variants, embedded_in=name))
        return UnionPart(union_name, part_field, f"The part of this object that is one of {len(refs)} shapes.")

    def catch_all_required(self, b: dict, tag: str) -> list[tuple[str, str]]:
        """A catch-all variant's (or one of its alternatives') required properties besides
        the tag: a string (or a string identifier) must be a string; anything else is only
        required."""
        props = b.get("properties") or {}
        required = []
        for wire in b.get("required") or []:
            if wire == tag:
                continue
            node = props.get(wire) or {}
            ref = node.get("$ref") and _ref_name(node["$ref"]) or _single_allof_ref(node)
            target = self.defs_raw.get(ref, {}) if ref else node
            required.append((wire, "string" if target.get("type") == "string" and "const" not in target else "any"))
        return required

    def catch_all_alternatives(self, b: dict, tag: str) -> list[list[tuple[str, str]]]:
        """A catch-all variant's ``anyOf`` of objects (each a ``$ref``): their required
        properties, one list per alternative."""
        alternatives = []
        for branch in b.get("anyOf") or b.get("oneOf") or []:
            ref = _single_allof_ref(branch) or (branch.get("$ref") and _ref_name(branch["$ref"]))
            target = self.defs_raw.get(ref) if ref else branch
            if not isinstance(target, dict) or target.get("type") != "object":
                raise SchemaError(f"catch-all alternative {branch.get('title')!r} is not an object")
            alternatives.append(self.catch_all_required(target, tag))
        return alternatives

    def catch_all_alternative_refs(self, b: dict) -> list[str]:
        """The definitions a catch-all variant's alternatives are, if each is one."""
        branches = b.get("anyOf") or b.get("oneOf") or []
        refs = [_single_allof_ref(branch) or (branch.get("$ref") and _ref_name(branch["$ref"])) for branch in branches]
        return refs if all(refs) else []

    def add_tagged_variant(self, u: TaggedUnion, name: str, b: dict) -> None:
        tag = u.tag
        owner = u.embedded_in or name
        props = dict(b.get("properties") or {})
        tag_node = props.pop(tag, None)
        ref = _single_allof_ref(b)
        bdoc = _doc(b)
        if tag_node is not None and "const" in tag_node:
            value = tag_node["const"]
            if "anyOf" in b or "oneOf" in b:
                raise SchemaError(f"{name}: nested union in variant {value!r}")
            if ref and props:
                raise SchemaError(f"{name}: variant {value!r} has both a $ref and inline properties")
            payload = ref or (self.lift_inline_struct(owner, camel(value), b, exclude=tag) if props else None)
            u.variants.append(TaggedVariant(value, payload, bdoc))
        elif tag_node is not None and tag_node.get("type") == "null":
            # No tag at all (absent or null): a variant with nothing of its own.
            if u.absent is not None or ref or props:
                raise SchemaError(f"{name}: unsupported tag-less variant {b.get('title')!r}")
            u.absent = AbsentVariant(camel(b.get("title") or "none"), bdoc)
        elif tag_node is not None:
            # A catch-all: any other tag value, free-form content.
            if u.other is not None:
                raise SchemaError(f"{name}: more than one catch-all variant")
            u.other = OtherVariant(camel(b.get("title") or "other"), bdoc, self.catch_all_required(b, tag),
                                   self.catch_all_alternatives(b, tag), self.catch_all_alternative_refs(b))
            if u.embedded_in and ("anyOf" in b or "oneOf" in b or props):
                self.notes.append(
                    f"{name}: the catch-all `{tag}` variant keeps only the `{tag}` value; its other "
                    "properties (here: an anyOf of scopes) land in the parent's unknown-field map, "
                    "checked for the properties they require"
                )
        else:
            title = b.get("title")
            if not title:
                raise SchemaError(f"{name}: tag-less variant without a title")
            if u.default is not None:
                raise SchemaError(f"{name}: more than one tag-less variant")
            if ref and not props:
                payload = ref
            elif props and not ref:
                payload = self.lift_inline_struct(owner, camel(title), b, exclude=None)
            else:
                raise SchemaError(f"{name}: unsupported tag-less variant {title!r}")
            u.default = DefaultVariant(camel(title), payload, bdoc)

    def lift_inline_struct(self, owner: str, suffix: str, node: dict, exclude: Optional[str]) -> str:
        sub = {k: v for k, v in node.items() if k in ("type", "properties", "required", "description")}
        props = dict(sub.get("properties") or {})
        if exclude:
            props.pop(exclude, None)
        sub["properties"] = props
        sub["required"] = [r for r in sub.get("required", []) if r != exclude]
        sub["type"] = "object"
        name = f"{owner}{suffix}"
        if name in self.defs_raw or name in self.defs:
            raise SchemaError(f"lifted struct name {name} collides with a definition")
        self.load_struct(name, sub, _doc(node), inline_of=owner)
        return name

    # -- methods ------------------------------------------------------------------------

    def load_methods(self) -> list[Method]:
        roles: dict[str, set[str]] = {}

        def refs_in(node: Any) -> list[str]:
            out: list[str] = []
            if isinstance(node, dict):
                if "$ref" in node:
                    out.append(_ref_name(node["$ref"]))
                for v in node.values():
                    out += refs_in(v)
            elif isinstance(node, list):
                for v in node:
                    out += refs_in(v)
            return out

        def scan(node: Any) -> None:
            if isinstance(node, dict):
                props = node.get("properties")
                if isinstance(props, dict) and ("params" in props or "result" in props):
                    if "params" in props:
                        role = "request" if "id" in props else "notification"
                        for r in refs_in(props["params"]):
                            roles.setdefault(r, set()).add(role)
                    if "result" in props:
                        for r in refs_in(props["result"]):
                            roles.setdefault(r, set()).add("response")
                for k, v in node.items():
                    if k != "$defs":
                        scan(v)
            elif isinstance(node, list):
                for v in node:
                    scan(v)

        scan({k: v for k, v in self.raw.items() if k != "$defs"})
        for name in self.skipped:
            scan(self.defs_raw[name])

        by_method: dict[str, dict[str, list[str]]] = {}
        for name, node in self.defs_raw.items():
            method = node.get("x-method")
            if not method:
                continue
            r = roles.get(name)
            if not r or len(r) != 1:
                raise SchemaError(f"{name}: x-method {method!r} but envelope role is {r}")
            role = next(iter(r))
            by_method.setdefault(method, {}).setdefault(role, []).append(name)
            d = self.defs.get(name)
            if isinstance(d, Struct):
                d.method_kind = role
                d.side = node.get("x-side")

        methods: list[Method] = []
        for mname, parts in by_method.items():
            for role, names in parts.items():
                if len(names) != 1:
                    raise SchemaError(f"method {mname}: several {role} definitions {names}")
            req = parts.get("request", [None])[0]
            res = parts.get("response", [None])[0]
            note = parts.get("notification", [None])[0]
            if (req is None) != (res is None):
                raise SchemaError(f"method {mname}: request/response mismatch ({req}, {res})")
            for params, result, notification in ((req, res, False), (note, None, True)):
                if params is None:
                    continue
                side = self.defs_raw[params].get("x-side")
                if result is not None and self.defs_raw[result].get("x-side") != side:
                    raise SchemaError(f"method {mname}: params and result disagree on x-side")
                methods.append(Method(mname, side, params, result, notification, doc=_doc(self.defs_raw[params])))

        side_order = {"agent": 0, "client": 1, "protocol": 2, "proxy": 3}
        for m in methods:
            if m.side not in side_order:
                raise SchemaError(f"method {m.name}: unknown x-side {m.side!r}")
            m.key = method_key(m.name)
            m.words = words_of(m.params)
            m.baseline = m.params in BASELINE_PARAMS
        methods.sort(key=lambda m: (side_order[m.side], m.name, m.notification))
        for side in side_order:
            names = [(m.snake, m.notification) for m in methods if m.side == side]
            if len(set(names)) != len(names):
                raise SchemaError(f"two {side} methods share a name: {sorted(names)}")
        return methods


def _common(seqs: list[list[str]]) -> list[str]:
    out: list[str] = []
    for items in zip(*seqs):
        if all(x == items[0] for x in items):
            out.append(items[0])
        else:
            break
    return out


def load(schema_path: Union[str, Path], stable_path: Union[str, Path, None] = None) -> Schema:
    """Load ``schema_path`` into a :class:`Schema`.  With ``stable_path`` (the stable schema,
    when ``schema_path`` is the unstable one), definitions and methods it lacks are marked
    unstable."""
    schema_path = Path(schema_path)
    raw = json.loads(schema_path.read_text(encoding="utf-8"))
    loader = _Loader(raw, str(schema_path))
    loader.load_all()
    methods = loader.load_methods()
    stable = None
    if stable_path is not None:
        stable = set(json.loads(Path(stable_path).read_text(encoding="utf-8")).get("$defs", {}))
        for m in methods:
            m.unstable = m.params not in stable
    schema = Schema(
        definitions=loader.defs,
        methods=methods,
        skipped=loader.skipped,
        source=str(schema_path),
        stable=stable,
        protocol_version=int(re.fullmatch(r"v(\d+)", schema_path.parent.name).group(1)),
        notes=loader.notes,
    )
    _validate(schema)
    return schema


def _validate(schema: Schema) -> None:
    """Every Ref resolves; embedded unions do not fight their parent over property names."""

    def check(t: TypeExpr, where: str) -> None:
        if isinstance(t, Ref):
            if t.name not in schema.definitions:
                raise SchemaError(f"{where}: unresolved reference {t.name}")
        elif isinstance(t, (Array,)):
            check(t.item, where)
        elif isinstance(t, MapOf):
            check(t.value, where)
        elif isinstance(t, Nullable):
            check(t.inner, where)

    for d in schema.definitions.values():
        if isinstance(d, Struct):
            names = [f.wire_name for f in d.fields]
            if len(set(names)) != len(names):
                raise SchemaError(f"{d.name}: duplicate property")
            for f in d.fields:
                check(f.type, f"{d.name}.{f.wire_name}")
            if d.union:
                clash = set(names) & set(schema.union_field_names(d.union.union))
                if clash:
                    raise SchemaError(f"{d.name}: union part redeclares {sorted(clash)}")
        elif isinstance(d, UntaggedUnion):
            for v in d.variants:
                check(v.type, f"{d.name}.{v.title}")
        elif isinstance(d, TaggedUnion):
            for tv in d.variants:
                if tv.payload and tv.payload not in schema.definitions:
                    raise SchemaError(f"{d.name}: unresolved payload {tv.payload}")
        elif isinstance(d, Alias):
            check(d.target, d.name)


def _references(node: object) -> set[str]:
    """Every definition name a definition (or a part of one) refers to."""
    if isinstance(node, Ref):
        return {node.name}
    if isinstance(node, UnionPart):
        # An object's union part is a definition of its own, which may differ.
        return {node.union}
    if isinstance(node, (list, tuple)):
        return set().union(*(_references(item) for item in node)) if node else set()
    if isinstance(node, dict):
        return _references(list(node.values()))
    if dataclasses.is_dataclass(node):
        return _references([getattr(node, f.name) for f in dataclasses.fields(node)])
    return set()


def _shape(node: object) -> object:
    """A definition without its prose (the unstable schema links its docs to the draft)."""
    if isinstance(node, (list, tuple)):
        return tuple(_shape(item) for item in node)
    if isinstance(node, dict):
        return tuple((key, _shape(value)) for key, value in node.items())
    if dataclasses.is_dataclass(node):
        return (type(node).__name__,) + tuple(
            (f.name, _shape(getattr(node, f.name))) for f in dataclasses.fields(node) if f.name not in ("doc", "title")
        )
    return node


def inherited_fields(d: Struct, base: Definition, shared: set[str]) -> list[str]:
    """The properties (wire names) of ``d`` that ``base`` (the stable schema's definition of the
    same name) has as they are, holding only definitions in ``shared`` (those the two schemas
    have as they are): what an unstable type layered on the stable one inherits, for a
    language that can layer (TypeScript's ``extends``, a TypedDict's base class). Empty when
    either has a union part."""
    if not isinstance(base, Struct) or d.union or base.union:
        return []
    base_fields = {f.wire_name: f for f in base.fields}
    return [
        f.wire_name for f in d.fields
        if f.wire_name in base_fields
        and _shape(base_fields[f.wire_name]) == _shape(f)
        and _references(f) <= shared
    ]


def layered_on(d: Struct, schema: Schema, stable: Optional[Schema], shared: set[str]) -> Optional[tuple[Struct, list[str]]]:
    """For a struct of an unstable ``schema`` that the ``stable`` schema of the same version
    has too: the stable struct and the properties ``d`` inherits from it
    (:func:`inherited_fields`); None when there is nothing to layer on."""
    if stable is None or stable.protocol_version != schema.protocol_version:
        return None
    base = stable.definitions.get(d.name)
    inherited = inherited_fields(d, base, shared) if base else []
    return (base, inherited) if inherited else None


def same_shape(schema: Schema, stable: Schema) -> set[str]:
    """The definitions of ``schema`` shaped as the stable schema's are (their prose aside),
    though what they refer to may differ."""
    return {
        name for name, d in schema.definitions.items()
        if name in stable.definitions and _shape(stable.definitions[name]) == _shape(d)
    }


def same_as_stable(schema: Schema, stable: Schema, own: frozenset[str] = frozenset()) -> set[str]:
    """The definitions of ``schema`` (the unstable one) that are the stable schema's as they
    are (their prose aside), down to every definition they refer to: a language may take
    those from the stable types instead of defining them again. ``own``: definitions the
    language writes differently in the two all the same (so neither they nor what holds them
    are taken)."""
    same = same_shape(schema, stable) - own
    changed = True
    while changed:
        changed = False
        for name in list(same):
            if not _references(schema.definitions[name]) <= same:
                same.discard(name)
                changed = True
    return same
