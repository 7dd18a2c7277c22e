"""What v2's two connections share: v1's compat connection (the engine under
the official API) speaking v2 alone, the handler object taken as it is (not as a
factory), v2's router and models, and v2's extension senders."""

from __future__ import annotations

import functools
from typing import Any, Dict, FrozenSet, Optional, get_args

from pydantic import BaseModel

from ..._side import SideConnection
from . import schema
from ._router import MODELS, V2Router

@functools.lru_cache(maxsize=None)
def _elicitation_fields() -> FrozenSet[str]:
    """The params of `elicitation/create`: which keywords are the request's (the
    rest are `_meta`). Looked up when first needed: the models are created on use."""
    return frozenset(
        name for variant in get_args(schema.CreateElicitationRequest) for name in variant.model_fields
    ) - {"field_meta"}


def wire_params(params: Any) -> Any:
    """v2 params for the engine, as JSON bytes: a model by alias with its unset
    fields left out and its explicit ``None`` kept (an update's ``null`` clears a
    field), but for the request's own fields, where ``None`` means not given."""
    if not isinstance(params, BaseModel):
        return params
    given = {name for name in params.model_fields_set if getattr(params, name) is not None}
    return params.__pydantic_serializer__.to_json(params, by_alias=True, exclude_unset=True, include=given)


def extension_method(method: str) -> str:
    if not method.startswith("_"):
        raise ValueError("ACP extension methods must start with '_'")
    return method


def elicitation_params(message: str, mode: str, values: Dict[str, Any]) -> Any:
    """``create_elicitation``'s request: scoped to a session (``session_id``) or a
    request (``request_id``, which may be None), the other keywords its ``_meta``."""
    if (values.get("session_id") is not None) == ("request_id" in values):
        raise ValueError("create_elicitation takes either session_id or request_id")
    fields: Dict[str, Any] = {"message": message, "mode": mode}
    meta: Dict[str, Any] = {}
    for name, value in values.items():
        if name not in _elicitation_fields():
            meta[name] = value
        elif value is not None or name == "request_id":
            fields[name] = value
    if meta:
        fields["field_meta"] = meta
    return MODELS.validator("CreateElicitationRequest")(fields)


class V2SideConnection(SideConnection):
    _models = MODELS
    _router_class = V2Router
    _protocol_versions = (2,)
    _wire_params = staticmethod(wire_params)

    def __init__(self, handler: object, input_stream: Any, output_stream: Any = None, **connection_kwargs: Any) -> None:
        # v2 takes the handler object itself (even a callable one); `attach` takes a factory.
        super().__init__(lambda connection: handler, input_stream, output_stream, **connection_kwargs)

    async def send_extension_request(self, method: str, params: Optional[Any] = None) -> Any:
        """An extension request (``method`` starts with ``_``)."""
        return await self._conn.send_request(extension_method(method), params)

    async def send_extension_notification(self, method: str, params: Optional[Any] = None) -> None:
        """An extension notification (``method`` starts with ``_``)."""
        await self._conn.send_notification(extension_method(method), params)
