"""Benchmark agent on the official Python SDK (agent-client-protocol, module
``acp``; see bench/README.md)."""

import asyncio
from typing import Any

import acp
from acp.schema import (
    AgentMessageChunk,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    TextContentBlock,
    ToolCallUpdate,
)

CHUNK_TEXT = "chunk of agent text"
SESSION_ID = "bench-session"
LARGE = 16 * 1024 * 1024


class BenchAgent:
    def __init__(self) -> None:
        self.client: Any = None

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=1)

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=SESSION_ID)

    async def prompt(self, session_id: str, prompt: list, **kwargs: Any) -> PromptResponse:
        scenario, count = prompt[0].text.split()
        n = int(count)
        client = self.client
        if scenario == "stream":
            # A model per update, as the SDK's update_agent_message_text helper
            # (gone in 1.0) built it.
            for _ in range(n):
                chunk = AgentMessageChunk(
                    session_update="agent_message_chunk", content=TextContentBlock(type="text", text=CHUNK_TEXT)
                )
                await client.session_update(session_id=session_id, update=chunk)
        elif scenario == "rpc":
            for _ in range(n):
                await client.read_text_file(session_id=session_id, path="/bench/file.txt")
        elif scenario == "perm":
            option = PermissionOption(option_id="allow", name="Allow", kind="allow_once")
            for i in range(n):
                await client.request_permission(
                    session_id=session_id, tool_call=ToolCallUpdate(tool_call_id=f"call-{i}"), options=[option]
                )
        elif scenario == "concurrent":
            await asyncio.gather(
                *(client.read_text_file(session_id=session_id, path="/bench/file.txt") for _ in range(n))
            )
        elif scenario == "large":
            content = "x" * LARGE
            for _ in range(n):
                await client.write_text_file(session_id=session_id, path="/bench/large.txt", content=content)
                read = await client.read_text_file(session_id=session_id, path="/bench/large.txt")
                if len(read.content) != LARGE:
                    raise acp.RequestError.internal_error({"got": len(read.content)})
        else:
            raise acp.RequestError.invalid_params()
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


if __name__ == "__main__":
    asyncio.run(acp.run_agent(BenchAgent()))
