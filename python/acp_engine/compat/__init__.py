"""acp_engine.compat: the official Python SDK's API (the ``acp`` package of PyPI
``agent-client-protocol`` 1.0), on the acp-engine engine.

Switching is the import line: ``import acp_engine.compat as acp``, or
``from acp_engine.compat import ...`` / ``from acp_engine.compat.schema import ...``
where the code said ``from acp import ...`` / ``from acp.schema import ...``.
Needs pydantic (``pip install acp-engine[compat]``).
"""

from typing import TYPE_CHECKING, Any

from . import schema
from .core import Agent, Client, RequestError, connect_to_agent, run_agent
from .helpers import *  # noqa: F403 (the 0.x builders, for programs written against them; not in __all__, as in 1.0)
from .meta import AGENT_METHODS, CLIENT_METHODS, PROTOCOL_VERSION
from .stdio import spawn_agent_process, spawn_client_process, spawn_stdio_connection, stdio_streams
from .transports import default_environment, spawn_stdio_transport

from ._exports import MODEL_EXPORTS

if TYPE_CHECKING:
    from ._exports import *  # noqa: F403 (the models the official package exports at its top level)

_DEPRECATED_NAMES = {
    "AgentSideConnection": ("agent.connection", "Using `AgentSideConnection` directly is deprecated, please use `acp.run_agent` instead."),
    "ClientSideConnection": ("client.connection", "Using `ClientSideConnection` directly is deprecated, please use `acp.connect_to_agent` instead."),
}


_MODEL_EXPORTS = frozenset(MODEL_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _MODEL_EXPORTS:  # a model, created on its first use (see .schema)
        model = getattr(schema, name)
        globals()[name] = model
        return model
    if name in _DEPRECATED_NAMES:
        import importlib
        import warnings

        module, warning = _DEPRECATED_NAMES[name]
        warnings.warn(warning, DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(f".{module}", __name__), name)
    raise AttributeError(f"module {__name__} has no attribute {name}")


__all__ = [
    "PROTOCOL_VERSION",
    "AGENT_METHODS",
    "CLIENT_METHODS",
    *MODEL_EXPORTS,
    "run_agent",
    "connect_to_agent",
    "RequestError",
    "Agent",
    "Client",
    "stdio_streams",
    "spawn_stdio_connection",
    "spawn_agent_process",
    "spawn_client_process",
    "default_environment",
    "spawn_stdio_transport",
]
