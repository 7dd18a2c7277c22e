"""Models the engine writes as wire JSON itself (``_native.wire_json``).

pydantic-core's serializer call costs about 0.8 µs for an update's small
model, more than the rest of its way to the engine, and a variant's
(``TaggedModel._write_tags``, a Python call) several µs. The engine writes a
model from its ``__dict__`` instead when its class was registered here with
its fields (wire name; whether a value equal to the default is left out;
whether it is a variant's tag), in pydantic's order: the same text pydantic
writes, for params as ``to_wire_json`` (by alias, None and defaults left out,
a one-value ``Literal`` always kept) and for a handler's result as
``dump_result`` (by alias, None and unset fields left out, a variant's tag
added at the end when unset).
A class is registered only when nothing else changes that text: no custom
serializer (but ``TaggedModel``'s, which the wire serializer removes too), no
extra fields, no computed fields, no default factory, no excluded field. A
value that is not plain (a float, an enum, a URL, a model of a class its
field does not name, such as a subclass) makes the engine decline, and
pydantic writes the model.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, Iterator, List, Literal, Optional, Set, Tuple, Union, get_args, get_origin

import pydantic
from pydantic.fields import FieldInfo
from pydantic.functional_serializers import PlainSerializer, WrapSerializer

from .. import _native
from ._schema_base import TaggedModel

__all__ = ["written_by_engine", "written_after_decline", "fields_of", "engine_wire_json"]

# The engine's writer itself: None when it declines (or the class is not registered yet).
engine_wire_json = _native.wire_json

# Config keys that do not change how a model is written.
_NEUTRAL_CONFIG = frozenset(("defer_build", "populate_by_name", "extra", "title", "frozen", "validate_by_name", "validate_by_alias"))

_SEEN: Set[type] = set()


def written_by_engine(model: pydantic.BaseModel, unset: bool = False) -> Optional[bytes]:
    """``model``'s wire JSON as the engine writes it (with ``unset``, as a
    handler's result), or None when it declines."""
    written: Optional[bytes] = engine_wire_json(model, unset)
    return written if written is not None else written_after_decline(model, unset)


def written_after_decline(model: pydantic.BaseModel, unset: bool = False) -> Optional[bytes]:
    """The engine's second try at ``model``, which it just declined: only
    when its class was not registered yet (None otherwise: pydantic's turn)."""
    if type(model) in _SEEN:
        return None
    _register_reachable(type(model))
    written: Optional[bytes] = engine_wire_json(model, unset)
    return written


def fields_of(model: type[pydantic.BaseModel]) -> List[Tuple[str, FieldInfo]]:
    """The model's fields with their types resolved. A deferred model
    (``defer_build``) is not built for this: building a params model with a
    large union (``session/update``'s) takes tens of milliseconds, and this
    needs only the types, aliases and defaults."""
    if model.__pydantic_complete__:
        return list(model.model_fields.items())
    try:
        hints = typing.get_type_hints(model, include_extras=True)
        return [
            (name, FieldInfo.from_annotated_attribute(hints[name], field.default))
            for name, field in model.model_fields.items()
        ]
    except (NameError, KeyError, TypeError):
        model.model_rebuild()
        return list(model.model_fields.items())


def _register_reachable(root: type) -> None:
    """Register ``root`` and every model class its fields can hold, each one
    that qualifies (see the module's doc)."""
    waiting = [root]
    while waiting:
        cls = waiting.pop()
        if cls in _SEEN:
            continue
        _SEEN.add(cls)
        try:
            fields = fields_of(cls)
        except Exception:  # a class pydantic cannot resolve yet: pydantic writes it
            continue
        wire_fields = _wire_fields_of(cls, fields)
        if wire_fields is not None:
            _native.register_wire_model(cls, wire_fields)
        for _, info in fields:
            waiting.extend(_models_in(info.annotation))


def _wire_fields_of(
    cls: type[pydantic.BaseModel], fields: List[Tuple[str, FieldInfo]]
) -> Optional[Tuple[Tuple[str, str, bool, Any, bool, Tuple[type, ...]], ...]]:
    """The field list the engine writes ``cls`` by, or None when it must not."""
    if issubclass(cls, pydantic.RootModel) or not set(cls.model_config) <= _NEUTRAL_CONFIG:
        return None
    if cls.model_config.get("extra") == "allow":
        return None
    decorators = cls.__pydantic_decorators__
    if decorators.field_serializers or decorators.computed_fields:
        return None
    if any(serializer.func is not TaggedModel._write_tags for serializer in decorators.model_serializers.values()):
        return None
    tagged = issubclass(cls, TaggedModel)
    wire_fields = []
    for name, info in fields:
        if info.exclude or info.default_factory is not None:
            return None
        if any(isinstance(item, (PlainSerializer, WrapSerializer)) for item in info.metadata):
            return None
        key = info.serialization_alias or info.alias or name
        one_value = _is_one_value_literal(info.annotation)
        leave_out_default = not info.is_required() and info.default is not None and not one_value
        models = tuple(_models_in(info.annotation))
        wire_fields.append((name, key, leave_out_default, info.default if leave_out_default else None, tagged and one_value, models))
    return tuple(wire_fields)


def _is_one_value_literal(annotation: Any) -> bool:
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return get_origin(annotation) is Literal and len(get_args(annotation)) == 1


def _models_in(annotation: Any) -> Iterator[type]:
    """The model classes a field of type ``annotation`` can hold."""
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        yield annotation
        return
    origin = get_origin(annotation)
    if origin is Annotated:
        yield from _models_in(get_args(annotation)[0])
    elif origin in (Union, types.UnionType, list, List, dict, tuple):
        for argument in get_args(annotation):
            yield from _models_in(argument)
