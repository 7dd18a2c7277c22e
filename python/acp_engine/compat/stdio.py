"""``acp.stdio``: this process's stdio as asyncio streams, and spawning peers."""

from __future__ import annotations

import asyncio
import asyncio.subprocess as aio_subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Mapping, Optional, Tuple, Union

from .agent.connection import AgentSideConnection
from .client.connection import ClientSideConnection
from .connection import Connection, MethodHandler
from .transports import spawn_for_engine

__all__ = ["spawn_agent_process", "spawn_client_process", "spawn_stdio_connection", "stdio_streams"]


async def stdio_streams(limit: Optional[int] = None) -> Tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """(reader of stdin, writer of stdout), on this loop."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit) if limit is not None else asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    return reader, writer


@asynccontextmanager
async def spawn_stdio_connection(
    handler: MethodHandler,
    command: str,
    *args: str,
    env: Optional[Mapping[str, str]] = None,
    cwd: Union[str, Path, None] = None,
    observers: Optional[list[Any]] = None,
    **transport_kwargs: Any,
) -> AsyncIterator[Tuple[Connection, aio_subprocess.Process]]:
    """Spawn ``command`` and bind its stdio to a low-level Connection."""
    async with spawn_for_engine(command, *args, env=env, cwd=cwd, **transport_kwargs) as (stream, process):
        conn = Connection(handler, stream, observers=observers)
        try:
            yield conn, process
        finally:
            await conn.close()


@asynccontextmanager
async def spawn_agent_process(
    to_client: Any,
    command: str,
    *args: str,
    env: Optional[Mapping[str, str]] = None,
    cwd: Union[str, Path, None] = None,
    transport_kwargs: Optional[Mapping[str, Any]] = None,
    **connection_kwargs: Any,
) -> AsyncIterator[Tuple[ClientSideConnection, aio_subprocess.Process]]:
    """Spawn an ACP agent; yields a ClientSideConnection to it and the process."""
    async with spawn_for_engine(command, *args, env=env, cwd=cwd, **dict(transport_kwargs or {})) as (stream, process):
        conn = ClientSideConnection(to_client, stream, None, **connection_kwargs)
        try:
            yield conn, process
        finally:
            await conn.close()


@asynccontextmanager
async def spawn_client_process(
    to_agent: Any,
    command: str,
    *args: str,
    env: Optional[Mapping[str, str]] = None,
    cwd: Union[str, Path, None] = None,
    transport_kwargs: Optional[Mapping[str, Any]] = None,
    **connection_kwargs: Any,
) -> AsyncIterator[Tuple[AgentSideConnection, aio_subprocess.Process]]:
    """Spawn an ACP client; yields an AgentSideConnection to it and the process."""
    async with spawn_for_engine(command, *args, env=env, cwd=cwd, **dict(transport_kwargs or {})) as (stream, process):
        conn = AgentSideConnection(to_agent, stream, None, **connection_kwargs)
        try:
            yield conn, process
        finally:
            await conn.close()
