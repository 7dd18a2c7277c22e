"""``acp.http.server``: the official ``AcpServer`` on the engine. Streamable
HTTP requests are passed on, as they are, to an engine server on loopback
(started at the first request), which runs that transport: connection ids,
event streams, replay, limits. Each connection it accepts gets an agent from
``agent_factory``. Needs the ``http`` extra (httpx2)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import Any, Optional, Set

from ..._native import NativeServer
from ..._server import _Accepted
from .._serving import AgentFactory, ServedAgent, check_served, connection_for
from .protocol import ACP_ENDPOINT_PATH

__all__ = ["AcpServer", "AgentFactory"]


# Request and answer headers that belong to one hop, not to the message.
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_HOP_HEADERS = frozenset({b"connection", b"keep-alive", b"transfer-encoding", b"upgrade", b"host", b"content-length"})


class AcpServer:
    """One agent from ``agent_factory(connection)`` per ACP connection.
    Serve it with :func:`acp.http.asgi.create_asgi_app`, or call
    :meth:`handle` from an ASGI app of your own."""

    def __init__(self, agent_factory: ServedAgent) -> None:
        check_served(agent_factory)
        self._agent_factory = agent_factory
        self._engine: Optional[NativeServer] = None
        self._starting: Optional[asyncio.Future[NativeServer]] = None
        self._connections: Set[Any] = set()
        self._client: Any = None

    async def handle(self, scope: Any, receive: Any, send: Any) -> None:
        """An ASGI ``http`` request: passed to the engine's server, its answer streamed back."""
        import httpx2

        engine = await self._server()
        if self._client is None:
            # Event streams last as long as their connection: no read timeout,
            # and no pool limit (each holds a connection; the engine's server
            # bounds connections). Loopback: no proxy from the environment.
            self._client = httpx2.AsyncClient(
                timeout=httpx2.Timeout(None),
                limits=httpx2.Limits(max_connections=None, max_keepalive_connections=64),
                trust_env=False,
            )
        headers = [(name, value) for name, value in scope["headers"] if name.lower() not in _HOP_HEADERS]
        gone = asyncio.Event()
        # An event stream's GET has no body: its `receive` only tells of the client leaving.
        body = _body(receive, gone) if scope["method"] in _BODY_METHODS else None
        request = self._client.build_request(scope["method"], engine.http_url, headers=headers, content=body)
        response = await self._client.send(request, stream=True)
        # Cookies are the client's, passed back to it: the forwarder keeps none.
        self._client.cookies.clear()
        # A client that goes away (an event stream it stops) ends the request upstream too.
        watch = asyncio.ensure_future(_disconnected(receive, gone))
        try:
            answer = [(n, v) for n, v in response.headers.raw if n.lower() not in _HOP_HEADERS]
            await send({"type": "http.response.start", "status": response.status_code, "headers": answer})
            chunks = response.aiter_raw().__aiter__()
            while True:
                next_chunk = asyncio.ensure_future(chunks.__anext__())
                stopped = asyncio.ensure_future(gone.wait())
                done, _ = await asyncio.wait({next_chunk, stopped}, return_when=asyncio.FIRST_COMPLETED)
                if next_chunk not in done:
                    next_chunk.cancel()
                    break
                stopped.cancel()
                try:
                    chunk = next_chunk.result()
                except StopAsyncIteration:
                    break
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            watch.cancel()
            await response.aclose()

    async def close(self) -> None:
        """End every connection this server made and stop its engine server
        (a later request starts a new one, which knows none of the old
        connections)."""
        engine, client = self._engine, self._client
        self._engine, self._starting, self._client = None, None, None
        if engine is not None:
            loop = asyncio.get_running_loop()
            loop.remove_reader(engine.fileno())
            await loop.run_in_executor(None, engine.close)
        for connection in list(self._connections):
            await connection.close()
        if client is not None:
            await client.aclose()

    async def _server(self) -> NativeServer:
        if self._engine is not None:
            return self._engine
        loop = asyncio.get_running_loop()
        if self._starting is None:
            # Refusals read as the official Python server's: `{"error": reason}`.
            options = {"path": ACP_ENDPOINT_PATH, "refusal_body": "json"}
            self._starting = loop.run_in_executor(None, NativeServer.bind, "127.0.0.1:0", options)
        engine = await self._starting
        if self._engine is None:
            self._engine = engine
            loop.add_reader(engine.fileno(), self._accept_waiting)
        return engine

    def _accept_waiting(self) -> None:
        engine = self._engine
        while engine is not None and engine.waiting():
            connection = connection_for(self._agent_factory, _Accepted(engine))
            self._connections.add(connection)
            ended = asyncio.ensure_future(connection.listen())
            ended.add_done_callback(functools.partial(_forget, self._connections, connection))


def _forget(connections: Set[Any], connection: Any, _ended: object) -> None:
    connections.discard(connection)


async def _body(receive: Any, gone: asyncio.Event) -> Any:
    """The request's body, as the ASGI server hands it over."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            gone.set()
            return
        yield message.get("body", b"")
        if not message.get("more_body", False):
            return


async def _disconnected(receive: Any, gone: asyncio.Event) -> None:
    with contextlib.suppress(Exception):
        while not gone.is_set():
            if (await receive())["type"] == "http.disconnect":
                gone.set()

