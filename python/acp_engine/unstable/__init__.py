"""The unstable ACP protocol (``schema/v1/schema.unstable.json``): methods and
fields that are not part of the spec yet and may change or go at any time.

The same API as :mod:`acp_engine`, opted in by importing from here:
:class:`Agent` and :class:`Client` have the unstable methods too
(``fork_session``, ``session_status``, ``auth_status``, ...), the typed
connections offer them to call, the engine lets them through (otherwise
they are unknown: -32601), and :mod:`acp_engine.unstable.schema` has their
TypedDicts::

    from acp_engine.unstable import Agent, AgentSideConnection
"""

from __future__ import annotations

import importlib
from typing import Any

from ._generated.methods import Agent, AgentSideConnection, Client, ClientSideConnection


def __getattr__(name: str) -> Any:
    # `acp_engine.unstable.schema` (TypedDicts, for type checkers) loads on first use.
    if name == "schema":
        return importlib.import_module(".schema", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Agent", "AgentSideConnection", "Client", "ClientSideConnection", "schema"]
