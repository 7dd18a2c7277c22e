"""``acp.client.connection``: the client's connection to its agent."""

from __future__ import annotations

from typing import final

from ..._connection import Side
from .._legacy import add_model_calls_for
from .._methods import AGENT_ROUTES, CLIENT_ROUTES
from .._peers import AgentMethods
from .._side import SideConnection

__all__ = ["ClientSideConnection"]


@final
@add_model_calls_for(AGENT_ROUTES)
class ClientSideConnection(SideConnection, AgentMethods):
    """``ClientSideConnection(client, writer, reader)``: serves ``client`` (or
    ``to_client(conn)``) and calls the agent with the methods below."""

    _side = Side.CLIENT
    _routes = CLIENT_ROUTES
