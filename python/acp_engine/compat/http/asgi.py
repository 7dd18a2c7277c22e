"""``acp.http.asgi``: a Starlette app serving ACP over Streamable HTTP
(through :class:`AcpServer`, on the engine) and WebSocket (the engine over
the socket's frames) at one path. Needs the ``http`` extra."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import AsyncIterator

from starlette.applications import Starlette
from starlette.routing import Route, WebSocketRoute
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from ..ws.server import handle_websocket
from .protocol import ACP_ENDPOINT_PATH
from .._serving import ServedAgent
from .server import AcpServer

__all__ = ["create_asgi_app"]


def create_asgi_app(agent_factory: ServedAgent, *, path: str = ACP_ENDPOINT_PATH) -> Starlette:
    """A Starlette app with one agent per connection (from ``agent_factory``, or
    an AgentProtocolRouter's for the client's version) at ``path`` (POST, GET,
    DELETE and WebSocket). When mounting it, enter its lifespan from the
    parent's too: leaving it ends every connection."""
    server = AcpServer(agent_factory)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await server.close()

    async def websocket(websocket: WebSocket) -> None:
        await handle_websocket(agent_factory, websocket)

    class _Http:
        """Every HTTP method goes to the engine, which answers the ones it does not serve (405)."""

        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            await server.handle(scope, receive, send)

    return Starlette(
        routes=[Route(path, _Http(), methods=None), WebSocketRoute(path, websocket)],
        lifespan=lifespan,
    )


