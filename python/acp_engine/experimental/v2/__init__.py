"""The ACP version 2 draft (``schema/v2/schema.json``), experimental: the
protocol and this API may change in any release.

The same API as :mod:`acp_engine`, for version 2: :class:`Agent` and
:class:`Client` have v2's methods (``session/prompt`` is acknowledged with a
``messageId``; the turn's progress and its end come as ``session/update``
state updates; there are no client ``fs/*`` or ``terminal/*`` methods), and
the connections speak version 2 only: the engine checks every message, both
ways, against v2's schema, and refuses a v1 ``initialize`` (-32022). An agent
serving v1 and v2 clients at once is a :class:`acp_engine.Connection` with
``protocol_versions=(1, 2)``. The TypedDicts are in
:mod:`acp_engine.experimental.v2.schema`::

    from acp_engine.experimental import v2

    class MyAgent(v2.Agent): ...

    asyncio.run(v2.run_agent(MyAgent))
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from ..._helpers import connect_agent as _connect_agent
from ..._helpers import run_agent as _run_agent
from ..._helpers import spawn_agent as _spawn_agent
from ._generated.methods import Agent, AgentSideConnection, Client, ClientSideConnection

#: The protocol version this module speaks.
PROTOCOL_VERSION = AgentSideConnection._protocol_versions[-1]

run_agent = functools.partial(_run_agent, connection_class=AgentSideConnection)
"""Serve ``agent_factory(connection)`` (a v2 agent) on this process's stdio until the client hangs up."""
spawn_agent = functools.partial(_spawn_agent, connection_class=ClientSideConnection)
"""Start an agent process and talk to it in v2 as ``client_factory(conn)`` (``async with``)."""
connect_agent = functools.partial(_connect_agent, connection_class=ClientSideConnection)
"""Connect to a remote agent in v2 as ``client_factory(conn)`` (``async with``)."""


def __getattr__(name: str) -> Any:
    # `schema` (TypedDicts, for type checkers) loads on first use.
    if name == "schema":
        return importlib.import_module(".schema", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "PROTOCOL_VERSION",
    "Agent",
    "AgentSideConnection",
    "Client",
    "ClientSideConnection",
    "connect_agent",
    "run_agent",
    "schema",
    "spawn_agent",
]
