"""``acp.agent.connection``: the agent's connection to its client."""

from __future__ import annotations

from typing import final

from ..._connection import Side
from .._methods import AGENT_ROUTES
from .._peers import ClientMethods
from .._side import SideConnection

__all__ = ["AgentSideConnection"]


@final
class AgentSideConnection(SideConnection, ClientMethods):
    """``AgentSideConnection(agent, writer, reader)``: serves ``agent`` (or
    ``to_agent(conn)``) and calls the client back with the methods below."""

    _side = Side.AGENT
    _routes = AGENT_ROUTES
