"""``acp.core``: run an agent, connect to one (the official SDK's entry points)."""

from __future__ import annotations

import asyncio
from typing import Any

from .._transport import stdio_stream
from .agent.connection import AgentSideConnection
from .client.connection import ClientSideConnection
from .connection import Connection, JsonValue, MethodHandler
from .exceptions import RequestError
from .interfaces import Agent, Client

__all__ = [
    "DEFAULT_STDIO_BUFFER_LIMIT_BYTES",
    "Agent",
    "AgentSideConnection",
    "Client",
    "ClientSideConnection",
    "Connection",
    "JsonValue",
    "MethodHandler",
    "RequestError",
    "connect_to_agent",
    "run_agent",
]

# Accepted for compatibility; the engine bounds messages by its own limits.
DEFAULT_STDIO_BUFFER_LIMIT_BYTES = 50 * 1024 * 1024


async def run_agent(
    agent: Any,
    input_stream: Any = None,
    output_stream: Any = None,
    *,
    use_unstable_protocol: bool = False,
    stdio_buffer_limit_bytes: int = DEFAULT_STDIO_BUFFER_LIMIT_BYTES,
    **connection_kwargs: Any,
) -> None:
    """Serve ``agent`` over the given streams (default: this process's stdio, read
    and written by the engine itself) until the client goes away."""
    if input_stream is None and output_stream is None:
        input_stream = stdio_stream()
    conn = AgentSideConnection(
        agent,
        input_stream,
        output_stream,
        listening=False,
        use_unstable_protocol=use_unstable_protocol,
        **connection_kwargs,
    )
    try:
        await conn.listen()
    finally:
        await asyncio.shield(conn.close())


def connect_to_agent(
    client: Any,
    input_stream: Any,
    output_stream: Any = None,
    *,
    use_unstable_protocol: bool = False,
    **connection_kwargs: Any,
) -> ClientSideConnection:
    """A ClientSideConnection to an agent: ``input_stream`` is the agent's stdin
    (a StreamWriter), ``output_stream`` its stdout (a StreamReader)."""
    return ClientSideConnection(
        client, input_stream, output_stream, use_unstable_protocol=use_unstable_protocol, **connection_kwargs
    )
