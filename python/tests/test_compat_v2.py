"""``acp_engine.compat.experimental.v2`` (the official ``acp.experimental.v2``)
against real v2 peers over pipes: the official TypeScript SDK 2.4.0's dual-version
agent and v2 client (interop/ts). Every message the official agent sends reads as
the official model for it and dumps back to the same wire JSON; a compat v2 agent
passes the official client; a compat v2 client drives the official agent; a v2
agent admits nothing before initialize; the official Python SDK's v2 client gets
next edit suggestions from a compat v2 agent."""

import asyncio
import json
import subprocess
import sys
from typing import Any, Dict, List

import pytest
from conftest import official_py, official_ts, peer, run_async
from pydantic import ValidationError

from acp_engine import RequestError
from acp_engine.compat import PROTOCOL_VERSION, connect_to_agent
from acp_engine.compat.schema import Implementation, TextContentBlock
from acp_engine.compat.experimental import v2 as compat_v2
from acp_engine.compat.experimental.v2 import schema
from acp_engine.experimental import v2


class _Recorder(v2.Client):
    def __init__(self) -> None:
        self.notifications: List[Dict[str, Any]] = []
        self.idle: "asyncio.Future[None]" = asyncio.get_running_loop().create_future()

    async def request_permission(self, params: Any) -> Any:
        return {"outcome": {"outcome": "cancelled"}}

    async def update_session(self, params: Any) -> None:
        self.notifications.append(params)
        update = params["update"]
        if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
            self.idle.set_result(None)


def _round_trips(model: Any, wire: Dict[str, Any]) -> None:
    assert model.model_dump(mode="json", by_alias=True, exclude_unset=True) == wire


@run_async
async def test_the_official_v2_agent_s_messages_read_as_the_official_models() -> None:
    argv = official_ts("dual-agent.mjs")
    recorders: List[_Recorder] = []

    def make(connection: Any) -> _Recorder:
        recorders.append(_Recorder())
        return recorders[0]

    async with v2.spawn_agent(make, argv[0], *argv[1:]) as agent:
        request = schema.InitializeRequest(
            protocol_version=compat_v2.PROTOCOL_VERSION, info=schema.Implementation(name="ours", version="1")
        )
        init = await agent.initialize(request.model_dump(mode="json", by_alias=True, exclude_none=True))
        _round_trips(schema.InitializeResponse.model_validate(init), init)
        session = await agent.new_session({"cwd": "/", "mcpServers": []})
        _round_trips(schema.NewSessionResponse.model_validate(session), session)
        prompt = schema.PromptRequest(session_id=session["sessionId"], prompt=[schema.TextContentBlock(text="Hi")])
        ack = await agent.prompt(prompt.model_dump(mode="json", by_alias=True, exclude_none=True))
        _round_trips(schema.PromptResponse.model_validate(ack), ack)
        await asyncio.wait_for(recorders[0].idle, 10)

    read = [schema.UpdateSessionNotification.model_validate(wire) for wire in recorders[0].notifications]
    for model, wire in zip(read, recorders[0].notifications):
        _round_trips(model, wire)
    kinds = [type(notification.update) for notification in read]
    assert schema.RunningSessionStateUpdate in kinds
    assert kinds[-1] is schema.IdleSessionStateUpdate
    assert read[-1].update.stop_reason == "end_turn"  # type: ignore[union-attr]
    chunks = [n.update for n in read if isinstance(n.update, schema.AgentMessageChunk)]
    assert [chunk.content.text for chunk in chunks] == ["echo: Hi"]  # type: ignore[union-attr]
    assert not any(isinstance(n.update, schema.OtherSessionUpdate) for n in read)


def test_a_vendor_update_is_kept_and_a_malformed_known_one_refused() -> None:
    vendor = {"sessionId": "s", "update": {"sessionUpdate": "_vendor_status", "status": "waiting"}}
    notification = schema.UpdateSessionNotification.model_validate(vendor)
    assert isinstance(notification.update, schema.OtherSessionUpdate)
    _round_trips(notification, vendor)
    future_state = {"sessionId": "s", "update": {"sessionUpdate": "state_update", "state": "_paused"}}
    assert isinstance(
        schema.UpdateSessionNotification.model_validate(future_state).update, schema.OtherSessionStateUpdate
    )
    with pytest.raises(ValidationError):
        schema.UpdateSessionNotification.model_validate(
            {
                "sessionId": "s",
                "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
            }
        )  # no messageId


def _drive(client: List[str], agent: str) -> str:
    """Run an official client program against one of our peers; its last line of output."""
    done = subprocess.run(client + [sys.executable, peer(agent)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_the_official_v2_client_drives_a_compat_v2_agent() -> None:
    last_line = _drive(official_ts("v2-client.mjs"), "compat_v2_agent.py")
    assert last_line == "v2 ok"


def test_the_official_python_v2_client_gets_next_edit_suggestions_from_a_compat_v2_agent() -> None:
    # nes/* and document/* are in v2's unstable schema only through the official
    # Python SDK's models (tools/schema-derive-py): the engine routes and checks them.
    last_line = _drive(official_py("official_v2_nes_client.py"), "compat_v2_agent.py")
    suggestions = json.loads(last_line)
    assert suggestions == [
        # A jump to the end of the document didOpen gave.
        ["NesJumpSuggestionVariant",
         {"kind": "jump", "suggestionId": "j1", "uri": "file:///w/a.py", "position": {"line": 1, "character": 12}}],
        # v2's suggestions are an open union: a vendor kind arrives whole, as the official catch-all model.
        ["OtherNesSuggestion", {"kind": "_vendor_hint", "suggestionId": "v1", "hint": "triggered manual"}],
    ]


class _Updates:
    """A v2 client of the official shape: keeps each session update as its model."""

    def __init__(self) -> None:
        self.updates: List[Any] = []
        self.idle: "asyncio.Future[None]" = asyncio.get_running_loop().create_future()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        if isinstance(update, schema.IdleSessionStateUpdate) and not self.idle.done():
            self.idle.set_result(None)


@run_async
async def test_a_compat_v2_client_drives_the_official_dual_version_agent() -> None:
    argv = official_ts("dual-agent.mjs")
    process = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    client = _Updates()
    async with compat_v2.ClientSideConnection(client, process.stdin, process.stdout) as agent:
        init = await agent.initialize(
            protocol_version=compat_v2.PROTOCOL_VERSION, info=schema.Implementation(name="ours", version="1")
        )
        assert isinstance(init, schema.InitializeResponse) and init.protocol_version == 2
        session = await agent.new_session(cwd="/")
        ack = await agent.prompt(session_id=session.session_id, prompt=[schema.TextContentBlock(text="Hi")])
        assert isinstance(ack.message_id, str)
        await asyncio.wait_for(client.idle, 10)
        said = [u.content.text for u in client.updates if isinstance(u, schema.AgentMessageChunk)]
        assert said == ["echo: Hi"]
        # An extension the agent does not know is -32601; the connection goes on.
        with pytest.raises(RequestError) as unknown:
            await agent.send_extension_request("_vendor/unknown", {})
        assert unknown.value.code == -32601
        assert (await agent.new_session(cwd="/")).session_id != session.session_id
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), 10) == 0


@run_async
async def test_a_v2_agent_admits_nothing_before_initialize() -> None:
    argv = [sys.executable, peer("compat_v2_agent.py")]
    process = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    async with compat_v2.ClientSideConnection(_Updates(), process.stdin, process.stdout) as agent:
        with pytest.raises(RequestError) as refused:
            await agent.new_session(cwd="/")
        assert refused.value.code == -32600
        assert "must be initialized before 'session/new'" in refused.value.message
        # initialize still works, and so does what follows it.
        await agent.initialize(protocol_version=2, info=schema.Implementation(name="ours", version="1"))
        assert (await agent.new_session(cwd="/")).session_id == "s1"
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), 10) == 0


def test_the_official_v2_client_gets_v2_from_a_compat_protocol_router() -> None:
    last_line = _drive(official_ts("v2-client.mjs"), "compat_router_agent.py")
    assert last_line == "v2 ok"


class _V1Updates:
    def __init__(self) -> None:
        self.texts: List[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.texts.append(update.content.text)


@run_async
async def test_a_compat_protocol_router_serves_v1_and_refuses_before_initialize() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, peer("compat_router_agent.py"), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    client = _V1Updates()
    async with connect_to_agent(client, process.stdin, process.stdout) as agent:
        # A router speaks v2 too: nothing is admitted before initialize.
        with pytest.raises(RequestError) as refused:
            await agent.new_session(cwd="/")
        assert refused.value.code == -32600
        init = await agent.initialize(
            protocol_version=PROTOCOL_VERSION, client_info=Implementation(name="v1-client", version="1")
        )
        assert init.protocol_version == 1
        session = await agent.new_session(cwd="/")
        answer = await agent.prompt(session_id=session.session_id, prompt=[TextContentBlock(text="Hi")])
        assert answer.stop_reason == "end_turn"
        assert client.texts == ["echo: Hi (to v1-client)"]
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), 10) == 0
