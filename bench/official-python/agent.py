"""Benchmark agent on the official Python SDK (agent-client-protocol, module
``acp``; see bench/README.md)."""

import asyncio
from typing import Any

import acp
from acp.schema import InitializeResponse, NewSessionResponse, PromptResponse

CHUNK_TEXT = "chunk of agent text"
SESSION_ID = "bench-session"


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
        scenario, n = prompt[0].text.split()
        if scenario == "stream":
            for _ in range(int(n)):
                await self.client.session_update(
                    session_id=session_id, update=acp.update_agent_message_text(CHUNK_TEXT)
                )
        elif scenario == "rpc":
            for _ in range(int(n)):
                await self.client.read_text_file(session_id=session_id, path="/bench/file.txt")
        else:
            raise acp.RequestError.invalid_params()
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


if __name__ == "__main__":
    asyncio.run(acp.run_agent(BenchAgent()))
