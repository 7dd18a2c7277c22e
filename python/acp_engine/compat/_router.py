"""Routes the peer's messages to an official-style handler object: params are
validated into the method's model and passed as keyword arguments (``field_meta``
spread into them, as the official SDK does); extension methods (``_name``) go to
``ext_method(name, params)`` / ``ext_notification(name, params)``."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Awaitable, Callable, Dict, Iterable, Optional

from pydantic import BaseModel, TypeAdapter

from .._errors import RequestError
from . import schema
from ._elicitation import elicitation_call_of
from ._legacy import resolve_handler, warn_legacy_handler
from ._methods import Route
from .utils import model_to_kwargs

Call = Callable[[Any], Awaitable[Any]]


@lru_cache(maxsize=None)
def validator(model_name: str) -> Callable[[Any], Any]:
    """The validator of a model (or union) of the schema, built once per process:
    not per connection, not per message."""
    model = getattr(schema, model_name)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return model.model_validate
    return TypeAdapter(model).validate_python


def _call_of(handler: Callable[..., Awaitable[Any]], params_type: str) -> Call:
    validate = validator(params_type)

    def call(params: Any) -> Awaitable[Any]:
        return handler(**model_to_kwargs(validate(params if params is not None else {})))

    return call


def _model_call_of(obj: Any, name: str, handler: Callable[..., Awaitable[Any]], params_type: str) -> Call:
    """A pre-1.0 handler: called with the params model (deprecated)."""
    validate = validator(params_type)

    def call(params: Any) -> Awaitable[Any]:
        warn_legacy_handler(obj, name)
        return handler(validate(params if params is not None else {}))

    return call


class Router:
    """``await router(method, params, is_notification)``: a MethodHandler."""

    def __init__(self, routes: Iterable[Route], obj: Any) -> None:
        self._obj = obj
        self._requests: Dict[str, Call] = {}
        self._notifications: Dict[str, Call] = {}
        for route in routes:
            handler, name, takes_model = resolve_handler(obj, route.handler)
            if handler is None:
                continue
            table = self._notifications if route.result is None else self._requests
            if takes_model:
                call = _model_call_of(obj, name, handler, route.params)
            elif route.params == "CreateElicitationRequest":  # its mode and scope as one model
                call = elicitation_call_of(handler, validator(route.params))
            else:
                call = _call_of(handler, route.params)
            table[route.wire] = call
        self._ext_method = self._extension_handler("ext_method")
        self._ext_notification = self._extension_handler("ext_notification")

    def _extension_handler(self, name: str) -> Optional[Callable[[str, Dict[str, Any]], Awaitable[Any]]]:
        handler, found, camel_case = resolve_handler(self._obj, name)
        if handler is None or not camel_case:
            return handler
        obj = self._obj

        def call(method: str, params: Dict[str, Any]) -> Awaitable[Any]:
            warn_legacy_handler(obj, found)
            return handler(method, params)  # type: ignore[no-any-return]

        return call

    async def __call__(self, method: str, params: Any, is_notification: bool) -> Any:
        if method.startswith("_"):
            payload = params if isinstance(params, dict) else {}
            if is_notification:
                if self._ext_notification is not None:
                    await self._ext_notification(method[1:], payload)
                return None
            if self._ext_method is None:
                raise RequestError.method_not_found(method)
            return await self._ext_method(method[1:], payload)
        call = (self._notifications if is_notification else self._requests).get(method)
        if call is None:
            if is_notification:
                return None
            raise RequestError.method_not_found(method)
        result = await call(params)
        # None answers an empty result (`{}`: the engine writes it).
        return None if is_notification else result


def validate_result(result: Any, result_type: Optional[str]) -> Any:
    """The peer's result as the method's result model."""
    if result_type is None:
        return None
    return validator(result_type)(result if result is not None else {})


def build_params(params_type: str, values: Dict[str, Any]) -> Any:
    """Params whose model has a union part (the variant's fields given as keywords)."""
    return validator(params_type)({name: value for name, value in values.items() if value is not None})
