"""Typed ACP over a real process: our client spawns tests/peers/full_agent.py."""

import asyncio
import os
import signal
import sys
from typing import Any, List

import pytest
from conftest import peer, run_async

from acp_engine import Client, RequestError, spawn_agent

AGENT = peer("full_agent.py")


class RecordingClient(Client):
    def __init__(self) -> None:
        self.updates: List[Any] = []
        self.calls: List[Any] = []
        self.released: List[str] = []

    async def request_permission(self, params):  # type: ignore[no-untyped-def]
        self.calls.append(("session/request_permission", params))
        return {"outcome": {"outcome": "selected", "optionId": params["options"][0]["optionId"]}}

    async def session_update(self, params):  # type: ignore[no-untyped-def]
        self.updates.append(params["update"])

    async def read_text_file(self, params):  # type: ignore[no-untyped-def]
        return {"content": f"{params['path']}:{params.get('line')}:{params.get('limit')}"}

    async def write_text_file(self, params):  # type: ignore[no-untyped-def]
        self.calls.append(("fs/write_text_file", params))
        return None  # None answers {}

    async def create_terminal(self, params):  # type: ignore[no-untyped-def]
        return {"terminalId": f"term-{params['command']}"}

    async def terminal_output(self, params):  # type: ignore[no-untyped-def]
        return {"output": f"out of {params['terminalId']}", "truncated": False}

    async def wait_for_terminal_exit(self, params):  # type: ignore[no-untyped-def]
        return {"exitCode": 0}

    async def kill_terminal(self, params):  # type: ignore[no-untyped-def]
        return {}

    async def release_terminal(self, params):  # type: ignore[no-untyped-def]
        self.released.append(params["terminalId"])
        return {}

    async def create_elicitation(self, params):  # type: ignore[no-untyped-def]
        return {"action": "decline"}

    async def complete_elicitation(self, params):  # type: ignore[no-untyped-def]
        self.calls.append(("elicitation/complete", params))

    async def ext_method(self, method, params):  # type: ignore[no-untyped-def]
        return {"client ext": method, "params": params}

    async def ext_notification(self, method, params):  # type: ignore[no-untyped-def]
        self.calls.append((method, params))


def prompt(text: str) -> Any:
    return {"sessionId": "s-1", "prompt": [{"type": "text", "text": text}]}


def connect(client: RecordingClient) -> Any:
    return spawn_agent(lambda _: client, sys.executable, AGENT)


@run_async
async def test_every_agent_method_from_the_client() -> None:
    async with connect(RecordingClient()) as agent:
        init = await agent.initialize({"protocolVersion": 1, "clientInfo": {"name": "t", "version": "1"}, "x-extra": 7})
        assert init["protocolVersion"] == 1
        # Unknown fields survive the trip both ways.
        assert init["_meta"]["params"]["x-extra"] == 7
        calls = {
            "authenticate": agent.authenticate({"methodId": "m"}),
            "logout": agent.logout({}),
            "session/new": agent.new_session({"cwd": "/tmp", "mcpServers": []}),
            "session/load": agent.load_session({"sessionId": "s-1", "cwd": "/tmp", "mcpServers": []}),
            "session/list": agent.list_sessions({}),
            "session/delete": agent.delete_session({"sessionId": "s-1"}),
            "session/resume": agent.resume_session({"sessionId": "s-1", "cwd": "/tmp"}),
            "session/close": agent.close_session({"sessionId": "s-1"}),
            "session/set_mode": agent.set_session_mode({"sessionId": "s-1", "modeId": "fast"}),
            "session/set_config_option": agent.set_session_config_option(
                {"sessionId": "s-1", "configId": "c", "value": "v"}
            ),
        }
        for method, call in calls.items():
            result = await call
            assert result["_meta"]["method"] == method, result
        turn = await agent.prompt(prompt("plain"))
        assert turn == {"stopReason": "end_turn"}
        assert await agent.ext_method("_my/method", {"k": [1, 2]}) == {"ext": "_my/method", "params": {"k": [1, 2]}}
        await agent.ext_notification("_my/note", {"n": 1})
        await agent.cancel({"sessionId": "s-1"})
        notes = await agent.ext_method("_test/notes", {})
        assert notes["notes"] == [["_my/note", {"n": 1}], ["cancel", {"sessionId": "s-1"}]]


# The legacy model selection (outside the schema) that real agents take.
SET_MODEL = "session/set_model"
MODEL = {"sessionId": "s-1", "modelId": "fast"}


@run_async
async def test_unchecked_methods_go_out_and_reach_ext_method() -> None:
    both = spawn_agent(lambda _: RecordingClient(), sys.executable, AGENT, "--unchecked", SET_MODEL,
                       unchecked_methods=[SET_MODEL])
    async with both as agent:
        assert await agent.ext_method(SET_MODEL, MODEL) == {"ext": SET_MODEL, "params": MODEL}
        with pytest.raises(RequestError) as unlisted:
            await agent.ext_notification("legacy/note", {"n": 1})
        assert unlisted.value.code == -32601
    # Not listed on our side: refused before anything is sent.
    async with connect(RecordingClient()) as agent:
        with pytest.raises(RequestError) as refused:
            await agent.ext_method(SET_MODEL, MODEL)
        assert refused.value.code == -32601
        assert (await agent.ext_method("_test/notes", {}))["notes"] == []
    # Not listed on the agent's side: the agent answers -32601.
    async with spawn_agent(lambda _: RecordingClient(), sys.executable, AGENT, unchecked_methods=[SET_MODEL]) as agent:
        with pytest.raises(RequestError) as unknown:
            await agent.ext_method(SET_MODEL, MODEL)
        assert unknown.value.code == -32601
        assert unknown.value.data == {"method": SET_MODEL}


@run_async
async def test_every_client_method_from_the_agent() -> None:
    client = RecordingClient()
    async with connect(client) as agent:
        turn = await agent.prompt(prompt("call client"))
        results = turn["_meta"]
        assert results["session/request_permission"] == {"outcome": {"outcome": "selected", "optionId": "ok"}}
        assert results["fs/read_text_file"] == {"content": "/x:2:3"}
        assert results["fs/write_text_file"] == {}
        assert results["terminal/create"] == "term-echo"
        assert results["terminal/output"] == {"output": "out of term-echo", "truncated": False}
        assert results["terminal/wait_for_exit"] == {"exitCode": 0}
        assert results["terminal/kill"] == {}
        assert results["terminal/output direct"]["output"] == "out of direct"
        assert results["elicitation/create"] == {"action": "decline"}
        assert results["_ext/method"] == {"client ext": "_ext/method", "params": {"a": 1}}
        # The engine refused an update without content before sending it.
        assert results["bad outbound"] == -32602
        assert client.released == ["term-echo"]  # released once
        assert client.updates[0]["content"]["text"] == "hi"
        methods = [call[0] for call in client.calls]
        assert methods == [
            "session/request_permission",
            "fs/write_text_file",
            "elicitation/complete",
            "_ext/note",
        ]


@run_async
async def test_updates_arrive_in_order_before_the_turn_ends() -> None:
    client = RecordingClient()
    async with connect(client) as agent:
        await agent.prompt(prompt("burst 5000"))
        texts = [update["content"]["text"] for update in client.updates]
        assert texts == [str(i) for i in range(5000)]


@run_async
async def test_handler_exceptions() -> None:
    async with connect(RecordingClient()) as agent:
        with pytest.raises(RequestError) as boom:
            await agent.prompt(prompt("boom"))
        assert boom.value.code == -32603
        assert "secret" not in repr(boom.value.to_error_response())
        with pytest.raises(RequestError) as refused:
            await agent.prompt(prompt("refuse"))
        assert refused.value.to_error_response() == {"code": -32042, "message": "refused", "data": {"why": "test"}}
        # The connection still works.
        assert (await agent.prompt(prompt("plain")))["stopReason"] == "end_turn"


@run_async
async def test_terminal_handle_releases_on_exit() -> None:
    client = RecordingClient()
    async with connect(client) as agent:
        turn = await agent.prompt(prompt("terminal"))
        assert turn["_meta"] == {"released": True}
        assert client.released == ["term-true"]


@run_async
async def test_cancelling_an_outbound_call_cancels_the_handler() -> None:
    async with connect(RecordingClient()) as agent:
        call = asyncio.ensure_future(agent.prompt(prompt("hang")))
        # Cancel once the handler runs (a cancel that reaches the agent
        # before the request is dispatched never starts the handler).
        for _ in range(500):
            if (await agent.ext_method("_test/notes", {}))["started"]:
                break
            await asyncio.sleep(0.01)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # The agent's handler task was cancelled through $/cancel_request.
        for _ in range(100):
            notes = await agent.ext_method("_test/notes", {})
            if notes["cancelled"]:
                break
            await asyncio.sleep(0.02)
        assert notes["cancelled"] == ["prompt"]


@run_async
async def test_cancel_answers_open_permission_requests() -> None:
    class Waiting(RecordingClient):
        async def request_permission(self, params):  # type: ignore[no-untyped-def]
            await asyncio.Event().wait()

    async with spawn_agent(lambda _: Waiting(), sys.executable, os.path.join(os.path.dirname(AGENT), "..", "..", "examples", "agent.py")) as agent:
        session = await agent.new_session({"cwd": "/tmp", "mcpServers": []})
        turn = asyncio.ensure_future(agent.prompt({"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "cancel me"}]}))
        await asyncio.sleep(0.3)
        await agent.cancel({"sessionId": session["sessionId"]})
        assert (await turn)["stopReason"] == "cancelled"


@run_async
async def test_peer_crash_fails_pending_calls_at_once() -> None:
    async with connect(RecordingClient()) as agent:
        hanging = [asyncio.ensure_future(agent.prompt(prompt("hang"))) for _ in range(3)]
        await asyncio.sleep(0.2)
        assert agent.pid is not None
        os.kill(agent.pid, signal.SIGKILL)
        for call in hanging:
            with pytest.raises(RequestError) as closed:
                await call
            assert closed.value.is_connection_closed()
        await asyncio.wait_for(agent.closed, 5)
        with pytest.raises(RequestError):
            await agent.prompt(prompt("plain"))


@run_async
async def test_agent_exit_mid_request() -> None:
    async with connect(RecordingClient()) as agent:
        with pytest.raises(RequestError) as closed:
            await agent.prompt(prompt("exit"))
        assert closed.value.is_connection_closed()


# An agent that sends claude-agent-acp 0.23's usage_update ("used": null
# fails the schema), then a valid message chunk, then waits for EOF.
BAD_UPDATE_AGENT = r"""
import json, sys
for update in ({"sessionUpdate": "usage_update", "used": None, "size": 10},
               {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "after"}}):
    print(json.dumps({"jsonrpc": "2.0", "method": "session/update",
                      "params": {"sessionId": "s-1", "update": update}}), flush=True)
sys.stdin.read()
"""


class HearingClient(RecordingClient):
    def __init__(self) -> None:
        super().__init__()
        self.invalid: List[Any] = []

    def on_invalid_notification(self, method: str, error: RequestError) -> None:
        self.invalid.append((method, error.code, str(error.data)))


@run_async
async def test_a_notification_that_fails_the_schema_is_heard_not_handled() -> None:
    client = HearingClient()
    async with spawn_agent(lambda _: client, sys.executable, "-c", BAD_UPDATE_AGENT):
        for _ in range(500):
            if client.updates:
                break
            await asyncio.sleep(0.01)
    assert [u["sessionUpdate"] for u in client.updates] == ["agent_message_chunk"]
    assert len(client.invalid) == 1, client.invalid
    method, code, why = client.invalid[0]
    assert (method, code) == ("session/update", -32602)
    assert "used" in why


@run_async
async def test_without_a_hook_a_notification_that_fails_the_schema_is_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = RecordingClient()
    with caplog.at_level("WARNING", logger="acp_engine"):
        async with spawn_agent(lambda _: client, sys.executable, "-c", BAD_UPDATE_AGENT):
            for _ in range(500):
                if client.updates:
                    break
                await asyncio.sleep(0.01)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("session/update" in w and "fails the schema" in w for w in warnings), warnings
