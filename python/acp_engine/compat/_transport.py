"""``acp._transport``: the message-level seam. A :class:`Transport` moves
decoded JSON-RPC messages (dicts); ``Connection(handler, transport)`` and
``run_agent(agent, transport)`` take one instead of a pair of byte streams.

On the engine a transport is bridged to bytes: two tasks feed the engine
each message as a line and hand the transport each line it writes (a JSON
encode or decode per message, the price of a message-level API; byte
streams and stdio go straight to the engine)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any, Optional, Protocol, runtime_checkable

from .._transport import FedStream

__all__ = [
    "NdjsonTransport",
    "Transport",
    "memory_transport_pair",
]

logger = logging.getLogger(__name__)


@runtime_checkable
class Transport(Protocol):
    """A bidirectional stream of JSON-RPC messages. ``receive`` returns None
    at the end of the stream; ``send`` may raise when a message cannot be
    delivered (the connection then closes with that reason)."""

    async def send(self, message: dict[str, Any]) -> None: ...

    async def receive(self) -> dict[str, Any] | None: ...

    async def close(self) -> None: ...


def is_transport(value: Any) -> bool:
    """A message transport rather than an asyncio stream or engine Stream."""
    return all(callable(getattr(value, name, None)) for name in ("send", "receive", "close"))


class NdjsonTransport:
    """Newline-delimited JSON over asyncio streams, as a message transport
    (for code written against the official seam; a connection given the
    streams themselves lets the engine frame them, which is faster)."""

    def __init__(self, reader: asyncio.StreamReader, writer: Any, *, receive_timeout: Optional[float] = None) -> None:
        self._reader = reader
        self._writer = writer  # an asyncio StreamWriter, or anything with async send(dict) / close()
        self._receive_timeout = receive_timeout

    async def send(self, message: dict[str, Any]) -> None:
        if isinstance(self._writer, asyncio.StreamWriter):
            self._writer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            await self._writer.drain()
        else:
            await self._writer.send(message)

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await asyncio.wait_for(self._reader.readline(), timeout=self._receive_timeout)
            if not line:
                return None
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                logger.exception("Error parsing JSON-RPC message")
                continue
            if isinstance(message, dict):
                return message
            logger.warning("Ignoring non-object JSON-RPC message")

    async def close(self) -> None:
        if isinstance(self._writer, asyncio.StreamWriter):
            self._writer.close()
        else:
            await self._writer.close()


class _MemoryTransport:
    """One end of :func:`memory_transport_pair`."""

    def __init__(
        self, outbox: "asyncio.Queue[dict[str, Any] | None]", inbox: "asyncio.Queue[dict[str, Any] | None]"
    ) -> None:
        self._outbox = outbox
        self._inbox = inbox
        self._closed = False

    async def send(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise ConnectionError("Transport closed")
        await self._outbox.put(dict(message))

    async def receive(self) -> dict[str, Any] | None:
        return await self._inbox.get()

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._outbox.put_nowait(None)  # the peer's end of stream


def memory_transport_pair() -> tuple[Transport, Transport]:
    """Two linked in-process transports: what one sends, the other receives;
    closing one ends the other's stream."""
    a_to_b: "asyncio.Queue[dict[str, Any] | None]" = asyncio.Queue()
    b_to_a: "asyncio.Queue[dict[str, Any] | None]" = asyncio.Queue()
    return _MemoryTransport(a_to_b, b_to_a), _MemoryTransport(b_to_a, a_to_b)


class TransportStream(FedStream):
    """An engine stream over a message :class:`Transport`."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self._send: Optional["asyncio.Task[None]"] = None

    def cancel_send(self) -> None:
        """Closing: a send in progress is cancelled (the official Connection's
        close does the same); what the engine wrote before is still sent."""
        if self._send is not None:
            self._send.cancel()

    async def _copy_in(self) -> None:
        while True:
            try:
                message = await self.transport.receive()
            except (asyncio.CancelledError, GeneratorExit):
                raise
            except Exception:
                logger.exception("Transport receive failed; ending the connection's input")
                return
            if message is None:
                return
            line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
            # Handled before the next receive, as the official Connection
            # dispatches a message before it receives the next: a
            # $/cancel_request the transport gave finds its request running.
            # A request is the exception: the official Connection starts its
            # handler as a task, which runs only once receive() waits (a
            # request and its cancellation queued together: no handler runs).
            if not await self._feed(line, wait=not ("id" in message and "method" in message)):
                return

    async def _copy_out(self) -> None:
        async for line in self._engine_lines():
            if not await self._send_line(line):
                return

    async def _send_line(self, line: bytes) -> bool:
        """Hand one message to the transport; False once it failed."""
        loop = self._loop
        assert loop is not None
        send = loop.create_task(self.transport.send(json.loads(line)))
        self._send = send
        try:
            await asyncio.wait([send])
        finally:
            self._send = None
            if not send.done():  # this copy itself was cancelled
                send.cancel()
        if send.cancelled():
            return True
        error = send.exception()
        if error is None:
            return True
        logger.error("Transport send failed; closing the connection: %s", error)
        self._output_failed()
        return False

    async def _closed(self) -> None:
        with contextlib.suppress(Exception):
            await self.transport.close()
