"""What every generated model of ``acp_engine.compat.schema`` shares, as the
official ``acp`` models behave: snake_case attributes with camelCase aliases
(either accepted), a camelCase attribute read as its snake_case one, a
variant's tag written even when it is the default, ``_meta`` read leniently,
and the validators the schema asks for (a malformed optional field reads as
its default, invalid list items are dropped, a legacy protocol version is
not an error)."""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Dict, FrozenSet, Literal, Tuple, get_args, get_origin

import pydantic
from pydantic import (
    ConfigDict,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_snake
from pydantic_core import PydanticUseDefault


def use_default_on_error(value: Any, handler: Callable[[Any], Any], _info: Any = None) -> Any:
    """A value that does not validate reads as the field's default
    (``x-deserialize-default-on-error``)."""
    try:
        return handler(value)
    except ValidationError:
        raise PydanticUseDefault() from None


def skip_invalid_items(value: Any, handler: Callable[[Any], Any], _info: Any = None) -> Any:
    """Items of a list that do not validate are dropped, the others validated
    as the field says (``x-deserialize-skip-invalid-items``)."""
    if not isinstance(value, list):
        return handler(value)
    kept = []
    for item in value:
        try:
            kept.append(handler([item])[0])
        except ValidationError:
            continue
    return kept


def coerce_protocol_version(value: Any, _info: Any = None) -> Any:
    """A protocol version as an integer: a numeric string is read as its number,
    anything else that is not an integer (a legacy date string) as version 1."""
    if isinstance(value, int):
        return value
    try:
        return int(value)
    except (TypeError, ValueError):
        return 1


class BaseModel(pydantic.BaseModel):
    """The base of every generated ACP model."""

    # defer_build: a model's validator is built on its first use, not at import
    # (hundreds of models). Field descriptions are generated into `Field(...)`:
    # pydantic reading them from the docstrings (`use_attribute_docstrings`, as
    # the official models do) parses each class's source at import.
    model_config = ConfigDict(defer_build=True, populate_by_name=True)

    @field_validator("field_meta", mode="wrap", check_fields=False)
    @classmethod
    def _meta_default_on_error(cls, value: Any, handler: Callable[[Any], Any]) -> Any:
        return use_default_on_error(value, handler)

    def __getattr__(self, item: str) -> Any:
        if item.lower() != item and not item.startswith("_"):
            return getattr(self, to_snake(item))
        return super().__getattr__(item)  # type: ignore[misc]


class TaggedModel(BaseModel):
    """A variant of a tagged union: its tag (a one-value Literal) is what tells
    it apart, so it is written even when excluding defaults or unset fields.
    Only variants have this serializer: it runs, in Python, for every dump of
    every model that has it."""

    @model_serializer(mode="wrap")
    def _write_tags(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if type(data) is not dict:
            return data
        include, exclude, by_alias = info.include, info.exclude, info.by_alias
        values = self.__dict__
        for name, alias in _tag_fields(type(self)):
            if (include is None or name in include) and (exclude is None or name not in exclude):
                data[alias if by_alias else name] = values[name]
        return data


class CatchAllModel(BaseModel):
    """A union's catch-all variant: any tag but those the known variants own."""

    #: The tag's wire name and the values the known variants own.
    _reserved_tag: ClassVar[Tuple[str, FrozenSet[str]]]

    @model_validator(mode="before")
    @classmethod
    def _not_a_known_tag(cls, value: Any) -> Any:
        if isinstance(value, dict):
            wire, known = cls._reserved_tag
            if value.get(wire, value.get(to_snake(wire))) in known:
                raise ValueError(f"{wire} value is reserved by a known variant")
        return value


# A model class -> its tag fields, (attribute, wire name): found once per
# class, since every dump of every variant asks.
_TAG_FIELDS: Dict[type, Tuple[Tuple[str, str], ...]] = {}


def _tag_fields(model: type[pydantic.BaseModel]) -> Tuple[Tuple[str, str], ...]:
    tags = _TAG_FIELDS.get(model)
    if tags is None:
        tags = _TAG_FIELDS[model] = tuple(
            (name, field.serialization_alias or field.alias or name)
            for name, field in model.model_fields.items()
            if get_origin(field.annotation) is Literal and len(get_args(field.annotation)) == 1
        )
    return tags
