"""``acp.client.connection``: the client's connection to its agent."""

from __future__ import annotations

from typing import Any, final

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

    # The official parameter names (a keyword call names them).
    def __init__(
        self,
        to_client: Any,
        input_stream: Any,
        output_stream: Any = None,
        listening: bool = True,
        *,
        use_unstable_protocol: bool = False,
        **connection_kwargs: Any,
    ) -> None:
        super().__init__(
            to_client, input_stream, output_stream, listening, use_unstable_protocol=use_unstable_protocol,
            **connection_kwargs,
        )
