"""``acp.utils``: model <-> wire JSON helpers the official SDK exports."""

from __future__ import annotations

from typing import Any, Dict, Optional, Protocol, Type, TypeVar

from pydantic import BaseModel

__all__ = [
    "ensure_dict",
    "model_to_kwargs",
    "normalize_result",
    "notify_model",
    "request_model",
    "request_model_from_dict",
    "request_optional_model",
    "serialize_params",
    "to_camel_case",
    "validate_model",
    "validate_model_from_dict",
    "validate_optional_model",
]

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


def validate_model_from_dict(payload: Any, model_type: Type[ModelT]) -> ModelT:
    """``validate_model``, a payload that is not a dict read as ``{}``."""
    return model_type.model_validate(ensure_dict(payload))


def validate_optional_model(payload: Any, model_type: Type[ModelT]) -> Optional[ModelT]:
    """``validate_model`` for a dict payload; None for anything else."""
    return model_type.model_validate(payload) if isinstance(payload, dict) else None


class _Sender(Protocol):
    """What the model helpers send through (``acp.connection.Connection``)."""

    async def send_request(self, method: str, params: Any = None) -> Any: ...

    async def send_notification(self, method: str, params: Any = None) -> None: ...


async def request_model(conn: _Sender, method: str, params: BaseModel, response_model: Type[ModelT]) -> ModelT:
    """Send ``params`` as wire JSON and validate the result as ``response_model``."""
    return validate_model(await conn.send_request(method, serialize_params(params)), response_model)


async def request_model_from_dict(
    conn: _Sender, method: str, params: BaseModel, response_model: Type[ModelT]
) -> ModelT:
    """``request_model``, a result that is not a dict read as ``{}``."""
    return validate_model_from_dict(await conn.send_request(method, serialize_params(params)), response_model)


async def request_optional_model(
    conn: _Sender, method: str, params: BaseModel, response_model: Type[ModelT]
) -> Optional[ModelT]:
    """``request_model`` for a dict result; None for anything else."""
    return validate_optional_model(await conn.send_request(method, serialize_params(params)), response_model)


async def notify_model(conn: _Sender, method: str, params: BaseModel) -> None:
    """Send a notification with ``params`` as wire JSON."""
    await conn.send_notification(method, serialize_params(params))


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
