"""Streams a connection can run over. The engine owns the bytes: stdio and
spawned processes are read and written in Rust; a caller's asyncio streams
are fed to it on the loop's thread (``FedStream``)."""

from __future__ import annotations

import asyncio
import os
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence

from ._native import NativeConnection
from ._tables import Defaults


class Stream:
    """Where a connection's bytes go. Make one with :func:`stdio_stream`,
    :func:`spawn_stream`, :func:`remote_stream`, :func:`asyncio_stream` or
    :func:`fd_stream`."""

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        raise NotImplementedError

    def _after_open(
        self,
        loop: asyncio.AbstractEventLoop,
        input_handled: Callable[[], Awaitable[None]],
        input_fed: Callable[[], None],
    ) -> Optional[Callable[[], Awaitable[None]]]:
        """Start helper tasks; return what to await once the connection closed.
        ``input_handled()`` completes once the connection has handled what the
        stream gave the engine so far (for a stream that hands on one message
        at a time, as the official Connection handles each before the next);
        ``input_fed()`` says the stream gave it more (``FedStream``)."""
        return None

    def _on_output(self) -> None:
        """The engine may have written output (a ``FedStream`` passes it on)."""


class _Stdio(Stream):
    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        return NativeConnection.stdio(settings)


class _Spawn(Stream):
    def __init__(self, command: str, args: Sequence[str], env: Optional[Mapping[str, str]], cwd: Optional[str]) -> None:
        self.command = command
        self.args = [str(arg) for arg in args]
        self.env = None if env is None else [(str(k), str(v)) for k, v in env.items()]
        self.cwd = None if cwd is None else os.fspath(cwd)

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        return NativeConnection.spawn(settings, self.command, self.args, self.env, self.cwd)


class _Remote(Stream):
    def __init__(
        self,
        url: str,
        token: Optional[str],
        ca_file: Optional[str],
        reconnect_timeout: Optional[float],
        headers: Optional[Mapping[str, str]] = None,
        connect_timeout: Optional[float] = Defaults.CONNECT_TIMEOUT,
    ) -> None:
        self.url = url
        self.token = token
        self.ca_file = ca_file
        self.reconnect_timeout_ms = None if reconnect_timeout is None else int(reconnect_timeout * 1000)
        self.headers = [(str(name), str(value)) for name, value in (headers or {}).items()]
        self.connect_timeout_ms = _engine_connect_timeout(connect_timeout)

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        return NativeConnection.remote(
            settings,
            self.url,
            self.token,
            self.ca_file,
            self.reconnect_timeout_ms,
            self.headers or None,
            self.connect_timeout_ms,
        )


def _engine_connect_timeout(connect_timeout: Optional[float]) -> int:
    """A ``connect_timeout`` in seconds as the engine takes it (0: wait for ever)."""
    if connect_timeout is None:
        return 0
    if connect_timeout <= 0:
        raise ValueError("connect_timeout must be positive (None: wait for ever)")
    return max(1, round(connect_timeout * 1000))


class _Fds(Stream):
    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        return NativeConnection.from_fds(settings, self.read_fd, self.write_fd)


class FedStream(Stream):
    """A stream whose bytes Python moves (the engine's ``Transport::fed``):
    subclasses hand the engine what the peer sent (``_copy_in``, through
    ``_feed``) and pass on what it writes (``_copy_out``, from
    ``_engine_output`` or ``_engine_lines``). The connection reads the fed
    bytes on the loop's thread when it pumps: no socket, no thread between."""

    _native: Optional[NativeConnection] = None
    _loop: Optional[asyncio.AbstractEventLoop] = None
    # Completes once the connection handled what was fed so far (`_after_open`).
    _input_handled: Optional[Callable[[], Awaitable[None]]] = None
    # Tells the connection that input was fed: it pumps.
    _input_fed: Optional[Callable[[], None]] = None
    # `_engine_output` waiting for the engine to write.
    _output_waiter: "Optional[asyncio.Future[None]]" = None

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        native = NativeConnection.fed(settings)
        self._native = native
        return native

    def _after_open(
        self,
        loop: asyncio.AbstractEventLoop,
        input_handled: Callable[[], Awaitable[None]],
        input_fed: Callable[[], None],
    ) -> Callable[[], Awaitable[None]]:
        self._loop = loop
        self._input_handled = input_handled
        self._input_fed = input_fed
        inbound = loop.create_task(self._feed_engine())
        outbound = loop.create_task(self._copy_out())

        async def finished() -> None:
            # The connection closed, its output ended: what is left of it
            # is passed on; nothing more is fed.
            inbound.cancel()
            self._on_output()
            await asyncio.gather(inbound, outbound, return_exceptions=True)
            await self._closed()

        return finished

    def _on_output(self) -> None:
        waiter = self._output_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _feed(self, data: bytes, *, wait: bool = True) -> bool:
        """Hand the engine bytes the peer sent; with ``wait``, return once the
        connection read them and handled what they brought (the input stays
        bounded). False once the connection reads no more."""
        native = self._native
        assert native is not None and self._input_fed is not None and self._input_handled is not None
        if not native.feed(data):
            return False
        self._input_fed()
        while wait and native.input_backlog() > 0 and not native.is_closed:
            await self._input_handled()
        return True

    async def _feed_engine(self) -> None:
        native = self._native
        assert native is not None and self._input_fed is not None
        try:
            await self._copy_in()
        except OSError:
            pass
        finally:
            native.end_input()  # the engine reads the end of its input
            self._input_fed()

    async def _engine_output(self) -> AsyncIterator[bytes]:
        """What the engine writes, as it comes; ends with its output."""
        native = self._native
        loop = self._loop
        assert native is not None and loop is not None
        while True:
            chunk = native.take_output()
            if chunk is not None:
                yield chunk
                continue
            if native.output_ended():
                return
            await self._more_output()

    async def _more_output(self) -> None:
        """Wait until the engine may have written more (`_on_output`)."""
        native = self._native
        loop = self._loop
        assert native is not None and loop is not None
        if native.is_closed:
            # Its output ends in a moment, on the engine's thread, with no
            # wake-up once the connection stopped listening for them.
            await asyncio.sleep(0.001)
            return
        waiter: "asyncio.Future[None]" = loop.create_future()
        self._output_waiter = waiter
        try:
            await waiter
        finally:
            self._output_waiter = None

    async def _engine_lines(self) -> AsyncIterator[bytes]:
        """The lines (messages) the engine writes, for a ``_copy_out`` that
        hands them on one at a time; ends with the engine's output."""
        partial = b""
        async for chunk in self._engine_output():
            *lines, partial = (partial + chunk).split(b"\n")
            for line in lines:
                yield line

    async def _copy_in(self) -> None:
        raise NotImplementedError

    async def _copy_out(self) -> None:
        raise NotImplementedError

    def _output_failed(self) -> None:
        """The peer takes no more: the connection closes (its writes would
        otherwise wait for a taker forever)."""
        if self._native is not None:
            self._native.close()

    async def _closed(self) -> None:
        """After both copies ended."""


class _AsyncioStreams(FedStream):
    """Two tasks move bytes between the engine and the caller's streams; what
    the engine writes while the writer needs no draining is written at once."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self._transport: Optional[asyncio.WriteTransport] = getattr(writer, "transport", None)

    def _on_output(self) -> None:
        waiter = self._output_waiter
        native = self._native
        transport = self._transport
        if transport is None or native is None or waiter is None or waiter.done():
            # The copy task is busy (draining the writer): it takes the output next.
            return super()._on_output()
        chunk = native.take_output()
        if chunk is None:
            if native.output_ended():
                waiter.set_result(None)  # the copy task finishes
            return
        try:
            self.writer.write(chunk)
        except (OSError, RuntimeError):
            self._output_failed()
            waiter.set_result(None)  # the copy task finishes with the output
            return
        if transport.is_closing() or transport.get_write_buffer_size() > 0:
            # The writer holds some: the copy task drains it (and finds out
            # whether the peer is gone).
            waiter.set_result(None)

    async def _copy_in(self) -> None:
        try:
            while True:
                chunk = await self.reader.read(65536)
                if not chunk or not await self._feed(chunk):
                    break
        except asyncio.IncompleteReadError:
            pass

    async def _copy_out(self) -> None:
        native = self._native
        assert native is not None
        try:
            while True:
                chunk = native.take_output()
                if chunk is not None:
                    self.writer.write(chunk)
                # Waits only while the writer holds much; raises once the
                # peer is gone (also for what `_on_output` wrote).
                await self.writer.drain()
                if chunk is not None:
                    continue
                if native.output_ended():
                    break
                await self._more_output()
        except (OSError, RuntimeError):
            self._output_failed()
        finally:
            try:
                self.writer.close()
            except (OSError, RuntimeError):
                pass


def stdio_stream() -> Stream:
    """This process's stdin and stdout (an agent launched by its client)."""
    return _Stdio()


def spawn_stream(
    command: str,
    *args: str,
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
) -> Stream:
    """A child process started with ``command args...``: its stdin and
    stdout; its stderr is this process's. ``env`` adds to this process's
    environment. The child is reaped when the connection closes (killed if
    it has not exited half a second after its stdin closed)."""
    return _Spawn(command, args, env, cwd)


def asyncio_stream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Stream:
    """A caller's asyncio streams (a TCP or Unix socket, a subprocess's pipes)."""
    return _AsyncioStreams(reader, writer)


def remote_stream(
    url: str,
    *,
    token: Optional[str] = None,
    ca_file: Optional[str] = None,
    reconnect_timeout: Optional[float] = None,
    headers: Optional[Mapping[str, str]] = None,
    connect_timeout: Optional[float] = Defaults.CONNECT_TIMEOUT,
) -> Stream:
    """A remote agent at ``url``: ``ws://`` or ``wss://`` (WebSocket), ``http://``
    or ``https://`` (Streamable HTTP), as ``acp-engine serve`` and the official
    SDKs' servers serve them, with ``Authorization: Bearer <token>`` when
    given; ``ca_file`` (PEM) trusts a private CA besides the system's. The
    connection is made in the background; if it fails, the connection closes
    with the reason and pending calls fail.

    ``reconnect_timeout`` (seconds): when a Streamable HTTP event stream
    breaks, reopen it after the last event received (the server sends what
    was lost, once); resume a broken WebSocket likewise (the connection is
    asked to be resumable: docs/websocket-resume.md); retry POSTs that
    cannot reach the server; with backoff, for up to this long before the
    connection closes. None or 0
    (the default): close at the first break, so that a dead server fails
    what is pending at once. ``headers``: more for the WebSocket handshake or
    every HTTP request (an API gateway's key, say).

    ``connect_timeout`` (seconds, default 10): how long the server has to
    take the connection (the TCP connect, the TLS handshake and the
    WebSocket upgrade); one that has not by then closes the connection with
    the reason. None: wait for ever."""
    ca = None if ca_file is None else os.fspath(ca_file)
    return _Remote(url, token, ca, reconnect_timeout, headers, connect_timeout)


def fd_stream(read_fd: int, write_fd: int) -> Stream:
    """Two file descriptors (duplicated; the caller still closes its own)."""
    return _Fds(read_fd, write_fd)


__all__: List[str] = ["Stream", "stdio_stream", "spawn_stream", "asyncio_stream", "fd_stream"]
