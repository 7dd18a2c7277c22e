"""The pre-1.0 calling convention, still accepted with a DeprecationWarning as
the official SDK 1.0 does: a handler named in camelCase (``newSession``) or
taking the params model as its one argument (``prompt(self, params)``), and
connection methods called with the params model (``conn.newSession(request)``,
``conn.prompt(request)``)."""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, Iterable, Optional, Tuple, TypeVar, Union, get_args, get_origin

from . import schema
from ._methods import Route
from .utils import model_to_kwargs, to_camel_case


def resolve_handler(obj: Any, name: str) -> Tuple[Optional[Callable[..., Any]], str, bool]:
    """(the handler, its attribute name, whether it takes the params model):
    ``name`` itself, else its camelCase spelling (a pre-1.0 handler); a
    one-word name is pre-1.0 when its only parameter is ``params``."""
    handler = getattr(obj, name, None)
    legacy = False
    if handler is None and "_" in name:
        name = to_camel_case(name)
        handler = getattr(obj, name, None)
        legacy = True
    elif callable(handler) and "_" not in name:
        legacy = list(_parameters(handler)) == ["params"]
    return (handler if callable(handler) else None), name, legacy


def _parameters(handler: Callable[..., Any]) -> Iterable[str]:
    try:
        return inspect.signature(handler).parameters
    except (TypeError, ValueError):
        return ()


def warn_legacy_handler(obj: Any, name: str) -> None:
    warnings.warn(
        f"The old style method {type(obj).__name__}.{name} is deprecated, please update to the snake-cased form.",
        DeprecationWarning,
        stacklevel=3,
    )


@functools.lru_cache(maxsize=None)
def _models(params_type: str) -> Tuple[type, ...]:
    """The params models of a method (looked up when first called: the schema's
    classes are created on first use)."""
    model = getattr(schema, params_type)
    return get_args(model) if get_origin(model) is Union else (model,)


def _warn_model_call(method: str, models: Tuple[type, ...]) -> None:
    names = " | ".join(model.__name__ for model in models)
    warnings.warn(
        f"Calling {method} with {names} parameter is deprecated, please update to the new API style.",
        DeprecationWarning,
        stacklevel=3,
    )


ClassT = TypeVar("ClassT", bound=type)


def add_model_calls_for(routes: Iterable[Route]) -> Callable[[ClassT], ClassT]:
    """A class decorator: the connection's methods for ``routes`` get the
    pre-1.0 form too, ``camelCase(model)`` beside each ``snake_case`` method,
    and one-word methods also taking the model."""

    def decorate(cls: ClassT) -> ClassT:
        _add_model_calls(cls, routes)
        return cls

    return decorate


def _add_model_calls(cls: type, routes: Iterable[Route]) -> None:
    for route in routes:
        method = getattr(cls, route.handler, None)
        if method is None:
            continue
        if "_" in route.handler:
            setattr(cls, to_camel_case(route.handler), _taking_model(method, route.params))
        else:
            setattr(cls, route.handler, _taking_model_or_keywords(method, route.params))


def _taking_model(method: Callable[..., Any], params_type: str) -> Callable[..., Any]:
    @functools.wraps(method)
    def with_model(self: Any, params: Any) -> Any:
        _warn_model_call(method.__name__, _models(params_type))
        return method(self, **model_to_kwargs(params))

    return with_model


def _taking_model_or_keywords(method: Callable[..., Any], params_type: str) -> Callable[..., Any]:
    @functools.wraps(method)
    def either(self: Any, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs:
            given = args[0]
        elif not args and len(kwargs) == 1:
            given = kwargs.get("params")
        else:
            given = None
        if given is not None and isinstance(given, models := _models(params_type)):
            _warn_model_call(method.__name__, models)
            return method(self, **model_to_kwargs(given))
        return method(self, *args, **kwargs)

    return either
