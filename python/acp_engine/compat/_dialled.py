"""The official client ``Transport``'s ``send()`` / ``receive()`` /
``close()`` for the remote client streams (``acp.ws.client``,
``acp.http.client``): the engine dials the agent (``NativeDial``: the
handshake, TLS, framing and limits) and hands over a socket of lines, which
these read and write. A connection given a stream whose messages were never
moved by hand runs over the remote agent in the engine itself; given one
whose were, over the same socket, so nothing already read is lost."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any, Dict, List, Optional, Tuple

from .._native import NativeConnection, NativeDial
from .._tables import Defaults
from .._transport import Stream, asyncio_stream


class DialledMessages(Stream):
    """A remote client stream; subclasses say how it opens untouched and
    where its dialled socket comes from."""

    def __init__(self) -> None:
        self._native: Optional[NativeConnection] = None
        # The dialled socket as asyncio streams, once send() or receive() ran.
        self._pipe: Optional[Tuple[asyncio.StreamReader, asyncio.StreamWriter]] = None
        # A connection's stream over that pipe.
        self._piped: Optional[Stream] = None
        # Held while the pipe is made, so that a send() and a receive() at
        # once dial once.
        self._piping = asyncio.Lock()
        self._closed = False

    def _open_untouched(self, settings: Dict[str, Any]) -> NativeConnection:
        raise NotImplementedError

    async def _dialled_socket(self) -> int:
        """The dialled agent as a socket's descriptor (the caller owns it)."""
        raise NotImplementedError

    def _close_untouched(self) -> None:
        """Stop a dial, or close what was dialled, that nothing took."""

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        if self._closed:
            raise ConnectionError("Transport closed")
        if self._pipe is None:
            self._native = self._open_untouched(settings)
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
        if self._pipe is not None:
            return self._pipe
        async with self._piping:
            if self._pipe is None:
                dialled = socket.socket(fileno=await self._dialled_socket())
                # A message read by hand may be as large as a connection's.
                self._pipe = await asyncio.open_unix_connection(sock=dialled, limit=Defaults.MAX_MESSAGE_SIZE)
        return self._pipe

    async def send(self, message: Dict[str, Any]) -> None:
        """Send one JSON-RPC message."""
        if self._closed:
            raise ConnectionError("Transport closed")
        _, writer = await self._messages()
        writer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        await writer.drain()

    async def receive(self) -> Optional[Dict[str, Any]]:
        """The next message the server sent; None once the connection
        closed. What is not JSON (a binary frame, say) is skipped."""
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
        """Close the connection to the agent (and the connection made on it)."""
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
            self._close_untouched()


async def wait_for_dial(dial: NativeDial) -> List[str]:
    """Wait for `dial` on the loop: the `Set-Cookie` values it was answered
    with (raises OSError with the reason if it failed)."""
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
