"""``acp.ws.client``: the official WebSocket client transport, dialled by
the engine when ``create_websocket_stream`` is awaited."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional
from urllib.parse import urlsplit

from ..._native import NativeConnection, NativeDial
from .._cookies import MemoryAcpCookieStore
from .._dialled import DialledMessages, wait_for_dial

__all__ = ["MemoryAcpCookieStore", "WebSocketClientStream", "create_websocket_stream"]


class WebSocketClientStream(DialledMessages):
    """A connected WebSocket: give it to :func:`acp.connect_to_agent` (or a
    ``ClientSideConnection``), and the engine runs the connection over the
    socket itself. Its ``send()`` / ``receive()`` / ``close()`` are the
    official ``Transport``'s, for messages moved by hand: once they are used,
    a connection made later runs over what they read and write."""

    def __init__(self, dial: NativeDial) -> None:
        super().__init__()
        self._dial = dial

    def _open_untouched(self, settings: Dict[str, Any]) -> NativeConnection:
        return self._dial.connection(settings)

    async def _dialled_socket(self) -> int:
        return self._dial.socket()

    def _close_untouched(self) -> None:
        self._dial.close()


async def create_websocket_stream(
    url: str,
    *,
    headers: Optional[Mapping[str, str]] = None,
    cookie_store: Optional[MemoryAcpCookieStore] = None,
) -> WebSocketClientStream:
    """Connect a WebSocket (``ws://``, ``wss://``) and return its stream, for
    :func:`acp.connect_to_agent`. ``headers`` and the ``cookie_store``'s
    cookies go with the handshake; the cookies the server sets in its answer
    are kept in the store (reuse it across reconnects: a load balancer's
    affinity cookie brings them back to the same backend). Raises OSError
    with the reason when the server cannot be reached or refuses."""
    if urlsplit(url).scheme not in ("ws", "wss"):
        raise ValueError(f"{url}: expected a ws or wss URL")
    store = cookie_store if cookie_store is not None else MemoryAcpCookieStore()
    sent = dict(headers or {})
    cookies = store.cookie_header()
    if cookies and not any(name.lower() == "cookie" for name in sent):
        sent["Cookie"] = cookies
    dial = NativeDial.start(url, None, None, None, [(str(k), str(v)) for k, v in sent.items()] or None)
    set_cookies = await wait_for_dial(dial)
    store.store_set_cookies(set_cookies)
    return WebSocketClientStream(dial)
