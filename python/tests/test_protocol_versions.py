"""ACP v1 and the version 2 draft on one connection (``protocol_versions``),
against the official TypeScript SDK 2.4.0 (interop/ts, installed by
interop/setup.sh): its v2 client and its v1 client drive our dual-version
agent, and our client drives its dual-version agent (the SDK's own
``agentProtocolRouter``) in either version."""

import asyncio
import subprocess
import sys
from typing import Any, Dict

import pytest
from conftest import official_ts, peer, run_async

from acp_engine import Connection, Side, spawn_stream



def drive_our_agent(client: str) -> str:
    agent = [sys.executable, peer("dual_version_agent.py")]
    done = subprocess.run(official_ts(client) + agent, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_the_official_v2_client_gets_v2_from_our_dual_agent() -> None:
    assert drive_our_agent("v2-client.mjs") == "v2 ok"


def test_the_official_v1_client_gets_v1_from_the_same_agent() -> None:
    assert drive_our_agent("readme-client.mjs") == "readme ok"


async def turn_with_the_official_dual_agent(versions: Any, initialize: Dict[str, Any]) -> Connection:
    updates: "asyncio.Queue[Dict[str, Any]]" = asyncio.Queue()

    async def on_notification(method: str, params: Any) -> None:
        updates.put_nowait(params["update"])

    argv = official_ts("dual-agent.mjs")
    connection = Connection(
        spawn_stream(*argv), None, on_notification, side=Side.CLIENT, protocol_versions=versions
    )
    answer = await connection.send_request("initialize", initialize)
    assert connection.protocol_version == answer["protocolVersion"]
    session = await connection.send_request("session/new", {"cwd": "/", "mcpServers": []})
    prompt = {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "Hello"}]}
    result = await connection.send_request("session/prompt", prompt)
    said = []
    if connection.protocol_version == 2:
        assert "messageId" in result, result
        while (update := await updates.get())["sessionUpdate"] != "state_update" or update["state"] != "idle":
            if update["sessionUpdate"] == "agent_message_chunk":
                said.append(update["content"]["text"])
        assert update["stopReason"] == "end_turn"
    else:
        assert result == {"stopReason": "end_turn"}
        said.append((await updates.get())["content"]["text"])
    assert said == ["echo: Hello"]
    return connection


@run_async
async def test_our_client_asking_for_v2_gets_it_from_the_official_router() -> None:
    initialize = {"protocolVersion": 2, "info": {"name": "ours", "version": "1.0.0"}, "capabilities": {}}
    connection = await turn_with_the_official_dual_agent((1, 2), initialize)
    assert connection.protocol_version == 2
    # v1's methods are not v2's: the engine refuses to send them.
    with pytest.raises(Exception, match="Method not found"):
        await connection.send_request("session/load", {"sessionId": "s1", "cwd": "/", "mcpServers": []})
    connection.close()


@run_async
async def test_our_v1_client_gets_v1_from_the_official_router() -> None:
    initialize = {"protocolVersion": 1, "clientCapabilities": {}}
    connection = await turn_with_the_official_dual_agent((1,), initialize)
    assert connection.protocol_version == 1
    connection.close()


def test_protocol_versions_name_known_versions() -> None:
    async def open_with(versions: Any) -> None:
        Connection(spawn_stream("true"), side=Side.CLIENT, protocol_versions=versions)

    for versions in [(), (3,), (1, 7)]:
        with pytest.raises(ValueError, match="protocol_versions"):
            asyncio.run(open_with(versions))
