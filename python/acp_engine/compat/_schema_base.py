"""What every generated model of ``acp_engine.compat.schema`` shares, as the
official ``acp`` models behave: snake_case attributes with camelCase aliases
(either accepted), a camelCase attribute read as its snake_case one, a
variant's tag written even when it is the default, and the lenient field
validators the schema asks for."""

from __future__ import annotations

from typing import Any, Callable, ClassVar, FrozenSet, Literal, Optional, Tuple, get_args, get_origin

import pydantic
from pydantic import (
    ConfigDict,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_snake


class BaseModel(pydantic.BaseModel):
    """The base of every generated ACP model."""

    model_config = ConfigDict(populate_by_name=True, use_attribute_docstrings=True)

    #: A catch-all variant's tag (wire name) and the values the known variants
    #: own: those are not taken as "any other".
    _reserved_tag: ClassVar[Optional[Tuple[str, FrozenSet[str]]]] = None

    @model_validator(mode="before")
    @classmethod
    def _not_a_known_tag(cls, value: Any) -> Any:
        rule = cls._reserved_tag
        if rule is not None and isinstance(value, dict):
            wire, known = rule
            if value.get(wire, value.get(to_snake(wire))) in known:
                raise ValueError(f"{wire} value is reserved by a known variant")
        return value

    def __getattr__(self, item: str) -> Any:
        if item.lower() != item and not item.startswith("_"):
            return getattr(self, to_snake(item))
        return super().__getattr__(item)  # type: ignore[misc]

    @model_serializer(mode="wrap")
    def _write_tags(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        # A variant's tag (a one-value Literal) is what tells it apart: keep it
        # even when excluding defaults.
        data = handler(self)
        if not isinstance(data, dict):
            return data
        for name, field in type(self).model_fields.items():
            annotation = field.annotation
            if get_origin(annotation) is not Literal or len(get_args(annotation)) != 1:
                continue
            if (info.include is not None and name not in info.include) or (
                info.exclude is not None and name in info.exclude
            ):
                continue
            data[(field.alias or name) if info.by_alias else name] = getattr(self, name)
        return data


def default_on_error(value: Any, handler: Callable[[Any], Any], default: Any = None) -> Any:
    """A value that does not validate reads as the field's default."""
    try:
        return handler(value)
    except ValidationError:
        return default


def skip_invalid_items(value: Any, handler: Callable[[Any], Any]) -> Any:
    """Items of a list that do not validate are dropped."""
    try:
        return handler(value)
    except ValidationError:
        if not isinstance(value, list):
            raise
        kept = []
        for item in value:
            try:
                kept.extend(handler([item]))
            except ValidationError:
                continue
        return kept
