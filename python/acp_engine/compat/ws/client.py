"""``acp.ws.client``: the official WebSocket client transport, dialled by
the engine."""

from __future__ import annotations

from typing import Mapping, Optional

from .._cookies import MemoryAcpCookieStore
from .._remote_client import RemoteClientStream

__all__ = ["create_websocket_stream"]


async def create_websocket_stream(
    url: str,
    *,
    headers: Optional[Mapping[str, str]] = None,
    cookie_store: Optional[MemoryAcpCookieStore] = None,
) -> RemoteClientStream:
    """A WebSocket (``ws://``, ``wss://``) client stream for
    :func:`acp.connect_to_agent`. ``headers`` and the ``cookie_store``'s
    cookies go with the handshake. The engine connects when a connection is
    made on the stream, and keeps the cookies the server sets for that
    connection (they are not written back to the store)."""
    return RemoteClientStream(url, ("ws", "wss"), headers, cookie_store)
