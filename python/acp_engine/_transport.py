"""Streams a connection can run over. The engine owns the bytes: stdio and
spawned processes are read and written in Rust; a caller's asyncio streams
are bridged through a socket pair."""

from __future__ import annotations

import asyncio
import os
import socket
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence

from ._native import NativeConnection


class Stream:
    """Where a connection's bytes go. Make one with :func:`stdio_stream`,
    :func:`spawn_stream`, :func:`remote_stream`, :func:`asyncio_stream` or
    :func:`fd_stream`."""

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        raise NotImplementedError

    def _after_open(
        self, loop: asyncio.AbstractEventLoop, input_handled: Callable[[], Awaitable[None]]
    ) -> Optional[Callable[[], Awaitable[None]]]:
        """Start helper tasks; return what to await once the connection closed.
        ``input_handled()`` completes once the connection has handled what the
        stream gave the engine so far (for a stream that hands on one message
        at a time, as the official Connection handles each before the next)."""
        return None


class _Stdio(Stream):
    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        return NativeConnection.stdio(settings)


class _Spawn(Stream):
    def __init__(
        self, command: str, args: Sequence[str], env: Optional[Mapping[str, str]], cwd: Optional[str]
    ) -> None:
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
    ) -> None:
        self.url = url
        self.token = token
        self.ca_file = ca_file
        self.reconnect_timeout_ms = None if reconnect_timeout is None else int(reconnect_timeout * 1000)
        self.headers = [(str(name), str(value)) for name, value in (headers or {}).items()]

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        return NativeConnection.remote(
            settings, self.url, self.token, self.ca_file, self.reconnect_timeout_ms, self.headers or None
        )


class _Fds(Stream):
    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        return NativeConnection.from_fds(settings, self.read_fd, self.write_fd)


class SocketPairStream(Stream):
    """A stream the engine reads and writes as one end of a socket pair;
    subclasses move bytes between the other end and whatever the caller
    has (``_copy_in``: into the engine; ``_copy_out``: out of it)."""

    _ours: Optional[socket.socket] = None
    _native: Optional[NativeConnection] = None
    # Completes once the connection handled what was fed so far (`_after_open`).
    _input_handled: Optional[Callable[[], Awaitable[None]]] = None

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        engine_end, ours = socket.socketpair()
        try:
            native = NativeConnection.from_fds(settings, engine_end.fileno(), engine_end.fileno())
        finally:
            engine_end.close()  # the engine holds duplicates
        ours.setblocking(False)
        self._ours = ours
        self._native = native
        return native

    def _after_open(
        self, loop: asyncio.AbstractEventLoop, input_handled: Callable[[], Awaitable[None]]
    ) -> Callable[[], Awaitable[None]]:
        ours = self._ours
        assert ours is not None
        self._input_handled = input_handled
        inbound = loop.create_task(self._feed_engine(loop, ours))
        outbound = loop.create_task(self._take_from_engine(loop, ours))

        async def finished() -> None:
            # The engine's end is closed: nothing more to feed it.
            inbound.cancel()
            await asyncio.gather(inbound, outbound, return_exceptions=True)
            ours.close()
            await self._closed()

        return finished

    async def _feed_engine(self, loop: asyncio.AbstractEventLoop, ours: socket.socket) -> None:
        try:
            await self._copy_in(loop, ours)
        except OSError:
            pass
        finally:
            try:
                ours.shutdown(socket.SHUT_WR)  # the engine reads end of input
            except OSError:
                pass

    async def _take_from_engine(self, loop: asyncio.AbstractEventLoop, ours: socket.socket) -> None:
        try:
            await self._copy_out(loop, ours)
        finally:
            # The engine wrote its last (or the loop is shutting down with the
            # connection left open): the socket goes now, not at garbage collection.
            ours.close()

    async def _copy_in(self, loop: asyncio.AbstractEventLoop, ours: socket.socket) -> None:
        raise NotImplementedError

    async def _copy_out(self, loop: asyncio.AbstractEventLoop, ours: socket.socket) -> None:
        raise NotImplementedError

    @staticmethod
    async def _engine_lines(loop: asyncio.AbstractEventLoop, ours: socket.socket) -> AsyncIterator[bytes]:
        """The lines (messages) the engine writes, for a ``_copy_out`` that
        hands them on one at a time; ends with the engine's output."""
        partial = b""
        while True:
            try:
                chunk = await loop.sock_recv(ours, 65536)
            except OSError:
                return
            if not chunk:
                return
            *lines, partial = (partial + chunk).split(b"\n")
            for line in lines:
                yield line

    async def _closed(self) -> None:
        """After both copies ended and the socket is closed."""


class _AsyncioStreams(SocketPairStream):
    """Two tasks copy between the socket pair and the caller's streams."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def _copy_in(self, loop: asyncio.AbstractEventLoop, ours: socket.socket) -> None:
        try:
            while True:
                chunk = await self.reader.read(65536)
                if not chunk:
                    break
                await loop.sock_sendall(ours, chunk)
        except asyncio.IncompleteReadError:
            pass

    async def _copy_out(self, loop: asyncio.AbstractEventLoop, ours: socket.socket) -> None:
        try:
            while True:
                chunk = await loop.sock_recv(ours, 65536)
                if not chunk:
                    break
                self.writer.write(chunk)
                await self.writer.drain()
        except OSError:
            pass
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
    every HTTP request (an API gateway's key, say)."""
    return _Remote(url, token, None if ca_file is None else os.fspath(ca_file), reconnect_timeout, headers)


def fd_stream(read_fd: int, write_fd: int) -> Stream:
    """Two file descriptors (duplicated; the caller still closes its own)."""
    return _Fds(read_fd, write_fd)


__all__: List[str] = ["Stream", "stdio_stream", "spawn_stream", "asyncio_stream", "fd_stream"]
