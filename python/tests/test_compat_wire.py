"""What the compat peer methods put on the wire, read raw from a socket: the
params of every call are the official ``serialize_params`` of the same model
(by alias, None and defaults left out, variants' tags kept), whether the
engine got them as a dict of the arguments (a ``_wire.Writers`` writer's, when
each already is what its field takes) or as the model's JSON (anything
else); a wrong argument fails with pydantic's ValidationError and writes
nothing."""

import asyncio
import json
import socket
from typing import Any, Dict, List

import pytest
from conftest import run_async
from pydantic import BaseModel, Field, ValidationError

from acp_engine.compat import AgentSideConnection, ClientSideConnection
from acp_engine.compat import schema as s
from acp_engine.compat._wire import Writers, to_wire_json
from acp_engine.compat.utils import serialize_params


class _Agent:
    pass


class _Raw:
    """The client's end of the socket, read and answered by hand."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def next_message(self) -> Dict[str, Any]:
        line = await asyncio.wait_for(self.reader.readline(), 10)
        message: Dict[str, Any] = json.loads(line)
        return message

    async def answer(self, result: Dict[str, Any]) -> Dict[str, Any]:
        request = await self.next_message()
        self.writer.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode() + b"\n")
        await self.writer.drain()
        return request


async def _pair() -> "tuple[AgentSideConnection, _Raw]":
    ours, theirs = socket.socketpair()
    our_reader, our_writer = await asyncio.open_connection(sock=ours)
    their_reader, their_writer = await asyncio.open_connection(sock=theirs)
    return AgentSideConnection(_Agent(), our_writer, our_reader), _Raw(their_reader, their_writer)


def _updates() -> List[BaseModel]:
    text = s.TextContentBlock(text="héllo \"quoted\" \n line")
    return [
        s.AgentMessageChunk(content=text),
        s.AgentThoughtChunk(session_update="agent_thought_chunk", content=s.TextContentBlock(type="text", text="x")),
        s.ToolCallStart(
            tool_call_id="call-1",
            title="Read",
            kind="read",
            status="pending",
            content=[s.ContentToolCallContent(content=text)],
            locations=[s.ToolCallLocation(path="/a", line=3)],
        ),
        s.ToolCallProgress(tool_call_id="call-1", status="completed", raw_output={"ok": True}),
        s.AgentPlanUpdate(entries=[s.PlanEntry(content="step", priority="high", status="pending")]),
        s.UsageUpdate(used=10, size=100),
    ]


@run_async
async def test_session_updates_are_written_as_serialize_params() -> None:
    conn, raw = await _pair()
    try:
        for update in _updates():
            await conn.session_update(session_id="sess-1", update=update)
            message = await raw.next_message()
            expected = serialize_params(s.SessionNotification(session_id="sess-1", update=update))
            assert message == {"jsonrpc": "2.0", "method": "session/update", "params": expected}
        # Extra keywords are the params' _meta (the model's path).
        await conn.session_update(session_id="sess-1", update=_updates()[0], trace="t-1")
        message = await raw.next_message()
        assert message["params"]["_meta"] == {"trace": "t-1"}
        assert message["params"]["update"]["content"]["type"] == "text"
    finally:
        await conn.close()


@run_async
async def test_requests_are_written_as_serialize_params() -> None:
    conn, raw = await _pair()
    try:
        option = s.PermissionOption(option_id="allow", name="Allow", kind="allow_once")
        tool_call = s.ToolCallUpdate(tool_call_id="call-1", title="Edit", status="pending")
        calls = [
            (
                conn.read_text_file(session_id="sess-1", path="/src/a.py"),
                s.ReadTextFileRequest(session_id="sess-1", path="/src/a.py"),
                {"content": "text"},
            ),
            (
                conn.read_text_file(session_id="sess-1", path="/src/a.py", line=2, limit=5),
                s.ReadTextFileRequest(session_id="sess-1", path="/src/a.py", line=2, limit=5),
                {"content": "text"},
            ),
            (
                conn.write_text_file(session_id="sess-1", path="/src/ü.py", content="naïve ✓"),
                s.WriteTextFileRequest(session_id="sess-1", path="/src/ü.py", content="naïve ✓"),
                {},
            ),
            (
                conn.request_permission(session_id="sess-1", tool_call=tool_call, options=[option]),
                s.RequestPermissionRequest(session_id="sess-1", tool_call=tool_call, options=[option]),
                {"outcome": {"outcome": "cancelled"}},
            ),
            (
                # An option given as a dict, after one given as a model: the
                # model's path, taken from within the list.
                conn.request_permission(
                    session_id="sess-1",
                    tool_call=tool_call,
                    options=[option, {"optionId": "deny", "name": "Deny", "kind": "reject_once"}],  # type: ignore[list-item]
                ),
                s.RequestPermissionRequest(
                    session_id="sess-1",
                    tool_call=tool_call,
                    options=[option, s.PermissionOption(option_id="deny", name="Deny", kind="reject_once")],
                ),
                {"outcome": {"outcome": "cancelled"}},
            ),
        ]
        for call, model, result in calls:
            task = asyncio.ensure_future(call)
            request = await raw.answer(result)
            assert request["params"] == serialize_params(model)
            await task
    finally:
        await conn.close()


class _Client:
    pass


@run_async
async def test_positional_calls_mean_what_they_mean_in_the_official_package() -> None:
    # The official signatures' order, not the schema's: new_session(cwd,
    # additional_directories, mcp_servers), set_config_option(config_id,
    # session_id, value); and its constructor's keyword names.
    ours, theirs = socket.socketpair()
    our_reader, our_writer = await asyncio.open_connection(sock=ours)
    their_reader, their_writer = await asyncio.open_connection(sock=theirs)
    conn = ClientSideConnection(to_client=_Client(), input_stream=our_writer, output_stream=our_reader)
    raw = _Raw(their_reader, their_writer)
    try:
        calls = [
            (conn.new_session("/w", ["/extra"], []), {"sessionId": "s1"},
             {"cwd": "/w", "additionalDirectories": ["/extra"], "mcpServers": []}),
            (conn.set_config_option("model", "s1", "fast"), {"configOptions": []},
             {"configId": "model", "sessionId": "s1", "value": "fast"}),
        ]
        for call, result, params in calls:
            task = asyncio.ensure_future(call)
            request = await raw.answer(result)
            assert request["params"] == params
            await task
    finally:
        await conn.close()


@run_async
async def test_a_wrong_argument_fails_as_the_model_does_and_writes_nothing() -> None:
    conn, raw = await _pair()
    try:
        with pytest.raises(ValidationError):
            await conn.session_update(session_id=42, update=_updates()[0])  # type: ignore[arg-type]
        with pytest.raises(ValidationError):
            await conn.session_update(session_id="sess-1", update={"sessionUpdate": "bogus"})  # type: ignore[arg-type]
        # A dict that is a valid update is read as the model (pydantic's path).
        await conn.session_update(
            session_id="sess-1",
            update={"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}},  # type: ignore[arg-type]
        )
        message = await raw.next_message()
        assert message["params"] == {
            "sessionId": "sess-1",
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}},
        }
    finally:
        await conn.close()


class _Shadowing(BaseModel):
    """Fields named as the writer's own names once were (``params``) and as
    the builtins it calls (``type``, ``list``)."""

    type: str
    list: List[s.PermissionOption]
    params: Any = None
    field_meta: Any = Field(default=None, alias="_meta")


def _as_json(written: Any) -> Any:
    """A writer's output as plain JSON values (the models in it are JSON bytes)."""
    if isinstance(written, bytes):
        return json.loads(written)
    if isinstance(written, list):
        return [_as_json(item) for item in written]
    if isinstance(written, dict):
        return {key: _as_json(value) for key, value in written.items()}
    return written


def test_a_writer_keeps_fields_named_as_its_own_names_and_builtins() -> None:
    write = Writers(type("Models", (), {"Shadowing": _Shadowing})).Shadowing
    option = s.PermissionOption(option_id="allow", name="Allow", kind="allow_once")
    # Plain values: the dict of them; a `params` value: the model's path.
    plain = write(type="x", list=[option], params=None, field_meta=None)
    assert isinstance(plain, dict)
    assert _as_json(plain) == {"type": "x", "list": [json.loads(to_wire_json(option))]}
    built = write(type="x", list=[option], params={"a": 1}, field_meta=None)
    assert isinstance(built, bytes)
    assert json.loads(built) == json.loads(to_wire_json(_Shadowing(type="x", list=[option], params={"a": 1})))
    assert json.loads(built)["params"] == {"a": 1}


def test_mcp_message_params_keep_their_value() -> None:
    write = Writers(s).MessageMcpRequest
    written = write(server_id="srv", request_id="r-1", method="tools/call", params={"name": "x"}, field_meta=None)
    expected = serialize_params(s.MessageMcpRequest(server_id="srv", request_id="r-1", method="tools/call", params={"name": "x"}))
    assert _as_json(written) == expected


@run_async
async def test_the_model_helpers_of_acp_utils_send_and_validate() -> None:
    """``request_model`` & co. over a real socket: the params are
    ``serialize_params`` of the model, the result is validated as the given
    model (``_from_dict``: a non-dict result reads as ``{}``; ``_optional``:
    None), ``notify_model`` sends a notification."""
    from acp_engine.compat.connection import Connection
    from acp_engine.compat.utils import (
        notify_model,
        request_model,
        request_model_from_dict,
        request_optional_model,
    )

    async def refuse(method: str, params: Any, is_notification: bool) -> Any:
        raise AssertionError(f"nothing is sent to this side ({method})")

    ours, theirs = socket.socketpair()
    our_reader, our_writer = await asyncio.open_connection(sock=ours)
    their_reader, their_writer = await asyncio.open_connection(sock=theirs)
    conn = Connection(refuse, our_writer, our_reader)
    raw = _Raw(their_reader, their_writer)
    try:
        read = s.ReadTextFileRequest(session_id="sess-1", path="/a.py", line=2)
        sent = asyncio.ensure_future(request_model(conn, "fs/read_text_file", read, s.ReadTextFileResponse))
        request = await raw.answer({"content": "x"})
        assert request["params"] == serialize_params(read)
        assert (await sent) == s.ReadTextFileResponse(content="x")
        write = s.WriteTextFileRequest(session_id="sess-1", path="/a.py", content="y")
        from_dict = asyncio.ensure_future(
            request_model_from_dict(conn, "fs/write_text_file", write, s.WriteTextFileResponse)
        )
        await raw.answer(None)  # type: ignore[arg-type]
        assert (await from_dict) == s.WriteTextFileResponse()
        optional = asyncio.ensure_future(
            request_optional_model(conn, "fs/write_text_file", write, s.WriteTextFileResponse)
        )
        await raw.answer(None)  # type: ignore[arg-type]
        assert (await optional) is None
        cancel = s.CancelNotification(session_id="sess-1")
        await notify_model(conn, "session/cancel", cancel)
        notified = await raw.next_message()
        assert notified == {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "sess-1"}}
    finally:
        await conn.close()
        raw.writer.close()
