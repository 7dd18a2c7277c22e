"""acp_engine.compat's 0.x builders (``acp.helpers``): what each puts on the wire,
with the arguments left as None left out (not sent as ``null``)."""

import json

import pytest

pytest.importorskip("pydantic")  # the compat extra is installed by python/test.sh
import acp_engine.compat as acp  # noqa: E402
from acp_engine.compat.connection import wire_params  # noqa: E402


def wire(model: object) -> object:
    return json.loads(wire_params(model))


def test_message_chunks_and_blocks() -> None:
    assert wire(acp.update_agent_message_text("hi")) == {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "hi"},
    }
    assert wire(acp.update_user_message(acp.image_block("AAAA", "image/png"))) == {
        "sessionUpdate": "user_message_chunk",
        "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"},
    }
    notification = acp.session_notification("s1", acp.update_agent_thought_text("hmm"))
    assert wire(notification) == {
        "sessionId": "s1",
        "update": {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}},
    }


def test_tool_calls_send_only_what_was_given() -> None:
    assert wire(acp.start_read_tool_call("t1", "Read", "/x")) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "t1",
        "title": "Read",
        "kind": "read",
        "status": "pending",
        "locations": [{"path": "/x"}],
        "rawInput": {"path": "/x"},
    }
    progress = acp.update_tool_call("t1", status="completed", content=[acp.tool_content(acp.text_block("ok"))])
    assert wire(progress) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t1",
        "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": "ok"}}],
    }


def test_plans() -> None:
    assert wire(acp.update_plan([acp.plan_entry("step", priority="high")])) == {
        "sessionUpdate": "plan",
        "entries": [{"content": "step", "priority": "high", "status": "pending"}],
    }
