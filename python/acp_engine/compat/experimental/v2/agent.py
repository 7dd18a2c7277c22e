"""``acp.experimental.v2.agent``: an agent's v2 connection to its client."""

from __future__ import annotations

import asyncio
from typing import Any, final

from ...._connection import Side
from ...connection import Connection, MethodHandler
from ..._methods import Route
from ...stdio import stdio_streams
from . import schema
from ._methods import AGENT_ROUTES
from ._peers import ClientMethods
from ._side import V2SideConnection, elicitation_params
from .meta import CLIENT_METHODS

__all__ = ["AgentSideConnection", "run_agent"]


@final
class AgentSideConnection(V2SideConnection, ClientMethods):
    """``AgentSideConnection(agent, transport)`` or ``(agent, writer, reader)``:
    serves ``agent`` in ACP v2 and calls the client with the methods below."""

    _side = Side.AGENT
    _routes: tuple[Route, ...] = AGENT_ROUTES

    # The official parameter names (a keyword call names them).
    def __init__(self, agent: object, input_stream: Any, output_stream: Any = None, **connection_kwargs: Any) -> None:
        super().__init__(agent, input_stream, output_stream, **connection_kwargs)

    @classmethod
    def attach(
        cls, agent_factory: Any, connection: Connection, *, use_unstable_protocol: bool = False
    ) -> tuple[Any, MethodHandler]:
        return super().attach(agent_factory, connection, use_unstable_protocol=use_unstable_protocol)

    async def create_elicitation(self, message: str, mode: str, **kwargs: Any) -> schema.CreateElicitationResponse:
        """Elicit input from the user: ``mode`` is the tag (``"form"``, ``"url"``, a
        custom one), scoped by ``session_id`` (and ``tool_call_id``) or ``request_id``;
        the mode's fields as keywords, any other keyword goes into ``_meta``."""
        request = elicitation_params(message, mode, kwargs)
        result = await self._call(CLIENT_METHODS["elicitation_create"], request, "CreateElicitationResponse")
        return result  # type: ignore[no-any-return]


async def run_agent(
    agent: object,
    input_stream: Any = None,
    output_stream: Any = None,
    *,
    stdio_buffer_limit_bytes: int = 50 * 1024 * 1024,
    **connection_kwargs: Any,
) -> None:
    """Serve ``agent`` in ACP v2 on this process's stdio (or the streams given)
    until the client hangs up."""
    if input_stream is None and output_stream is None:
        output_stream, input_stream = await stdio_streams(limit=stdio_buffer_limit_bytes)
    connection = AgentSideConnection(agent, input_stream, output_stream, **connection_kwargs)
    try:
        await connection.listen()
    finally:
        await asyncio.shield(connection.close())
