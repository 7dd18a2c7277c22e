"""A program typed against the official Python SDK 1.0.0rc3 (``acp``), as its users write one,
checked by ``mypy --strict`` (typed.py): the schema's models built and read with their
snake_case fields, a session's updates folded by ``acp.contrib``, the method tables, and the
JSON-RPC error as a handler raises and a client reads it. It passes on the official package,
and must on ``acp_engine.compat`` with only its import lines changed."""

from __future__ import annotations

from typing import Any

import acp
from acp import AGENT_METHODS, CLIENT_METHODS, PROTOCOL_VERSION, RequestError
from acp.contrib import SessionAccumulator
from acp.schema import (
    AgentMessageChunk,
    InitializeRequest,
    InitializeResponse,
    PermissionOption,
    PromptResponse,
    SessionNotification,
    TextContentBlock,
    ToolCallStart,
    ToolCallUpdate,
)


def initialize_request() -> InitializeRequest:
    return InitializeRequest(protocol_version=PROTOCOL_VERSION)


def agent_text(session_id: str, text: str) -> SessionNotification:
    return SessionNotification(session_id=session_id, update=AgentMessageChunk(content=TextContentBlock(text=text)))


def tool_started(session_id: str, tool_call_id: str, title: str) -> SessionNotification:
    return SessionNotification(session_id=session_id, update=ToolCallStart(tool_call_id=tool_call_id, title=title))


def transcript(notifications: list[SessionNotification]) -> tuple[int, int]:
    """How many tool calls and messages a session's updates make."""
    accumulator = SessionAccumulator()
    for notification in notifications:
        accumulator.apply(notification)
    snapshot = accumulator.snapshot()
    return len(snapshot.tool_calls), len(snapshot.agent_messages)


def permission_options() -> list[PermissionOption]:
    return [
        PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
        PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
    ]


def pending_edit(tool_call_id: str) -> ToolCallUpdate:
    return ToolCallUpdate(tool_call_id=tool_call_id, title="Edit a file", kind="edit", status="pending")


def refused(method: str) -> dict[str, Any]:
    """A handler's refusal, as the peer receives it."""
    try:
        raise RequestError.method_not_found(method)
    except RequestError as error:
        return error.to_error_obj()


def methods() -> list[str]:
    return [AGENT_METHODS["session_prompt"], CLIENT_METHODS["session_update"], CLIENT_METHODS["fs_read_text_file"]]


def wire(response: InitializeResponse) -> dict[str, Any]:
    return response.model_dump(by_alias=True, exclude_none=True)


def ended(response: PromptResponse) -> bool:
    return response.stop_reason == "end_turn"


def version() -> int:
    return acp.PROTOCOL_VERSION
