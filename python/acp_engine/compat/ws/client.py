"""``acp.ws.client``: the official WebSocket client transport, dialled by
the engine when ``create_websocket_stream`` is awaited."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any, Dict, Mapping, Optional, Tuple
from urllib.parse import urlsplit

from ..._native import NativeConnection, NativeDial
from ..._tables import Defaults
from ..._transport import Stream, asyncio_stream
from .._cookies import MemoryAcpCookieStore

__all__ = ["MemoryAcpCookieStore", "WebSocketClientStream", "create_websocket_stream"]



class WebSocketClientStream(Stream):
    """A connected WebSocket: give it to :func:`acp.connect_to_agent` (or a
    ``ClientSideConnection``), and the engine runs the connection over the
    socket itself. Its ``send()`` / ``receive()`` / ``close()`` are the
    official ``Transport``'s, for messages moved by hand: once they are used,
    a connection made later runs over what they read and write."""

    def __init__(self, dial: NativeDial) -> None:
        self._dial = dial
        self._native: Optional[NativeConnection] = None
        # The dialled socket as asyncio streams, once send() or receive() ran.
        self._pipe: Optional[Tuple[asyncio.StreamReader, asyncio.StreamWriter]] = None
        # A connection's stream over that pipe.
        self._piped: Optional[Stream] = None
        self._closed = False

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        if self._closed:
            raise ConnectionError("Transport closed")
        if self._pipe is None:
            self._native = self._dial.connection(settings)
        else:
            self._piped = asyncio_stream(*self._pipe)
            self._native = self._piped._open(settings)
        return self._native

    def _after_open(self, loop: asyncio.AbstractEventLoop, input_handled: Any, input_fed: Any) -> Any:
        return None if self._piped is None else self._piped._after_open(loop, input_handled, input_fed)

    def _on_output(self) -> None:
        if self._piped is not None:
            self._piped._on_output()

    async def _messages(self) -> Tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._native is not None:
            raise RuntimeError("a connection runs on this stream: it sends and receives the messages")
        if self._pipe is None:
            dialled = socket.socket(fileno=self._dial.socket())
            # A message read by hand may be as large as a connection's.
            self._pipe = await asyncio.open_unix_connection(sock=dialled, limit=Defaults.MAX_MESSAGE_SIZE)
        return self._pipe

    async def send(self, message: Dict[str, Any]) -> None:
        """Send one JSON-RPC message as a text frame."""
        if self._closed:
            raise ConnectionError("Transport closed")
        _, writer = await self._messages()
        writer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        await writer.drain()

    async def receive(self) -> Optional[Dict[str, Any]]:
        """The next message the server sent; None once the socket closed.
        What is not JSON (a binary frame, say) is skipped."""
        if self._closed:
            return None
        reader, _ = await self._messages()
        while True:
            try:
                line = await reader.readline()
            except (ConnectionError, ValueError):
                return None
            if not line:
                return None
            try:
                message: Dict[str, Any] = json.loads(line)
            except ValueError:
                continue
            return message

    async def close(self) -> None:
        """Close the socket (and the connection made on it)."""
        if self._closed:
            return
        self._closed = True
        if self._native is not None:
            self._native.close()
        elif self._pipe is not None:
            writer = self._pipe[1]
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass
        else:
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
    set_cookies = await _dialled(dial)
    store.store_set_cookies(set_cookies)
    return WebSocketClientStream(dial)


async def _dialled(dial: NativeDial) -> list[str]:
    """Wait for `dial` on the loop: the `Set-Cookie` values it was answered with."""
    set_cookies = dial.outcome()
    if set_cookies is not None:
        return set_cookies
    loop = asyncio.get_running_loop()
    ended: "asyncio.Future[None]" = loop.create_future()

    def signalled() -> None:
        if not ended.done():
            ended.set_result(None)

    loop.add_reader(dial.fileno(), signalled)
    try:
        await ended
    finally:
        loop.remove_reader(dial.fileno())
    set_cookies = dial.outcome()
    assert set_cookies is not None, "the dial signals once it ended"
    return set_cookies
