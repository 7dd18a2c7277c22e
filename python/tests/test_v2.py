"""The ACP version 2 draft on the typed API (``acp_engine.experimental.v2``)
against the official TypeScript SDK 2.4.0's ``experimental/v2`` (interop/ts,
installed by interop/setup.sh): its v2 client drives our v2 agent; our v2
client drives its dual-version agent (the SDK's protocol router) in v2; a v1
client is refused by a v2-only agent, and the connection goes on."""

import asyncio
import subprocess
import sys
from typing import Any, List

import pytest
from conftest import official_ts, peer, run_async

import acp_engine
from acp_engine import RequestError, spawn_stream
from acp_engine.experimental import v2


def test_the_official_v2_client_drives_our_v2_agent() -> None:
    done = subprocess.run(
        official_ts("v2-client.mjs") + [sys.executable, peer("v2_agent.py")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "v2 ok"


class _Listener(v2.Client):
    def __init__(self) -> None:
        self.updates: List[Any] = []
        self.idle: "asyncio.Future[Any]" = asyncio.get_running_loop().create_future()

    async def request_permission(self, params: Any) -> Any:
        return {"outcome": {"outcome": "cancelled"}}

    async def update_session(self, params: Any) -> None:
        update = params["update"]
        self.updates.append(update)
        if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
            self.idle.set_result(update)


@run_async
async def test_our_v2_client_drives_the_official_dual_version_agent_in_v2() -> None:
    argv = official_ts("dual-agent.mjs")
    listener: List[_Listener] = []

    def make(connection: Any) -> _Listener:
        listener.append(_Listener())
        return listener[0]

    async with v2.spawn_agent(make, argv[0], *argv[1:]) as agent:
        init = await agent.initialize(
            {"protocolVersion": v2.PROTOCOL_VERSION, "info": {"name": "ours", "version": "1"}, "capabilities": {}}
        )
        assert init["protocolVersion"] == 2
        session = await agent.new_session({"cwd": "/", "mcpServers": []})
        ack = await agent.prompt({"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "Hi"}]})
        assert isinstance(ack["messageId"], str)
        idle = await asyncio.wait_for(listener[0].idle, 10)
        assert idle["stopReason"] == "end_turn"
        said = [u["content"]["text"] for u in listener[0].updates if u.get("sessionUpdate") == "agent_message_chunk"]
        assert said == ["echo: Hi"]
        # v2's messages are checked as v2's before they go out: v1's initialize shape is not.
        with pytest.raises(RequestError) as refused:
            await agent.new_session({"cwd": 7, "mcpServers": []})
        assert refused.value.code == -32602


@run_async
async def test_a_v2_only_agent_refuses_a_v1_client_and_the_connection_goes_on() -> None:
    class V1Client(acp_engine.Client):
        async def request_permission(self, params: Any) -> Any:
            raise RequestError.method_not_found("session/request_permission")

        async def session_update(self, params: Any) -> None:
            return None

    client = acp_engine.ClientSideConnection(lambda conn: V1Client(), spawn_stream(sys.executable, peer("v2_agent.py")))
    try:
        for _ in range(2):
            with pytest.raises(RequestError) as refused:
                await client.initialize({"protocolVersion": 1, "clientCapabilities": {}})
            assert refused.value.code == -32022
            assert refused.value.data == {"requested": 1, "supported": [2]}
    finally:
        await client.aclose()
