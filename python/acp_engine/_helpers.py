"""One-call helpers: run an agent on this process's stdio, spawn an agent
or connect to a remote one and talk to it as a client."""

from __future__ import annotations

import contextlib
from typing import Any, AsyncIterator, Callable, Mapping, Optional, Sequence

from ._generated.methods import Agent, AgentSideConnection, Client, ClientSideConnection
from ._limits import Limits
from ._tables import Defaults
from ._transport import Stream, remote_stream, spawn_stream, stdio_stream


async def run_agent(
    agent_factory: Callable[[AgentSideConnection], Agent],
    stream: Optional[Stream] = None,
    *,
    limits: Optional[Limits] = None,
    unchecked_methods: Sequence[str] = (),
    connection_class: Any = AgentSideConnection,
) -> None:
    """Serve ``agent_factory(connection)`` on this process's stdin/stdout
    until the client hangs up: ``asyncio.run(run_agent(MyAgent))``.
    (``connection_class``: another protocol's, as ``experimental.v2`` passes it.)"""
    connection = connection_class(
        agent_factory, stream or stdio_stream(), limits=limits, unchecked_methods=unchecked_methods
    )
    await connection.closed


@contextlib.asynccontextmanager
async def spawn_agent(
    client_factory: Callable[[ClientSideConnection], Client],
    command: str,
    *args: str,
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
    limits: Optional[Limits] = None,
    unchecked_methods: Sequence[str] = (),
    connection_class: Any = ClientSideConnection,
) -> AsyncIterator[ClientSideConnection]:
    """Start an agent process and connect to it as ``client_factory(conn)``:
    ``async with spawn_agent(MyClient, "my-agent", "--stdio") as agent: ...``.
    On exit the connection is closed and the agent reaped."""
    stream = spawn_stream(command, *args, env=env, cwd=cwd)
    connection = connection_class(client_factory, stream, limits=limits, unchecked_methods=unchecked_methods)
    try:
        yield connection
    finally:
        await connection.aclose()


@contextlib.asynccontextmanager
async def connect_agent(
    client_factory: Callable[[ClientSideConnection], Client],
    url: str,
    *,
    token: Optional[str] = None,
    ca_file: Optional[str] = None,
    reconnect_timeout: Optional[float] = None,
    connect_timeout: Optional[float] = Defaults.CONNECT_TIMEOUT,
    limits: Optional[Limits] = None,
    unchecked_methods: Sequence[str] = (),
    connection_class: Any = ClientSideConnection,
) -> AsyncIterator[ClientSideConnection]:
    """Connect to a remote agent as ``client_factory(conn)``:
    ``async with connect_agent(lambda conn: MyClient(), "http://host:8080/acp") as agent: ...``
    (``ws://``, ``wss://``, ``http://`` or ``https://``; see :func:`remote_stream`).
    On exit the connection is closed."""
    stream = remote_stream(
        url, token=token, ca_file=ca_file, reconnect_timeout=reconnect_timeout, connect_timeout=connect_timeout
    )
    connection = connection_class(client_factory, stream, limits=limits, unchecked_methods=unchecked_methods)
    try:
        yield connection
    finally:
        await connection.aclose()
