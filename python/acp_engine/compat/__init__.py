"""acp_engine.compat: the official Python SDK's API (the ``acp`` package of PyPI
``agent-client-protocol`` 1.0), on the acp-engine engine.

Switching is the import line: ``import acp_engine.compat as acp``, or
``from acp_engine.compat import ...`` / ``from acp_engine.compat.schema import ...``
where the code said ``from acp import ...`` / ``from acp.schema import ...``.
Needs pydantic (``pip install acp-engine[compat]``).
"""

from .._lazy import TYPE_CHECKING, lazy_attributes
from ._exports import MODEL_EXPORTS

if TYPE_CHECKING:
    from typing import Any

    from . import schema as schema  # a submodule, as in the official package
    from ._exports import *  # noqa: F403 (the models the official package exports at its top level)
    from .core import Agent, Client, RequestError, connect_to_agent, run_agent
    from .helpers import *  # noqa: F403 (the 0.x builders, for programs written against them; not in __all__, as in 1.0)
    from .meta import AGENT_METHODS, CLIENT_METHODS, PROTOCOL_VERSION
    from .stdio import spawn_agent_process, spawn_client_process, spawn_stdio_connection, stdio_streams
    from .transports import default_environment, spawn_stdio_transport

# Where each name lives, imported on its first use (see acp_engine._lazy): ``import
# acp_engine.compat.as_acp`` (the ``import acp`` alias) imports no pydantic, and a model
# is created when it is first read (see .schema).
_WHERE = {
    "schema": ".schema",
    **dict.fromkeys(MODEL_EXPORTS, ".schema"),
    **dict.fromkeys(("Agent", "Client", "RequestError", "connect_to_agent", "run_agent"), ".core"),
    **dict.fromkeys(("AGENT_METHODS", "CLIENT_METHODS", "PROTOCOL_VERSION"), ".meta"),
    **dict.fromkeys(("spawn_agent_process", "spawn_client_process", "spawn_stdio_connection", "stdio_streams"), ".stdio"),
    **dict.fromkeys(("default_environment", "spawn_stdio_transport"), ".transports"),
}
_lazy_attribute, __dir__ = lazy_attributes(globals(), _WHERE)

_DEPRECATED_NAMES = {
    "AgentSideConnection": ("agent.connection", "Using `AgentSideConnection` directly is deprecated, please use `acp.run_agent` instead."),
    "ClientSideConnection": ("client.connection", "Using `ClientSideConnection` directly is deprecated, please use `acp.connect_to_agent` instead."),
}


def __getattr__(name: str) -> "Any":
    if name in _WHERE:
        return _lazy_attribute(name)
    if name in _DEPRECATED_NAMES:
        import importlib
        import warnings

        module, warning = _DEPRECATED_NAMES[name]
        warnings.warn(warning, DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(f".{module}", __name__), name)
    if not name.startswith("__"):
        import importlib
        import importlib.util

        # A submodule (``acp.core``, ``acp.helpers``, ...): the official package's
        # eager imports leave them as attributes of the package.
        if importlib.util.find_spec(f"{__name__}.{name}") is not None:
            return importlib.import_module(f".{name}", __name__)
        helpers = importlib.import_module(".helpers", __name__)
        if name in helpers.__all__:  # the 0.x builders (``from .helpers import *`` made lazy)
            value = getattr(helpers, name)
            globals()[name] = value
            return value
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
