#!/usr/bin/env python3
"""ACP interop test agent built on the official Python SDK (agent-client-protocol, module ``acp``).

Speaks ACP on its own stdin/stdout and follows the interop contract in
../README.md. Exits when stdin reaches EOF.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from dataclasses import dataclass
from typing import Any

import acp
from acp.connection import StreamEvent
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AllowedOutcome,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    SessionNotification,
    TextContentBlock,
    ToolCallUpdate,
)

IMPL = "python"
HERE = os.path.dirname(os.path.abspath(__file__))
# The notice and compaction updates sent to a client that advertises
# session.notices and session.compaction (../README.md).
with open(os.path.join(HERE, "..", "news.json")) as news_file:
    NEWS = json.load(news_file)


def log(*args: Any) -> None:
    # One write per line so that the two peers' stderr lines do not interleave.
    sys.stderr.write(" ".join([f"[{IMPL}-agent]", *map(str, args)]) + "\n")
    sys.stderr.flush()


@dataclass
class Session:
    cwd: str
    cancelled: bool = False


PERMISSION_OPTIONS = [
    PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]


class InteropAgent:
    """Implements the ``acp.Agent`` protocol."""

    def __init__(self) -> None:
        self.client: Any = None  # AgentSideConnection, set by on_connect
        self.sessions: dict[str, Session] = {}
        self.client_wants_news = False

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        info = client_info.model_dump(by_alias=True, exclude_none=True) if client_info else None
        log(f"initialize: protocolVersion={protocol_version} clientInfo={json.dumps(info)}")
        session = client_capabilities.session if client_capabilities else None
        self.client_wants_news = bool(session and session.notices is not None and session.compaction is not None)
        return InitializeResponse(
            protocol_version=1,
            agent_capabilities=AgentCapabilities(),
            auth_methods=[],
            agent_info=Implementation(name=f"{IMPL}-interop-agent", version="1.0.0"),
        )

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        session_id = f"sess-{uuid.uuid4()}"
        self.sessions[session_id] = Session(cwd=cwd)
        log(f"session/new {session_id} cwd={cwd}")
        return NewSessionResponse(session_id=session_id)

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        raise acp.RequestError.invalid_params({"details": "no auth methods"})

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        log(f"session/cancel {session_id}")
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancelled = True

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self.sessions.get(session_id)
        if session is None:
            raise acp.RequestError(-32002, "Resource not found", {"sessionId": session_id})
        session.cancelled = False
        text = "".join(block.text for block in prompt if isinstance(block, TextContentBlock))
        log(f"session/prompt {json.dumps(text)}")
        if text == "Say hello":
            return await self.say_hello(session_id, session)
        if text == "cancel me":
            return await self.cancel_me(session_id, session)
        await self.say(session_id, f"Unknown prompt: {text}")
        return PromptResponse(stop_reason="end_turn")

    async def say(self, session_id: str, text: str) -> None:
        update = AgentMessageChunk(session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text))
        await self.client.session_update(session_id=session_id, update=update)

    async def send_news(self, session_id: str) -> None:
        for update in NEWS:
            notification = SessionNotification.model_validate({"sessionId": session_id, "update": update})
            await self.client.session_update(session_id=session_id, update=notification.update)

    async def ask_permission(self, session_id: str) -> Any:
        response = await self.client.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id="call-1", title="Read hello.txt", kind="read", status="pending"),
            options=PERMISSION_OPTIONS,
        )
        log("permission outcome", json.dumps(response.outcome.model_dump(by_alias=True, exclude_none=True)))
        return response.outcome

    async def say_hello(self, session_id: str, session: Session) -> PromptResponse:
        if self.client_wants_news:
            await self.send_news(session_id)
        await self.say(session_id, "Hello! ")
        outcome = await self.ask_permission(session_id)
        if outcome.outcome == "cancelled" or session.cancelled:
            return PromptResponse(stop_reason="cancelled")
        if not isinstance(outcome, AllowedOutcome) or outcome.option_id != "allow":
            await self.say(session_id, "Permission denied.")
            return PromptResponse(stop_reason="end_turn")

        read = await self.client.read_text_file(session_id=session_id, path=os.path.join(session.cwd, "hello.txt"))
        await self.say(session_id, read.content)

        await self.client.write_text_file(
            session_id=session_id, path=os.path.join(session.cwd, "written.txt"), content="written by agent"
        )

        terminal = await self.client.create_terminal(session_id=session_id, command="echo", args=["hi"])
        terminal_id = terminal.terminal_id
        try:
            exit_status = await self.client.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal_id)
            log("terminal exit", json.dumps(exit_status.model_dump(by_alias=True)))
            output = await self.client.terminal_output(session_id=session_id, terminal_id=terminal_id)
            await self.say(session_id, f"terminal said: {output.output.strip()}")
        finally:
            await self.client.release_terminal(session_id=session_id, terminal_id=terminal_id)
        return PromptResponse(stop_reason="end_turn")

    async def cancel_me(self, session_id: str, session: Session) -> PromptResponse:
        outcome = await self.ask_permission(session_id)
        log("session/cancel seen:", session.cancelled)
        if outcome.outcome == "cancelled" or session.cancelled:
            return PromptResponse(stop_reason="cancelled")
        await self.say(session_id, "Expected the turn to be cancelled, but permission was granted.")
        return PromptResponse(stop_reason="end_turn")


def tracer(event: StreamEvent) -> None:
    arrow = "<-" if event.direction.value == "incoming" else "->"
    text = json.dumps(event.message, separators=(",", ":"))
    log(arrow, text if len(text) <= 600 else text[:600] + "...")


async def main() -> None:
    observers = [tracer] if os.environ.get("ACP_INTEROP_TRACE") else None
    # run_agent returns once stdin reaches EOF.
    await acp.run_agent(InteropAgent(), observers=observers)
    log("stdin closed; exiting")


if __name__ == "__main__":
    asyncio.run(main())
