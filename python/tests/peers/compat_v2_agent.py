"""An ACP v2 agent written against the official Python SDK's v2 API
(``acp.experimental.v2``), run on ``acp_engine.compat``: on a prompt it
acknowledges with a message id, then reports the turn as session updates
(running, the user message, "echo: <text>", idle with stop reason end_turn).
Exits when its client hangs up."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any, List

from acp_engine.compat.experimental import v2
from acp_engine.compat.experimental.v2 import schema


class EchoAgent:
    def __init__(self) -> None:
        self.sessions = itertools.count(1)
        self.messages = itertools.count(1)

    def on_connect(self, connection: v2.AgentSideConnection) -> None:
        self.connection = connection

    async def initialize(
        self, protocol_version: int, info: schema.Implementation, **kwargs: Any
    ) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=v2.PROTOCOL_VERSION,
            info=schema.Implementation(name="python-compat-v2-agent", version="1.0.0"),
            capabilities=schema.AgentCapabilities(),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> schema.NewSessionResponse:
        return schema.NewSessionResponse(session_id=f"s{next(self.sessions)}")

    async def prompt(self, session_id: str, prompt: List[Any], **kwargs: Any) -> schema.PromptResponse:
        text = " ".join(block.text for block in prompt if isinstance(block, schema.TextContentBlock))
        user_message, reply = f"m{next(self.messages)}", f"m{next(self.messages)}"

        async def turn() -> None:
            for update in (
                schema.RunningSessionStateUpdate(),
                schema.UserMessageUpdate(message_id=user_message, content=prompt),
                schema.AgentMessageChunk(message_id=reply, content=schema.TextContentBlock(text=f"echo: {text}")),
                schema.IdleSessionStateUpdate(stop_reason="end_turn"),
            ):
                await self.connection.session_update(session_id=session_id, update=update)

        # v2 acknowledges the prompt; the turn goes on after the answer.
        asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(turn()))
        return schema.PromptResponse(message_id=user_message)


if __name__ == "__main__":
    asyncio.run(v2.run_agent(EchoAgent()))
