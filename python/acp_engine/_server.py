"""Serving agents to remote clients: the engine's server (WebSocket and
Streamable HTTP on one endpoint, as the official SDKs' clients speak them)
hands each connection to this asyncio loop, which starts a new agent on it."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from typing import Any, AsyncIterator, Callable, Dict, Optional, Sequence, Set, Tuple

from ._generated.methods import Agent, AgentSideConnection
from ._limits import Limits
from ._native import NativeConnection, NativeServer
from ._transport import Stream


class _Accepted(Stream):
    """The connection the server accepted next, opened with the agent side's settings."""

    def __init__(self, native: NativeServer) -> None:
        self._native = native
        self.peer: Tuple[str, str] = ("", "")

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        accepted = self._native.accept(settings)
        if accepted is None:
            raise RuntimeError("no accepted connection waits")
        connection, address, transport = accepted
        self.peer = (address, transport)
        return connection


class AgentServer:
    """A running server: every connection gets its own agent from the
    factory. Made by :func:`serve_agent`."""

    def __init__(
        self,
        native: NativeServer,
        agent_factory: Callable[[AgentSideConnection], Agent],
        limits: Optional[Limits],
        connection_class: Any,
        unchecked_methods: Sequence[str] = (),
    ) -> None:
        self._native = native
        self._agent_factory = agent_factory
        self._limits = limits
        self._unchecked_methods = list(unchecked_methods)
        self._connection_class = connection_class
        self._connections: Set[AgentSideConnection] = set()
        self._loop = asyncio.get_running_loop()
        self._stopped: "asyncio.Future[None]" = self._loop.create_future()
        self._loop.add_reader(native.fileno(), self._on_accepted)

    @property
    def websocket_url(self) -> str:
        """``ws://HOST:PORT/acp`` (``wss://`` with TLS)."""
        return self._native.websocket_url

    @property
    def http_url(self) -> str:
        """``http://HOST:PORT/acp`` (``https://`` with TLS): Streamable HTTP."""
        return self._native.http_url

    @property
    def address(self) -> Tuple[str, int]:
        """The host and port served (with port 0, the port the system chose)."""
        return self._native.address

    @property
    def connections(self) -> int:
        """Connections open now."""
        return self._native.connections()

    def _on_accepted(self) -> None:
        while self._native.waiting():
            connection = self._connection_class(
                self._agent_factory,
                _Accepted(self._native),
                limits=self._limits,
                unchecked_methods=self._unchecked_methods,
            )
            self._connections.add(connection)
            connection.closed.add_done_callback(lambda _closed, c=connection: self._connections.discard(c))

    async def serve_forever(self) -> None:
        """Serve until :meth:`aclose` (or the task is cancelled)."""
        await asyncio.shield(self._stopped)

    async def drain(self, timeout: float = 30.0) -> None:
        """Drain, then stop: take no new connection (503; ``/readyz`` says
        ``draining``), end each connection once its agent has answered every
        request of its client's, and after ``timeout`` seconds end what is
        left, as :meth:`aclose` does."""
        await self._stop(functools.partial(self._native.drain, int(timeout * 1000)))

    async def aclose(self) -> None:
        """Stop accepting and end every connection: each agent's connection
        closes, failing what is pending on both sides."""
        await self._stop(self._native.close)

    async def _stop(self, stop_native: Callable[[], None]) -> None:
        """Run ``stop_native`` off the event loop (the agents keep answering
        on it), then wait for the connections to close."""
        if self._stopped.done():
            return
        self._loop.remove_reader(self._native.fileno())
        await self._loop.run_in_executor(None, stop_native)
        open_connections = [connection.closed for connection in self._connections]
        if open_connections:
            await asyncio.wait(open_connections, timeout=5)
        if not self._stopped.done():
            self._stopped.set_result(None)


@contextlib.asynccontextmanager
async def serve_agent(
    agent_factory: Callable[[AgentSideConnection], Agent],
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    token: Optional[str] = None,
    path: str = "/acp",
    tls_cert: Optional[str] = None,
    tls_key: Optional[str] = None,
    max_connections: Optional[int] = None,
    max_message_size: Optional[int] = None,
    max_buffered_bytes: Optional[int] = None,
    max_replay_bytes: Optional[int] = None,
    idle_timeout: Optional[float] = None,
    output_stall_timeout: Optional[float] = None,
    max_id_length: Optional[int] = None,
    max_buffered_session_streams: Optional[int] = None,
    attach: bool = False,
    limits: Optional[Limits] = None,
    unchecked_methods: Sequence[str] = (),
    connection_class: Any = AgentSideConnection,
) -> AsyncIterator[AgentServer]:
    """Serve ``agent_factory(connection)`` to remote clients, a new agent per
    connection, over WebSocket and Streamable HTTP at ``path``::

        async with serve_agent(MyAgent, "127.0.0.1", 8080, token=secret) as server:
            print(server.http_url)
            await server.serve_forever()

    ``token``: clients must send ``Authorization: Bearer <token>`` (401
    otherwise, before any agent starts). ``tls_cert``/``tls_key``: PEM files
    to serve ``wss://`` and ``https://``. ``attach``: let several clients
    share a session (a ``session/load`` of a session live on another
    connection attaches as an observer; docs/session-attach.md). Streamable HTTP:
    ``max_id_length``, the longest session or request id a client may send (400
    beyond it); ``max_buffered_session_streams``, the sessions of a connection
    holding output no client reads (one more ends it). Timeouts are in seconds (0: none;
    None, as for every limit: :class:`Defaults`);
    ``limits`` bound each agent's connection; ``unchecked_methods`` as for
    :class:`Connection`. On exit every connection ends."""
    if (tls_cert is None) != (tls_key is None):
        raise ValueError("tls_cert and tls_key go together")
    options: Dict[str, Any] = {
        "path": path,
        "token": token,
        "max_connections": max_connections,
        "max_message_size": max_message_size,
        "max_buffered_bytes": max_buffered_bytes,
        "max_replay_bytes": max_replay_bytes,
        "idle_timeout_ms": None if idle_timeout is None else int(idle_timeout * 1000),
        "output_stall_timeout_ms": None if output_stall_timeout is None else int(output_stall_timeout * 1000),
        "max_id_length": max_id_length,
        "max_buffered_session_streams": max_buffered_session_streams,
        "tls_cert": None if tls_cert is None else os.fspath(tls_cert),
        "tls_key": None if tls_key is None else os.fspath(tls_key),
        "attach": attach,
    }
    loop = asyncio.get_running_loop()
    native = await loop.run_in_executor(None, NativeServer.bind, f"{host}:{port}", options)
    server = AgentServer(native, agent_factory, limits, connection_class, unchecked_methods)
    try:
        yield server
    finally:
        await server.aclose()


__all__ = ["AgentServer", "serve_agent"]
