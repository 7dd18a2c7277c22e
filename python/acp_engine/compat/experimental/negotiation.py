"""``acp.experimental.negotiation``: one agent for v1 and v2 clients, the
official ``AgentProtocolRouter``. The engine negotiates: the connection speaks
the versions configured, ``initialize`` selects one (and reaches the handler
rewritten for it: a v2 ``initialize`` in v1's shape for a v1 agent), and
nothing from the client is admitted before it when v2 is among them; the
router then serves the client with the agent made for that version."""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Optional, Tuple

from ..._connection import Side
from ..._errors import RequestError
from ..agent.connection import AgentSideConnection as V1AgentSideConnection
from ..connection import Connection, MethodHandler
from .._methods import AGENT_ROUTES
from ..stdio import stdio_streams
from .v2.agent import AgentSideConnection as V2AgentSideConnection

__all__ = ["AgentProtocolConnection", "AgentProtocolRouter"]

# The method that selects the version (the same in v1 and v2).
_INITIALIZE = next(route.wire for route in AGENT_ROUTES if route.params == "InitializeRequest")

V1AgentFactory = Callable[[V1AgentSideConnection], Any]
V2AgentFactory = Callable[[V2AgentSideConnection], object]


class _SelectedAgent:
    """The connection's handler: the agent of the version ``initialize`` selected."""

    def __init__(self, v1: Optional[V1AgentFactory], v2: Optional[V2AgentFactory]) -> None:
        self._v1 = v1
        self._v2 = v2
        self._connection: Optional[Connection] = None
        self._selected: Optional[MethodHandler] = None

    def bind(self, connection: Connection) -> None:
        self._connection = connection

    def _select(self) -> MethodHandler:
        assert self._connection is not None, "bound at connect"
        if self._connection.protocol_version == 2:
            assert self._v2 is not None, "the engine selects only a version configured"
            _, handler = V2AgentSideConnection.attach(self._v2, self._connection)
        else:
            assert self._v1 is not None, "the engine selects only a version configured"
            _, handler = V1AgentSideConnection.attach(self._v1, self._connection)
        return handler

    async def __call__(self, method: str, params: Any, is_notification: bool) -> Any:
        if self._selected is None:
            if is_notification:
                return None
            if method != _INITIALIZE:
                raise RequestError.invalid_request({"details": "The first ACP request must be initialize"})
            self._selected = self._select()
        return await self._selected(method, params, is_notification)


class AgentProtocolConnection:
    """A client's connection to an :class:`AgentProtocolRouter`."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    async def listen(self) -> None:
        """Returns once the connection is closed."""
        await self._connection.main_loop()

    async def close(self) -> None:
        await self._connection.close()

    async def __aenter__(self) -> "AgentProtocolConnection":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


class AgentProtocolRouter:
    """Serves each client the ACP version it asks for: ``v1`` / ``v2`` make the
    agent for a connection that selected that version (at least one of them)."""

    def __init__(self, *, v1: Optional[V1AgentFactory] = None, v2: Optional[V2AgentFactory] = None) -> None:
        if v1 is None and v2 is None:
            raise ValueError("Configure at least one ACP protocol implementation")
        self._v1 = v1
        self._v2 = v2

    @property
    def _versions(self) -> Tuple[int, ...]:
        return tuple(version for version, agent in ((1, self._v1), (2, self._v2)) if agent is not None)

    def connect(self, input_stream: Any, output_stream: Any = None, **connection_kwargs: Any) -> AgentProtocolConnection:
        """Serve a client on ``input_stream`` (a transport, or a StreamWriter with
        ``output_stream`` its StreamReader)."""
        handler = _SelectedAgent(self._v1, self._v2)
        unstable = connection_kwargs.pop("use_unstable_protocol", False)
        connection = Connection(
            handler,
            input_stream,
            output_stream,
            _side=Side.AGENT,
            _unstable=unstable,
            _protocol_versions=self._versions,
            **connection_kwargs,
        )
        handler.bind(connection)
        return AgentProtocolConnection(connection)

    async def run(
        self,
        input_stream: Any = None,
        output_stream: Any = None,
        *,
        stdio_buffer_limit_bytes: int = 50 * 1024 * 1024,
        **connection_kwargs: Any,
    ) -> None:
        """Serve one client on this process's stdio (or the streams given) until it hangs up."""
        if input_stream is None and output_stream is None:
            output_stream, input_stream = await stdio_streams(limit=stdio_buffer_limit_bytes)
        connection = self.connect(input_stream, output_stream, **connection_kwargs)
        try:
            await connection.listen()
        finally:
            await asyncio.shield(connection.close())
