"""``acp.transports``: spawn a process with its stdio as asyncio streams."""

from __future__ import annotations

import asyncio
import asyncio.subprocess as aio_subprocess
import contextlib
import os
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Dict, Mapping, Optional, Tuple, Union

from .._native import NativeConnection
from .._transport import Stream, fd_stream

__all__ = ["DEFAULT_INHERITED_ENV_VARS", "default_environment", "spawn_stdio_transport"]

# What a spawned agent inherits by default (as MCP's SDKs do): no secrets by accident.
DEFAULT_INHERITED_ENV_VARS = (
    ["APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
     "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE"]
    if os.name == "nt"
    else ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"]
)


def default_environment() -> Dict[str, str]:
    """The inherited variables above that are set (shell functions left out)."""
    return {
        key: value
        for key in DEFAULT_INHERITED_ENV_VARS
        if (value := os.environ.get(key)) is not None and not value.startswith("()")
    }


@asynccontextmanager
async def spawn_stdio_transport(
    command: str,
    *args: str,
    env: Optional[Mapping[str, str]] = None,
    cwd: Union[str, Path, None] = None,
    stderr: Optional[int] = aio_subprocess.PIPE,
    limit: Optional[int] = None,
    shutdown_timeout: float = 2.0,
) -> AsyncIterator[Tuple[asyncio.StreamReader, asyncio.StreamWriter, aio_subprocess.Process]]:
    """Start ``command``; yields (its stdout, its stdin, the process). On exit:
    close its stdin, wait, then terminate, then kill."""
    extra = {} if limit is None else {"limit": limit}
    process = await asyncio.create_subprocess_exec(
        command,
        *args,
        stdin=aio_subprocess.PIPE,
        stdout=aio_subprocess.PIPE,
        stderr=stderr,
        env=_environment(env),
        cwd=str(cwd) if cwd is not None else None,
        **extra,  # type: ignore[arg-type]
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        yield process.stdout, process.stdin, process
    finally:
        with contextlib.suppress(Exception):
            process.stdin.close()
            await asyncio.wait_for(process.stdin.wait_closed(), timeout=shutdown_timeout)
        await _stop(process, shutdown_timeout)


@asynccontextmanager
async def spawn_for_engine(
    command: str,
    *args: str,
    env: Optional[Mapping[str, str]] = None,
    cwd: Union[str, Path, None] = None,
    stderr: Optional[int] = aio_subprocess.PIPE,
    limit: Optional[int] = None,
    shutdown_timeout: float = 2.0,
) -> AsyncIterator[Tuple[Stream, aio_subprocess.Process]]:
    """Start ``command`` as :func:`spawn_stdio_transport` does, with its stdin
    and stdout on plain pipes the engine reads and writes itself (no asyncio
    streams and no copying between them; ``process.stdin`` / ``stdout`` are
    None). Yields (the stream for a connection, the process); the pipes are
    ours until the caller's connection is open. On exit, once the connection
    is closed (the child's stdin with it): wait, then terminate, then kill."""
    del limit  # asyncio's line limit: the engine has its own limits
    child_stdin, to_child = os.pipe()
    from_child, child_stdout = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            command,
            *args,
            stdin=child_stdin,
            stdout=child_stdout,
            stderr=stderr,
            env=_environment(env),
            cwd=str(cwd) if cwd is not None else None,
        )
    except BaseException:
        for fd in (to_child, from_child):
            os.close(fd)
        raise
    finally:
        for fd in (child_stdin, child_stdout):
            os.close(fd)
    stream = _OwnedFds(from_child, to_child)
    try:
        yield stream, process
    finally:
        stream.release()  # never opened: the child sees its stdin end
        await _stop(process, shutdown_timeout)


def _environment(env: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """A spawned peer's environment: the default one, with ``env`` over it."""
    merged = default_environment()
    if env:
        merged.update(env)
    return merged


async def _stop(process: aio_subprocess.Process, timeout: float) -> None:
    """Once its stdin is closed: wait for the process, then terminate it, then kill it."""
    try:
        await asyncio.wait_for(process.wait(), timeout=timeout)
    except asyncio.TimeoutError:
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), timeout=timeout)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()


class _OwnedFds(Stream):
    """Two descriptors handed to the engine (which duplicates them), closed
    here once it has; a stream opened at most once."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._fds: Optional[Tuple[int, int]] = (read_fd, write_fd)

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        if self._fds is None:
            raise RuntimeError("this process's pipes are already in use by a connection")
        try:
            return fd_stream(*self._fds)._open(settings)
        finally:
            self.release()

    def release(self) -> None:
        """Close our descriptors (the engine's duplicates stay open)."""
        fds, self._fds = self._fds, None
        for fd in fds or ():
            os.close(fd)
