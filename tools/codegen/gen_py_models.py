#!/usr/bin/env python3
"""The pydantic models of ``acp_engine.compat.schema``: the official Python SDK's
``acp.schema``, name for name, from our schema.

    python3 tools/codegen/gen_py_models.py           # (re)write python/acp_engine/compat/schema.py
    python3 tools/codegen/gen_py_models.py --check   # exit 1 if it is out of date

From ``schema/v1/schema.unstable.json`` (the IR of ``acp_schema``):

* an object: a model (snake_case attributes, camelCase aliases, ``_meta`` as
  ``field_meta``, optional fields default None), lenient fields wrapped as the
  schema says (``x-deserialize-default-on-error``, ``-skip-invalid-items``);
* a tagged union: one model per variant, a subclass of its payload with the tag
  as a one-value Literal (``TextContentBlock(TextContent)``, ``type = "text"``),
  named as the official package names it (``VARIANT_NAMES``, else
  ``{Tag}{Union}``), and the union under the schema's name, discriminated by
  the tag when every variant carries one; a payload named like its variant
  becomes ``{Name}Base``;
* an object with a union part: one model per variant (the object's fields, the
  tag, the payload's fields) and the union under the object's name;
* string constants: a Literal (any string, when the set is open); identifiers
  and aliases: what they stand for.
"""

from __future__ import annotations

import argparse
import keyword
import re
import sys
from pathlib import Path
from typing import Optional

sys.dont_write_bytecode = True

import acp_schema as ir  # noqa: E402
from gen_python import write_or_check  # noqa: E402
from text import docstring  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = "tools/codegen/gen_py_models.py"
SCHEMA = "schema/v1/schema.unstable.json"
STABLE = "schema/v1/schema.json"
OUT = "python/acp_engine/compat/schema.py"

# The official package's names for union variants, by (union, tag); a default
# variant (no tag) by (union, None). Others: {Tag}{Union}.
VARIANT_NAMES = {
    ("ContentBlock", "text"): "TextContentBlock",
    ("ContentBlock", "image"): "ImageContentBlock",
    ("ContentBlock", "audio"): "AudioContentBlock",
    ("ContentBlock", "resource_link"): "ResourceContentBlock",
    ("ContentBlock", "resource"): "EmbeddedResourceContentBlock",
    ("ToolCallContent", "content"): "ContentToolCallContent",
    ("ToolCallContent", "diff"): "FileEditToolCallContent",
    ("ToolCallContent", "terminal"): "TerminalToolCallContent",
    ("ToolCallContent", "session"): "SessionToolCallContent",
    ("SessionUpdate", "user_message_chunk"): "UserMessageChunk",
    ("SessionUpdate", "agent_message_chunk"): "AgentMessageChunk",
    ("SessionUpdate", "agent_thought_chunk"): "AgentThoughtChunk",
    ("SessionUpdate", "tool_call"): "ToolCallStart",
    ("SessionUpdate", "tool_call_update"): "ToolCallProgress",
    ("SessionUpdate", "plan"): "AgentPlanUpdate",
    ("SessionUpdate", "plan_update"): "AgentPlanContentUpdate",
    ("SessionUpdate", "plan_removed"): "AgentPlanRemovedUpdate",
    ("SessionUpdate", "notice"): "SessionUpdateNotice",
    ("SessionUpdate", "compaction_update"): "SessionUpdateCompactionUpdate",
    ("SessionUpdate", "compaction_summary_chunk"): "SessionUpdateCompactionSummaryChunk",
    ("PlanUpdateContent", "items"): "PlanUpdateItems",
    ("PlanUpdateContent", "markdown"): "PlanUpdateMarkdown",
    ("McpServer", "http"): "HttpMcpServer",
    ("McpServer", "sse"): "SseMcpServer",
    ("McpServer", "acp"): "AcpMcpServer",
    ("AuthMethod", "terminal"): "TerminalAuthMethod",
    ("RequestPermissionOutcome", "cancelled"): "DeniedOutcome",
    ("RequestPermissionOutcome", "selected"): "AllowedOutcome",
    ("ElicitationPropertySchema", "string"): "ElicitationStringPropertySchema",
    ("ElicitationPropertySchema", "number"): "ElicitationNumberPropertySchema",
    ("ElicitationPropertySchema", "integer"): "ElicitationIntegerPropertySchema",
    ("ElicitationPropertySchema", "boolean"): "ElicitationBooleanPropertySchema",
    ("ElicitationPropertySchema", "array"): "ElicitationMultiSelectPropertySchema",
    ("NesSuggestion", "edit"): "NesEditSuggestionVariant",
    ("NesSuggestion", "jump"): "NesJumpSuggestionVariant",
    ("NesSuggestion", "rename"): "NesRenameSuggestionVariant",
    ("NesSuggestion", "searchAndReplace"): "NesSearchAndReplaceSuggestionVariant",
    ("SetSessionConfigOptionRequest", "boolean"): "SetSessionConfigOptionBooleanRequest",
    ("SetSessionConfigOptionRequest", None): "SetSessionConfigOptionSelectRequest",
    ("SessionConfigOption", "select"): "SessionConfigOptionSelect",
    ("SessionConfigOption", "boolean"): "SessionConfigOptionBoolean",
    ("CreateElicitationResponse", "accept"): "AcceptElicitationResponse",
    ("CreateElicitationResponse", "decline"): "DeclineElicitationResponse",
    ("CreateElicitationResponse", "cancel"): "CancelElicitationResponse",
    ("CreateElicitationRequest", "form"): "CreateFormElicitationRequest",
    ("CreateElicitationRequest", "url"): "CreateUrlElicitationRequest",
    ("ElicitationFormMode", "Session"): "ElicitationFormSessionMode",
    ("ElicitationFormMode", "Request"): "ElicitationFormRequestMode",
    ("ElicitationUrlMode", "Session"): "ElicitationUrlSessionMode",
    ("ElicitationUrlMode", "Request"): "ElicitationUrlRequestMode",
}
# The catch-all variant (any other tag), by union; others: Other{Union}.
OTHER_NAMES = {
    "CreateElicitationRequest": "CreateOtherElicitationRequest",
    "CreateElicitationResponse": "OtherElicitationResponse",
    "ElicitationPropertySchema": "ElicitationOtherPropertySchema",
}
# Other names the official package has for the same thing.
ALIASES = {
    "AgentAuthMethod": "AuthMethodAgent",
    "ElicitationMode": "Union[ElicitationFormMode, ElicitationUrlMode]",
}
PRIMITIVES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
PYDANTIC_NAMES = {"schema", "json", "dict", "copy", "construct", "validate", "fields", "model_config"}

HEADER = '''"""The ACP schema as pydantic models: the official ``acp.schema``, on our schema.

Generated by {generator} from {schema}.
Do not edit: change the schema or the generator, then run `make codegen`.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Dict, FrozenSet, List, Literal, Optional, Tuple, Union

from pydantic import ConfigDict, Field, ValidatorFunctionWrapHandler, field_validator

from ._schema_base import BaseModel, default_on_error, skip_invalid_items
'''


def camel(word: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\-/]", word))


def attr_name(wire: str) -> str:
    if wire == "_meta":
        return "field_meta"
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", wire).lower()
    if keyword.iskeyword(name) or name in PYDANTIC_NAMES:
        name = f"field_{name}"
    return name


class Emitter:
    def __init__(self, schema: ir.Schema) -> None:
        self.schema = schema
        self.defs = schema.definitions
        self.renamed: dict[str, str] = {}  # payload struct -> its class name (Base)
        self.variant_classes: list[list[str]] = []
        self.aliases: list[tuple[str, str, set[str]]] = []  # name, expression, names it uses
        self.classes: list[list[str]] = []
        self.names: set[str] = set()

    # -- types -------------------------------------------------------------

    def type_of(self, t: ir.TypeExpr) -> str:
        if isinstance(t, ir.Nullable):
            return f"Optional[{self.type_of(t.inner)}]"
        if isinstance(t, ir.Prim):
            return PRIMITIVES[t.kind]
        if isinstance(t, ir.Array):
            return f"List[{self.type_of(t.item)}]"
        if isinstance(t, ir.MapOf):
            return f"Dict[str, {self.type_of(t.value)}]"
        if isinstance(t, ir.JsonObject):
            return "Dict[str, Any]"
        if isinstance(t, ir.Null):
            return "None"
        if isinstance(t, ir.Ref):
            d = self.defs[t.name]
            if isinstance(d, ir.Newtype):
                return PRIMITIVES[d.inner.kind]
            if isinstance(d, ir.Alias):
                return self.type_of(d.target)
            if isinstance(d, ir.IntEnum):
                return "int"
            return self.renamed.get(t.name, t.name)
        return "Any"

    # -- fields ------------------------------------------------------------

    def field_lines(self, fields: list[ir.Field], owner: str) -> tuple[list[str], list[str]]:
        """The class body lines of ``fields`` and their validators."""
        body: list[str] = []
        lenient: list[str] = []
        skipping: list[str] = []
        for f in fields:
            name = attr_name(f.wire_name)
            t = self.type_of(f.type)
            if not f.required and not t.startswith("Optional["):
                t = f"Optional[{t}]"
            extras = [f'alias="{f.wire_name}"'] if name != f.wire_name else []
            annotation = f"Annotated[{t}, Field({', '.join(extras)})]" if extras else t
            if f.required:
                body.append(f"    {name}: {annotation}")
            elif f.has_default and isinstance(f.default, dict) and isinstance(f.type, (ir.Ref, ir.Nullable)):
                model = t.removeprefix("Optional[").removesuffix("]")
                body.append(f"    {name}: {annotation} = Field(default_factory=lambda: {model}.model_validate({f.default!r}))")
            elif f.has_default and f.default is not None:
                body.append(f"    {name}: {annotation} = {f.default!r}")
            else:
                body.append(f"    {name}: {annotation} = None")
            if f.doc:
                body += docstring(f.doc.strip(), "    ")
            if f.lenient and not f.required:
                lenient.append(name)
            if f.skip_invalid_items:
                skipping.append(name)
        validators: list[str] = []
        if lenient:
            names = ", ".join(f'"{n}"' for n in lenient)
            validators += [
                "",
                f'    @field_validator({names}, mode="wrap")',
                "    @classmethod",
                "    def _default_on_error(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:",
                "        return default_on_error(value, handler)",
            ]
        if skipping:
            names = ", ".join(f'"{n}"' for n in skipping)
            validators += [
                "",
                f'    @field_validator({names}, mode="wrap")',
                "    @classmethod",
                "    def _skip_invalid_items(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:",
                "        return skip_invalid_items(value, handler)",
            ]
        return body, validators

    def model(self, name: str, doc: str, fields: list[ir.Field], base: str = "BaseModel",
              tag: Optional[tuple[str, str]] = None) -> list[str]:
        self.names.add(name)
        lines = ["", "", f"class {name}({base}):"]
        if doc:
            lines += docstring(doc.strip(), "    ")
        body, validators = self.field_lines(fields, name)
        if tag is not None:
            wire, value = tag
            attr = attr_name(wire)
            alias = f', Field(alias="{wire}")' if attr != wire else ""
            body.append(f'    {attr}: Annotated[Literal["{value}"]{alias}] = "{value}"'
                        if alias else f'    {attr}: Literal["{value}"] = "{value}"')
        if not body and not validators:
            body = ["    pass"]
        return lines + body + validators

    # -- definitions -------------------------------------------------------

    def merged_fields(self, s: ir.Struct) -> list[ir.Field]:
        """An object's fields with its union part's folded in (all optional): how a
        union inside a variant's payload is read (one level of variants only)."""
        if s.union is None:
            return list(s.fields)
        fields = list(s.fields)
        seen = {f.wire_name for f in fields}
        u = self.defs[s.union.union]
        payloads: list[str] = []
        if isinstance(u, ir.TaggedUnion):
            fields.append(ir.Field(u.tag, ir.Prim("string"), False, u.doc))
            seen.add(u.tag)
            payloads = [v.payload for v in u.variants if v.payload] + ([u.default.payload] if u.default else [])
        elif isinstance(u, ir.UntaggedUnion):
            payloads = [v.type.name for v in u.variants if isinstance(v.type, ir.Ref)]
        for name in payloads:
            payload = self.defs[name]
            if isinstance(payload, ir.Struct):
                for f in self.merged_fields(payload):
                    if f.wire_name not in seen:
                        seen.add(f.wire_name)
                        fields.append(ir.Field(f.wire_name, f.type, False, f.doc, lenient=f.lenient))
        return fields

    def other_variant(self, union: str, u: ir.TaggedUnion, fields: list[ir.Field]) -> str:
        """The catch-all variant: any tag but the known ones, other fields kept."""
        name = OTHER_NAMES.get(union, f"Other{union}")
        known = ", ".join(f'"{v.tag}"' for v in u.variants)
        lines = self.model(name, u.other.doc if u.other else "", fields + [ir.Field(u.tag, ir.Prim("string"), True)])
        lines += [
            '    model_config = ConfigDict(extra="allow")',
            f'    _reserved_tag: ClassVar[Tuple[str, FrozenSet[str]]] = ("{u.tag}", frozenset({{{known}}}))',
        ]
        self.variant_classes.append(lines)
        return name

    def variant_name(self, union: str, tag: Optional[str]) -> str:
        return VARIANT_NAMES.get((union, tag)) or f"{camel(tag or 'default')}{union}"

    def tagged_union(self, u: ir.TaggedUnion) -> None:
        members = []
        for v in u.variants:
            name = self.variant_name(u.name, v.tag)
            payload = self.defs[v.payload] if v.payload else None
            if isinstance(payload, ir.Struct) and payload.union is not None:
                # A payload that is itself a union: its fields, folded in.
                fields = [f for f in self.merged_fields(payload) if f.wire_name != u.tag]
                self.variant_classes.append(self.model(name, v.doc, fields, tag=(u.tag, v.tag)))
                members.append(name)
                continue
            if v.payload is not None and v.payload == name:
                self.renamed[v.payload] = f"{name}Base"
            base = self.renamed.get(v.payload, v.payload) if v.payload else "BaseModel"
            self.variant_classes.append(self.model(name, v.doc, [], base=base, tag=(u.tag, v.tag)))
            members.append(name)
        if u.default is not None:
            members.append(self.renamed.get(u.default.payload, u.default.payload))
        if u.other is not None:
            members.append(self.other_variant(u.name, u, []))
        union = f"Union[{', '.join(members)}]" if len(members) > 1 else members[0]
        if u.default is None and u.other is None and len(members) > 1:
            union = f'Annotated[{union}, Field(discriminator="{attr_name(u.tag)}")]'
        self.aliases.append((u.name, union, set(members)))

    def struct_with_union(self, s: ir.Struct) -> None:
        """An object with a union part: a model per variant, the union under its name."""
        assert s.union is not None
        if s.name in self.names:
            return  # a union's variant already has this name (its fields folded in)
        u = self.defs[s.union.union]
        own = [f for f in s.fields]
        members = []
        if isinstance(u, ir.TaggedUnion):
            for v in u.variants:
                payload = self.defs[v.payload] if v.payload else None
                fields = own + (self.merged_fields(payload) if isinstance(payload, ir.Struct) else [])
                name = self.variant_name(s.name, v.tag)
                self.variant_classes.append(self.model(name, s.doc, fields, tag=(u.tag, v.tag)))
                members.append(name)
            if u.default is not None:
                payload = self.defs[u.default.payload]
                fields = own + (self.merged_fields(payload) if isinstance(payload, ir.Struct) else [])
                name = self.variant_name(s.name, None)
                self.variant_classes.append(self.model(name, s.doc, fields))
                members.append(name)
            if u.other is not None:
                members.append(self.other_variant(s.name, u, own))
        else:  # untagged: each variant's fields next to the object's
            assert isinstance(u, ir.UntaggedUnion)
            for v in u.variants:
                target = self.defs.get(v.type.name) if isinstance(v.type, ir.Ref) else None
                fields = own + (self.merged_fields(target) if isinstance(target, ir.Struct) else [])
                name = self.variant_name(s.name, v.title)
                self.variant_classes.append(self.model(name, s.doc, fields))
                members.append(name)
        self.aliases.append((s.name, f"Union[{', '.join(members)}]", set(members)))

    def generate(self) -> str:
        embedded = {d.name for d in self.defs.values()
                    if isinstance(d, (ir.TaggedUnion, ir.UntaggedUnion)) and d.embedded_in}
        # Tagged unions first: they decide which payloads are renamed.
        for d in self.defs.values():
            if isinstance(d, ir.TaggedUnion) and d.name not in embedded:
                self.tagged_union(d)
        for d in self.defs.values():
            if d.name in embedded:
                continue
            if isinstance(d, ir.Struct):
                if d.union is not None:
                    self.struct_with_union(d)
                else:
                    self.classes.append(self.model(self.renamed.get(d.name, d.name), d.doc, d.fields))
            elif isinstance(d, ir.UntaggedUnion):
                members = [self.type_of(v.type) for v in d.variants]
                self.aliases.append((d.name, f"Union[{', '.join(members)}]", set()))
            elif isinstance(d, ir.StringEnum):
                values = ", ".join(f'"{v.value}"' for v in d.values)
                self.aliases.append((d.name, f"Union[Literal[{values}], str]" if d.open else f"Literal[{values}]",
                                     set()))
        out = [HEADER.format(generator=GENERATOR, schema=SCHEMA)]
        for lines in self.classes + self.variant_classes:
            out += lines
        out += ["", ""]
        out += [f"{name} = {expression}" for name, expression, _ in self.aliases]
        out += [f"{alias} = {target}" for alias, target in ALIASES.items()]
        return "\n".join(out) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the checked-in output is out of date")
    args = parser.parse_args(argv)
    schema = ir.load(ROOT / SCHEMA, ROOT / STABLE)
    return write_or_check([(OUT, Emitter(schema).generate())], args.check, GENERATOR)


if __name__ == "__main__":
    sys.exit(main())
