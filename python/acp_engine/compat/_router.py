"""Routes the peer's messages to an official-style handler object: params are
validated into the method's model and passed as keyword arguments (``field_meta``
spread into them, as the official SDK does); extension methods (``_name``) go to
``ext_method(name, params)`` / ``ext_notification(name, params)``."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from types import ModuleType
from typing import Any, Awaitable, Callable, Dict, Iterable, Optional, Set, Tuple

from pydantic import BaseModel, TypeAdapter

from .._errors import RequestError
from . import schema
from ._elicitation import elicitation_call_of
from ._legacy import resolve_handler, warn_legacy_handler
from ._methods import Route
from .meta import AGENT_METHODS
from .utils import model_to_kwargs

Call = Callable[[Any], Awaitable[Any]]

# The requests whose answer makes a session.
_SESSION_MAKERS = frozenset(AGENT_METHODS[key] for key in ("session_new", "session_load", "session_resume", "session_fork"))
_AFTER_THE_ANSWER_S = 0.001


class Models:
    """A module of generated models (``schema``: v1; ``experimental.v2.schema``)
    and their validators, each built once per process: not per connection, not
    per message."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self._asked: Set[str] = set()

    @functools.lru_cache(maxsize=None)  # noqa: B019 (one Models per schema module, for the process's life)
    def validator(self, model_name: str) -> Callable[[Any], Any]:
        """The validator of a model (or union) of the module, built: the model's
        own ``validate_python`` (``model_validate`` without its Python wrapper,
        which a message would pay again for nothing)."""
        model = getattr(self.module, model_name)
        if isinstance(model, type) and issubclass(model, BaseModel):
            if not model.__pydantic_complete__:  # deferred (defer_build): build it now
                model.model_rebuild()
            return model.__pydantic_validator__.validate_python
        return TypeAdapter(model).validate_python

    def validator_on_first_use(self, model_name: str) -> Callable[[Any], Any]:
        """:meth:`validator`, looked up on the first call: a connection's handlers
        should not create the classes of methods its peer never calls."""
        validate: Optional[Callable[[Any], Any]] = None

        def first_then_direct(value: Any) -> Any:
            nonlocal validate
            if validate is None:
                validate = self.validator(model_name)
            return validate(value)

        return first_then_direct

    def first_use(self, model_name: str) -> bool:
        """True the first time this is asked for ``model_name`` (the caller then
        has it built ahead: :meth:`prepare`), False after."""
        if model_name in self._asked:
            return False
        self._asked.add(model_name)
        return True

    def prepare(self, model_name: str) -> None:
        """Create a model's classes and build its validator now, ahead of its
        first use (see ``SideConnection._call``). Only a head start: what fails
        here fails again, and is raised, where the model is used."""
        with contextlib.suppress(Exception):
            self.validator(model_name)

    def validate_result(self, result: Any, result_type: Optional[str]) -> Any:
        """The peer's result as the method's result model."""
        if result_type is None:
            return None
        return self.validator(result_type)(result if result is not None else {})

    def build_params(self, params_type: str, values: Dict[str, Any]) -> Any:
        """Params whose model has a union part (the variant's fields given as keywords)."""
        return self.validator(params_type)({name: value for name, value in values.items() if value is not None})


V1_MODELS = Models(schema)
build_params = V1_MODELS.build_params


def _call_of(handler: Callable[..., Awaitable[Any]], models: Models, params_type: str) -> Call:
    """The handler called with the params' fields as keywords. Its validator is
    looked up on the first call (as ``validator_on_first_use``), then held
    here: a stream of updates goes through one function less per message."""
    validate: Optional[Callable[[Any], Any]] = None

    def call(params: Any) -> Awaitable[Any]:
        nonlocal validate
        if validate is None:
            validate = models.validator(params_type)
        return handler(**model_to_kwargs(validate(params if params is not None else {})))

    return call


def _model_call_of(obj: Any, name: str, handler: Callable[..., Awaitable[Any]], validate: Callable[[Any], Any]) -> Call:
    """A pre-1.0 handler: called with the params model (deprecated)."""

    def call(params: Any) -> Awaitable[Any]:
        warn_legacy_handler(obj, name)
        return handler(validate(params if params is not None else {}))

    return call


class Router:
    """``await router(method, params, is_notification)``: a MethodHandler."""

    # The handler object's extension methods.
    EXT_REQUEST = "ext_method"
    EXT_NOTIFICATION = "ext_notification"
    # `create_elicitation(message, mode)` gets the mode and its scope as one model (v1's).
    ELICITATION_MODE_AS_MODEL = True

    def __init__(self, routes: Iterable[Route], obj: Any, models: Models = V1_MODELS) -> None:
        self._obj = obj
        self._requests: Dict[str, Call] = {}
        self._notifications: Dict[str, Call] = {}
        # The params models of the notifications the object handles.
        self.notification_params: Tuple[str, ...] = ()
        # Called once, after the answer to the first request that made a session is out.
        self.on_session_made: Optional[Callable[[], None]] = None
        for route in routes:
            handler, name, takes_model = self._resolve(obj, route.handler)
            if handler is None:
                continue
            table = self._notifications if route.result is None else self._requests
            if takes_model:
                call = _model_call_of(obj, name, handler, models.validator_on_first_use(route.params))
            elif self.ELICITATION_MODE_AS_MODEL and route.params == "CreateElicitationRequest":
                call = elicitation_call_of(handler, models.validator_on_first_use(route.params))
            else:
                call = _call_of(handler, models, route.params)
            table[route.wire] = call
            if route.result is None:
                self.notification_params += (route.params,)
        self._ext_method = self._extension_handler(self.EXT_REQUEST)
        self._ext_notification = self._extension_handler(self.EXT_NOTIFICATION)

    def _resolve(self, obj: Any, name: str) -> Tuple[Optional[Callable[..., Any]], str, bool]:
        """(the handler of ``name``, its attribute name, whether it takes the params model)."""
        return resolve_handler(obj, name)

    def _extension_handler(self, name: str) -> Optional[Callable[[str, Dict[str, Any]], Awaitable[Any]]]:
        handler, found, camel_case = resolve_handler(self._obj, name)
        if handler is None or not camel_case:
            return handler
        obj = self._obj

        def call(method: str, params: Dict[str, Any]) -> Awaitable[Any]:
            warn_legacy_handler(obj, found)
            return handler(method, params)  # type: ignore[no-any-return]

        return call

    async def _extension(self, method: str, params: Any, is_notification: bool) -> Any:
        """An extension method (``_name``): to ``ext_method(name, params)`` /
        ``ext_notification(name, params)``, without the underscore."""
        payload = params if isinstance(params, dict) else {}
        if is_notification:
            if self._ext_notification is not None:
                await self._ext_notification(method[1:], payload)
            return None
        if self._ext_method is None:
            raise RequestError.method_not_found(method)
        return await self._ext_method(method[1:], payload)

    def notification_routes(self) -> Dict[str, Call]:
        """The notifications' calls by method (params -> the handler's
        awaitable), for a connection to call without going through ``__call__``."""
        return self._notifications

    async def __call__(self, method: str, params: Any, is_notification: bool) -> Any:
        if method.startswith("_"):
            return await self._extension(method, params, is_notification)
        call = (self._notifications if is_notification else self._requests).get(method)
        if call is None:
            if is_notification:
                return None
            raise RequestError.method_not_found(method)
        result = await call(params)
        if self.on_session_made is not None and method in _SESSION_MAKERS:
            # A moment after this answer is written (answers go out on the
            # loop's next turn): the peer reads it, and a prompt usually waits
            # for a person. Once: later requests pay only the None check.
            asyncio.get_running_loop().call_later(_AFTER_THE_ANSWER_S, self.on_session_made)
            self.on_session_made = None
        # None answers an empty result (`{}`: the engine writes it).
        return None if is_notification else result
