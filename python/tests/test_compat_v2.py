"""``acp_engine.compat.experimental.v2`` (the official ``acp.experimental.v2``):
its models read what a real v2 peer sends. The official TypeScript SDK 2.4.0's
dual-version agent (interop/ts) answers our v2 client over a pipe; every message
it sent validates as the official class for it and dumps back to the same wire
JSON."""

import asyncio
from typing import Any, Dict, List

import pytest
from conftest import official_ts, run_async
from pydantic import ValidationError

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
