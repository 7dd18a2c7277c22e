"""A remote agent over WebSocket: ``acp-engine serve`` (built in the
repository's target/debug) in front of the Rust example agent, reached with
``connect_agent``; a wrong token closes the connection with the reason."""

from __future__ import annotations

import os
import subprocess
from typing import Any, Iterator

import pytest
from conftest import run_async

from acp_engine import Client, RequestError, connect_agent

TARGET = os.path.join(os.path.dirname(__file__), "..", "..", "target", "debug")
INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {}}


@pytest.fixture
def server() -> Iterator[str]:
    serve = subprocess.Popen(
        [os.path.join(TARGET, "acp-engine"), "serve", "--listen", "127.0.0.1:0", "--token", "s3cret", "--",
         os.path.join(TARGET, "examples", "agent")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert serve.stdout is not None
    url = serve.stdout.readline().strip()
    assert url.startswith("ws://"), url
    yield url
    serve.terminate()
    serve.wait(10)


class NoClient(Client):
    async def request_permission(self, params: Any) -> Any:
        raise RequestError.method_not_found("session/request_permission")

    async def session_update(self, params: Any) -> None:
        pass


@run_async
async def test_a_client_reaches_a_remote_agent(server: str) -> None:
    async with connect_agent(lambda _agent: NoClient(), server, token="s3cret") as agent:
        for _ in range(10):
            initialized = await agent.initialize(INITIALIZE)  # type: ignore[arg-type]
            assert initialized["protocolVersion"] == 1


@run_async
async def test_a_wrong_token_closes_the_connection_with_the_reason(server: str) -> None:
    async with connect_agent(lambda _agent: NoClient(), server, token="guess") as agent:
        with pytest.raises(RequestError) as refused:
            await agent.initialize(INITIALIZE)  # type: ignore[arg-type]
        assert refused.value.is_connection_closed(), refused.value
        reason = await agent.closed
        assert "401" in reason, reason
