"""``acp.telemetry``: a span around each message the connection handles.

As the official package does, when ``logfire`` or OpenTelemetry
(``opentelemetry-api``) is installed, a request from the peer is handled in
an ``acp.request`` span and a notification in an ``acp.notification`` span,
each with the ``method`` attribute; without them, nothing. Neither is a
dependency. An OpenTelemetry span is only started once a tracer provider is
set (before that the API hands out spans that record nothing), so a program
that installed the API without configuring it pays nothing per message.
"""

from __future__ import annotations

import importlib
import os
from contextlib import AbstractContextManager, ExitStack, nullcontext
from typing import Any, Callable, Mapping, Optional, cast

__all__ = ["DEFAULT_TAGS", "TRACER", "span_context", "tracing"]


def _optional(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError:
        return None


_logfire = _optional("logfire")
if _logfire is not None:
    os.environ.setdefault("LOGFIRE_IGNORE_NO_CONFIG", "1")
_otel_trace = _optional("opentelemetry.trace")
logfire_span: Any = _logfire.span if _logfire is not None else None

#: The tags of a logfire span.
DEFAULT_TAGS = ["acp"]
#: The OpenTelemetry tracer of this module, if OpenTelemetry is installed.
TRACER: Any = _otel_trace.get_tracer(__name__) if _otel_trace is not None else None

# The API's own providers: spans from them record nothing.
_UNSET_PROVIDERS: tuple[type, ...] = (
    (_otel_trace.ProxyTracerProvider, _otel_trace.NoOpTracerProvider) if _otel_trace is not None else ()
)


def installed() -> bool:
    """Whether a span could ever be started here (logfire or OpenTelemetry installed)."""
    return logfire_span is not None or TRACER is not None


# The API's global provider, None until one is set, and set only once (by
# ``set_tracer_provider``, or from this variable by the next
# ``get_tracer_provider``). Reading it, and the environment once, keeps
# ``tracing()`` off the API's per-call environment lookup, which cost more
# than the rest of a notification's dispatch.
_PROVIDER_GLOBAL = "_TRACER_PROVIDER"
_PROVIDER_FROM_ENVIRONMENT = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
_provider_decided: Optional[bool] = None


def tracing() -> bool:
    """Whether a message handled now gets a span that records something."""
    global _provider_decided
    if logfire_span is not None:
        return True
    if _otel_trace is None:
        return False
    if _provider_decided is not None:
        return _provider_decided
    if not _PROVIDER_FROM_ENVIRONMENT and getattr(_otel_trace, _PROVIDER_GLOBAL, None) is None:
        # None set yet (or an API without that global: then ask it each time).
        if hasattr(_otel_trace, _PROVIDER_GLOBAL):
            return False
        return not isinstance(_otel_trace.get_tracer_provider(), _UNSET_PROVIDERS)
    # Set, and for good: decide once.
    _provider_decided = not isinstance(_otel_trace.get_tracer_provider(), _UNSET_PROVIDERS)
    return _provider_decided


def span_context(name: str, *, attributes: Optional[Mapping[str, Any]] = None) -> AbstractContextManager[None]:
    """A span named ``name`` (logfire's and OpenTelemetry's, each if installed),
    or a context that does nothing."""
    if not tracing():
        return nullcontext()
    stack = ExitStack()
    if logfire_span is not None:
        stack.enter_context(logfire_span(name, attributes={"logfire.tags": DEFAULT_TAGS, **(attributes or {})}))
    if TRACER is not None:
        stack.enter_context(TRACER.start_as_current_span(name, attributes=dict(attributes or {})))
    return cast(AbstractContextManager[None], stack)


def traced_notifications(
    routes: Mapping[str, Callable[[Any], Any]],
) -> dict[str, Callable[[Any], Any]]:
    """Notification routes (params -> the handler's awaitable) whose handler
    runs in an ``acp.notification`` span whenever ``tracing()``."""
    return {method: _traced(method, route) for method, route in routes.items()}


def _traced(method: str, route: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def call(params: Any) -> Any:
        if not tracing():
            return route(params)
        return _in_span(method, route, params)

    return call


async def _in_span(method: str, route: Callable[[Any], Any], params: Any) -> None:
    with span_context("acp.notification", attributes={"method": method}):
        await route(params)
