"""A remote agent over WebSocket and Streamable HTTP: ``acp-engine serve``
(built in the repository's target/debug) in front of the Rust example
agent, reached with ``connect_agent``; a wrong token closes the connection
with the reason."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
from typing import Any, Iterator, List

import pytest
from conftest import run_async

from acp_engine import Client, RequestError, connect_agent, remote_stream

TARGET = os.path.join(os.path.dirname(__file__), "..", "..", "target", "debug")
INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {}}


@pytest.fixture(scope="module")
def urls() -> Iterator[List[str]]:
    """The server's WebSocket and Streamable HTTP URLs."""
    serve = subprocess.Popen(
        [os.path.join(TARGET, "acp-engine"), "serve", "--listen", "127.0.0.1:0", "--token", "s3cret", "--",
         os.path.join(TARGET, "examples", "agent")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert serve.stdout is not None
    found = [serve.stdout.readline().strip(), serve.stdout.readline().strip()]
    assert found[0].startswith("ws://") and found[1].startswith("http://"), found
    yield found
    serve.terminate()
    serve.wait(10)


class NoClient(Client):
    async def request_permission(self, params: Any) -> Any:
        raise RequestError.method_not_found("session/request_permission")

    async def session_update(self, params: Any) -> None:
        pass


@pytest.mark.parametrize("transport", [0, 1], ids=["websocket", "http"])
@run_async
async def test_a_client_reaches_a_remote_agent(urls: List[str], transport: int) -> None:
    async with connect_agent(lambda _agent: NoClient(), urls[transport], token="s3cret") as agent:
        initialized = await agent.initialize(INITIALIZE)  # type: ignore[arg-type]
        assert initialized["protocolVersion"] == 1
        for _ in range(10):
            session = await agent.new_session({"cwd": "/tmp", "mcpServers": []})
            assert session["sessionId"]


@pytest.mark.parametrize("transport", [0, 1], ids=["websocket", "http"])
@run_async
async def test_a_wrong_token_closes_the_connection_with_the_reason(urls: List[str], transport: int) -> None:
    async with connect_agent(lambda _agent: NoClient(), urls[transport], token="guess") as agent:
        with pytest.raises(RequestError) as refused:
            await agent.initialize(INITIALIZE)  # type: ignore[arg-type]
        assert refused.value.is_connection_closed(), refused.value
        reason = await agent.closed
        assert "401" in reason, reason


@run_async
async def test_a_server_that_never_answers_closes_the_connection_in_time() -> None:
    # A listener that never accepts: the kernel takes the TCP connection,
    # and nothing answers the WebSocket upgrade.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"ws://127.0.0.1:{silent.getsockname()[1]}/acp"
        started = time.monotonic()
        async with connect_agent(lambda _agent: NoClient(), url, connect_timeout=0.3) as agent:
            with pytest.raises(RequestError) as failed:
                await asyncio.wait_for(agent.initialize(INITIALIZE), 10)  # type: ignore[arg-type]
            assert failed.value.is_connection_closed(), failed.value
            reason = await agent.closed
        assert "did not take the connection within 300 ms" in reason, reason
        assert time.monotonic() - started < 10


def test_a_connect_timeout_is_positive_or_none() -> None:
    with pytest.raises(ValueError, match="connect_timeout must be positive"):
        remote_stream("ws://127.0.0.1:1/acp", connect_timeout=0)
