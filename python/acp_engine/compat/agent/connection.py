"""``acp.agent.connection``: the agent's connection to its client."""

from __future__ import annotations

from typing import final

from ..._connection import Side
from .._legacy import add_model_calls_for
from .._methods import AGENT_ROUTES, CLIENT_ROUTES
from .._elicitation import ScopedElicitationCalls
from .._side import SideConnection

__all__ = ["AgentSideConnection"]


@final
@add_model_calls_for(CLIENT_ROUTES)
class AgentSideConnection(SideConnection, ScopedElicitationCalls):
    """``AgentSideConnection(agent, writer, reader)``: serves ``agent`` (or
    ``to_agent(conn)``) and calls the client back with the methods below."""

    _side = Side.AGENT
    _routes = AGENT_ROUTES
