"""Routes the peer's v2 messages to an official-style handler object, as the v1
router does, with v2's conventions: a method the handler object leaves to the
``Agent`` / ``Client`` protocol's stub is not implemented (-32601), and
extension methods reach ``handle_extension_request(method, params)`` /
``handle_extension_notification(method, params)`` under their full name
(``_vendor/do``)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, Optional, Tuple

from ...._errors import RequestError
from ..._methods import Route
from ..._router import Models, Router
from . import interfaces, schema

__all__ = ["MODELS", "V2Router", "build_params"]

MODELS = Models(schema)
build_params = MODELS.build_params

# The protocols' own stubs: a handler object inheriting one has not implemented it.
_STUBS = {
    function
    for protocol in (interfaces.Agent, interfaces.Client)
    for function in vars(protocol).values()
    if callable(function)
}


def _implemented(obj: Any, name: str) -> Optional[Callable[..., Any]]:
    handler: Optional[Callable[..., Any]] = getattr(obj, name, None)
    if not callable(handler) or getattr(handler, "__func__", handler) in _STUBS:
        return None
    return handler


class V2Router(Router):
    """``await router(method, params, is_notification)``: a MethodHandler."""

    EXT_REQUEST = "handle_extension_request"
    EXT_NOTIFICATION = "handle_extension_notification"
    # Every v2 handler takes the params' fields as keywords, an elicitation's mode and scope too.
    ELICITATION_MODE_AS_MODEL = False

    def __init__(self, routes: Iterable[Route], obj: Any, models: Models = MODELS) -> None:
        super().__init__(routes, obj, models)

    def _resolve(self, obj: Any, name: str) -> Tuple[Optional[Callable[..., Any]], str, bool]:
        return _implemented(obj, name), name, False

    def _extension_handler(self, name: str) -> Optional[Callable[[str, Dict[str, Any]], Any]]:
        return _implemented(self._obj, name)

    async def _extension(self, method: str, params: Any, is_notification: bool) -> Any:
        if is_notification:
            if self._ext_notification is not None:
                await self._ext_notification(method, params)
            return None
        if self._ext_method is None:
            raise RequestError.method_not_found(method)
        return await self._ext_method(method, params)
