"""``acp.utils``: model <-> wire JSON helpers the official SDK exports."""

from __future__ import annotations

from typing import Any, Dict, Type, TypeVar

from pydantic import BaseModel

__all__ = ["ensure_dict", "model_to_kwargs", "normalize_result", "serialize_params", "to_camel_case", "validate_model"]

ModelT = TypeVar("ModelT", bound=BaseModel)


def serialize_params(params: Any) -> Any:
    """A model as wire JSON (by alias; unset defaults and None left out)."""
    if isinstance(params, BaseModel):
        return params.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_defaults=True)
    return params


def normalize_result(payload: Any) -> Dict[str, Any]:
    """An optional model / None response as JSON (None -> ``{}``)."""
    if payload is None:
        return {}
    return serialize_params(payload)  # type: ignore[no-any-return]


def ensure_dict(payload: Any) -> Dict[str, Any]:
    return payload if isinstance(payload, dict) else {}


def validate_model(payload: Any, model_type: Type[ModelT]) -> ModelT:
    return model_type.model_validate(payload)


def to_camel_case(snake_str: str) -> str:
    first, *rest = snake_str.split("_")
    return first + "".join(word.title() for word in rest)


def model_to_kwargs(model: Any, request_type: Any = None) -> Dict[str, Any]:
    """A handler's keyword arguments from a params model: every field but
    ``field_meta``, whose entries are spread in. (``request_type`` is taken
    for the official signature; the model's own fields are used.)"""
    if getattr(type(model), "__pydantic_root_model__", False):  # a RootModel (isinstance would be an ABC check: slow)
        model = model.root
    kwargs = dict(model.__dict__)  # a model's __dict__ is its fields (extras are apart)
    meta = kwargs.pop("field_meta", None)
    if meta:
        kwargs.update(meta)
    return kwargs
