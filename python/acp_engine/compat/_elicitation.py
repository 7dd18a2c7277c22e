"""``create_elicitation`` in the official 1.0 form: the request's mode and its
scope travel as one model (``ElicitationFormSessionMode``,
``ElicitationUrlRequestMode``, ...), ``create_elicitation(message, mode,
**meta)``, when an agent calls its client and when a client's handler is
called. The wire form is the schema's flat request (``mode`` is the tag)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Awaitable, Callable, Dict, Optional, Tuple, Type

from pydantic import BaseModel

from .._errors import RequestError
from . import schema

# The request variants and their mode models share these names.
_VARIANTS = ("FormSession", "FormRequest", "UrlSession", "UrlRequest")


@lru_cache(maxsize=None)
def _pairs() -> Tuple[Tuple[Type[BaseModel], Type[BaseModel]], ...]:
    """(request variant, mode model) for each mode and scope."""
    return tuple(
        (getattr(schema, f"Create{variant}ElicitationRequest"), getattr(schema, f"Elicitation{variant}Mode"))
        for variant in _VARIANTS
    )


def mode_of(request: Any) -> Any:
    """The mode model of a validated request."""
    for request_type, mode_type in _pairs():
        if isinstance(request, request_type):
            return mode_type.model_validate({name: getattr(request, name) for name in mode_type.model_fields})
    raise RequestError.invalid_params({"details": f"Unsupported elicitation mode: {getattr(request, 'mode', None)!r}"})


def request_of(message: str, mode: Any, meta: Dict[str, Any]) -> Optional[Any]:
    """The request for a mode model (None: ``mode`` is not one)."""
    for request_type, mode_type in _pairs():
        if isinstance(mode, mode_type):
            fields = {name: getattr(mode, name) for name in mode_type.model_fields}
            tag = request_type.model_fields["mode"].default
            return request_type(message=message, mode=tag, field_meta=meta or None, **fields)
    return None


def elicitation_call_of(handler: Callable[..., Awaitable[Any]], validate: Callable[[Any], Any]) -> Callable[[Any], Awaitable[Any]]:
    """A client handler ``create_elicitation(message, mode, **meta)``."""

    def call(params: Any) -> Awaitable[Any]:
        request = validate(params if params is not None else {})
        return handler(message=request.message, mode=mode_of(request), **(request.field_meta or {}))

    return call
