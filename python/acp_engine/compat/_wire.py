"""Params as wire JSON, at the cost a stream of updates can pay.

Params go on the wire as the official ``serialize_params`` dumps them: by
alias, None and defaults left out, a variant's tag kept. Two costs of doing
that with pydantic dominated a compat message:

- ``TaggedModel`` keeps the tag with a wrap serializer, a Python call for
  every tagged model in the tree. For the wire, each model class gets a
  second serializer, built once from its core schema with that serializer
  removed and its tags' defaults dropped (a field without a default is never
  left out as one): the same JSON, written by pydantic-core alone.
- A peer method built its params model (validating each argument again) and
  pydantic-core serialized its union fields slowly. A writer (``Writers``) hands the
  engine the params as a dict when every argument already is what its field
  takes (a ``str``, an ``int``, a ``bool``, an instance of one of the field's
  model classes, or a list of them): validating would keep each as it is.
  A model in it is its wire JSON bytes, which the engine writes as they are.
  Anything else builds the model, so a wrong argument fails with pydantic's
  ``ValidationError``, as in the official SDK.
"""

from __future__ import annotations

from typing import Annotated, Any, Callable, Dict, FrozenSet, List, NamedTuple, Optional, Tuple, Union, get_args, get_origin

import pydantic
from pydantic_core import SchemaSerializer

from ._schema_base import TaggedModel
from ._wire_models import engine_wire_json, fields_of, written_after_decline, written_by_engine

__all__ = ["Writers", "to_wire_json"]

_WIRE_SERIALIZERS: Dict[type, SchemaSerializer] = {}


def to_wire_json(model: pydantic.BaseModel) -> bytes:
    """``model`` as wire JSON bytes: by alias, without None and defaults, tags kept."""
    written = written_by_engine(model)
    return written if written is not None else _pydantic_wire_json(model)


def _declined_wire_json(model: pydantic.BaseModel) -> bytes:
    """``to_wire_json`` of a model the engine has just declined (not asked again
    unless its class was new)."""
    written = written_after_decline(model)
    return written if written is not None else _pydantic_wire_json(model)


def _pydantic_wire_json(model: pydantic.BaseModel) -> bytes:
    serializer = _WIRE_SERIALIZERS.get(type(model))
    if serializer is None:
        serializer = _WIRE_SERIALIZERS[type(model)] = _wire_serializer(type(model))
    return serializer.to_json(model, by_alias=True, exclude_none=True, exclude_defaults=True)


def _wire_serializer(model: type[pydantic.BaseModel]) -> SchemaSerializer:
    schema = model.__pydantic_core_schema__
    if not isinstance(schema, dict):  # deferred (defer_build): build it now
        model.model_rebuild()
        schema = model.__pydantic_core_schema__
    return SchemaSerializer(_without_tag_serializers(schema))


def _without_tag_serializers(node: Any) -> Any:
    """A copy of a core schema: TaggedModel's serializer removed, and a
    one-value Literal field's default dropped (so it is always written)."""
    if isinstance(node, list):
        return [_without_tag_serializers(item) for item in node]
    if not isinstance(node, dict):
        return node
    copy = {key: _without_tag_serializers(value) for key, value in node.items()}
    kind = copy.get("type")
    if kind == "model" and _is_write_tags(copy.get("serialization")):
        del copy["serialization"]
    elif kind == "model-field":
        inner = copy["schema"]
        if inner.get("type") == "default" and _is_one_value_literal(inner["schema"]):
            copy["schema"] = inner["schema"]
    return copy


def _is_write_tags(serialization: Any) -> bool:
    """TaggedModel's serializer (the schema holds the function itself)."""
    return isinstance(serialization, dict) and serialization.get("function") is TaggedModel._write_tags


def _is_one_value_literal(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "literal" and len(schema.get("expected", ())) == 1


# What a field takes, as a writer (``Writers``) writes it.
_STR, _INT, _BOOL, _MODEL, _MODEL_LIST, _NONE_ONLY = range(6)


class _FieldPlan(NamedTuple):
    name: str
    key: str  # the wire name
    kind: int
    classes: FrozenSet[type]  # _MODEL, _MODEL_LIST: the exact classes taken
    required: bool
    compare_default: bool  # a default other than None: a value equal to it is left out
    default: Any


class Writers:
    """``writers.SessionNotification(session_id=..., update=..., field_meta=...)``:
    the params model's arguments for the wire, as ``SessionNotification(...)``
    would be written (``to_wire_json``), or, when every argument already is
    what its field takes, as a dict whose models are their JSON bytes (the
    engine writes both as they are). Each model's writer is made on its first
    use, then is an attribute here: a peer method reaches it in one lookup."""

    def __init__(self, models: Any) -> None:
        self._models = models

    def __getattr__(self, name: str) -> Callable[..., Union[bytes, Dict[str, Any]]]:
        if name.startswith("_"):
            raise AttributeError(name)
        writer = _writer_of(getattr(self._models, name))
        setattr(self, name, writer)
        return writer


def _writer_of(model: type[pydantic.BaseModel]) -> Callable[..., Union[bytes, Dict[str, Any]]]:
    """The writer of ``model``'s params: a function of its fields, by name,
    that writes its plan (``_plan_of``) out as Python, one straight run of
    checks per field (a stream of updates calls it per message; a loop over
    the plan cost it about half as much again). A model goes to the engine's
    writer first, pydantic's when it declines. Any argument that is not what
    its field takes, or a required one that is missing, builds the model:
    ``model(...)`` validates it (a wrong one raises pydantic's
    ValidationError, as in the official SDK)."""
    # Every name the function uses besides its fields starts with `_`, as no
    # field's does: a field named `params` (mcp/message's), or one named
    # `type`, keeps its value and its builtin.
    fields = [name for name, _ in fields_of(model)]
    signature = ", ".join(fields)

    def built(*values: Any) -> bytes:
        return to_wire_json(model(**dict(zip(fields, values))))

    names: Dict[str, Any] = {
        "_engine": engine_wire_json,
        "_declined": _declined_wire_json,
        "_built": built,
        "_type": type,
        "_list": list,
        "_str": str,
        "_int": int,
        "_bool": bool,
    }
    build = f"        return _built({signature})"
    plan = _plan_of(model)
    body = [build[4:]] if plan is None else _checks_of(plan, build, names)
    lines = [f"def write({signature}):", *body]
    exec("\n".join(lines), names)  # noqa: S102 - the source is built above from the model's fields
    write: Callable[..., Union[bytes, Dict[str, Any]]] = names["write"]
    write.__name__ = write.__qualname__ = f"write_{model.__name__}"  # as tracebacks name it
    return write


def _checks_of(plan: Tuple[_FieldPlan, ...], build: str, names: Dict[str, Any]) -> List[str]:
    """The writer's body for ``plan``: a check per field, ``build`` (the
    model's path) when one fails; the values it names go into ``names``."""
    lines = ["    _params = {}"]
    for index, field in enumerate(plan):
        key = repr(field.key)
        lines.append(f"    if {field.name} is None:")
        lines.append(build if field.required else "        pass")
        if field.compare_default:
            names[f"_default{index}"] = field.default
            lines += [f"    elif {field.name} == _default{index}:", "        pass"]
        if field.kind == _MODEL:
            names[f"_classes{index}"] = field.classes
            lines += [
                f"    elif _type({field.name}) in _classes{index}:",
                f"        _written = _engine({field.name})",
                f"        _params[{key}] = _written if _written is not None else _declined({field.name})",
            ]
        elif field.kind == _MODEL_LIST:
            names[f"_classes{index}"] = field.classes
            lines += [
                f"    elif _type({field.name}) is _list:",
                "        _items = []",
                f"        for _item in {field.name}:",
                f"            if _type(_item) not in _classes{index}:",
                "        " + build,
                "            _written = _engine(_item)",
                "            _items.append(_written if _written is not None else _declined(_item))",
                f"        _params[{key}] = _items",
            ]
        elif field.kind in (_STR, _INT, _BOOL):
            kind = {_STR: "_str", _INT: "_int", _BOOL: "_bool"}[field.kind]
            lines += [f"    elif _type({field.name}) is {kind}:", f"        _params[{key}] = {field.name}"]
        lines += ["    else:", build]
    lines.append("    return _params")
    return lines


def _plan_of(model: type[pydantic.BaseModel]) -> Optional[Tuple[_FieldPlan, ...]]:
    """How to write ``model`` from its arguments, or None when a required field
    takes something other than the plain values writers write (or the
    model has a validator of its own)."""
    if model.__pydantic_decorators__.model_validators or model.model_config.get("extra") == "allow":
        return None
    plan = []
    for name, info in fields_of(model):
        # Bounds and patterns (metadata) are pydantic's to check.
        kind, classes = (_NONE_ONLY, frozenset()) if info.metadata else _kind_of(info.annotation)
        required = info.is_required()
        if kind == _NONE_ONLY and required:
            return None
        key = info.serialization_alias or info.alias or name
        default = None if required else info.default
        plan.append(_FieldPlan(name, key, kind, classes, required, default is not None, default))
    return tuple(plan)


def _kind_of(annotation: Any) -> Tuple[int, FrozenSet[type]]:
    """What a field of type ``annotation`` takes here (_NONE_ONLY: none of these)."""
    if get_origin(annotation) is Annotated:  # a list item's discriminator, say
        return _kind_of(get_args(annotation)[0])
    if get_origin(annotation) is Union:
        members = [member for member in get_args(annotation) if member is not type(None)]
        if len(members) == 1:
            return _kind_of(members[0])
        if all(_is_model(member) for member in members):
            return _MODEL, frozenset(members)
        return _NONE_ONLY, frozenset()
    if get_origin(annotation) in (list, List):
        items = get_args(annotation)
        kind, classes = _kind_of(items[0]) if items else (_NONE_ONLY, frozenset())
        return (_MODEL_LIST, classes) if kind == _MODEL else (_NONE_ONLY, frozenset())
    if annotation is str:
        return _STR, frozenset()
    if annotation is bool:
        return _BOOL, frozenset()
    if annotation is int:
        return _INT, frozenset()
    if _is_model(annotation):
        # Exact classes: an instance of a subclass is written by the field's
        # schema (the subclass's own fields left out), so it takes the model's path.
        return _MODEL, frozenset((annotation,))
    return _NONE_ONLY, frozenset()


def _is_model(annotation: Any) -> bool:
    return (
        isinstance(annotation, type)
        and issubclass(annotation, pydantic.BaseModel)
        and not issubclass(annotation, pydantic.RootModel)
    )
