"""An ACP v2 agent written against the official Python SDK's v2 API
(``acp.experimental.v2``), run on ``acp_engine.compat``: on a prompt it
acknowledges with a message id, then reports the turn as session updates
(running, the user message, "echo: <text>", idle with stop reason end_turn).
It also suggests next edits (``nes/*``, ``document/*``): one jump to the end of
each document it was told of, and a vendor suggestion.
Exits when its client hangs up."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any, Dict, List

from acp_engine.compat.experimental import v2
from acp_engine.compat.experimental.v2 import schema


class EchoAgent:
    def __init__(self) -> None:
        self.sessions = itertools.count(1)
        self.messages = itertools.count(1)
        self.documents: Dict[str, str] = {}

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

    async def start_nes(self, **kwargs: Any) -> schema.StartNesResponse:
        return schema.StartNesResponse(session_id=f"nes{next(self.sessions)}")

    async def did_open(self, session_id: str, uri: Any, language_id: str, version: int, text: str, **kwargs: Any) -> None:
        self.documents[str(uri)] = text

    async def suggest_nes(self, session_id: str, uri: Any, version: int, position: schema.Position, trigger_kind: str,
                          **kwargs: Any) -> schema.SuggestNesResponse:
        lines = self.documents[str(uri)].split("\n")
        end = schema.Position(line=len(lines) - 1, character=len(lines[-1]))
        return schema.SuggestNesResponse(suggestions=[
            schema.NesJumpSuggestionVariant(suggestion_id="j1", uri=uri, position=end),
            schema.OtherNesSuggestion(kind="_vendor_hint", suggestion_id="v1", hint=f"triggered {trigger_kind}"),
        ])


if __name__ == "__main__":
    asyncio.run(v2.run_agent(EchoAgent()))
