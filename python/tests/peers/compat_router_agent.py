"""One agent for v1 and v2 clients, written against the official Python SDK's
API (``acp.experimental.AgentProtocolRouter``), run on ``acp_engine.compat``:
a v2 client gets the v2 echo agent of ``compat_v2_agent.py``; a v1 client a v1
agent whose turn says "echo: <text>" (and, in its first chunk, the client
name it saw at initialize) and ends with end_turn. Exits when its client hangs
up."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any, List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from compat_v2_agent import EchoAgent  # noqa: E402

from acp_engine.compat import schema  # noqa: E402
from acp_engine.compat.agent.connection import AgentSideConnection  # noqa: E402
from acp_engine.compat.experimental import AgentProtocolRouter  # noqa: E402
from acp_engine.compat.helpers import text_block, update_agent_message  # noqa: E402


class V1EchoAgent:
    def __init__(self, connection: AgentSideConnection) -> None:
        self.connection = connection
        self.client_name: Optional[str] = None

    async def initialize(
        self, protocol_version: int, client_info: Optional[schema.Implementation] = None, **kwargs: Any
    ) -> schema.InitializeResponse:
        self.client_name = client_info.name if client_info is not None else None
        return schema.InitializeResponse(protocol_version=1)

    async def new_session(self, cwd: str, **kwargs: Any) -> schema.NewSessionResponse:
        return schema.NewSessionResponse(session_id="v1-session")

    async def prompt(self, session_id: str, prompt: List[Any], **kwargs: Any) -> schema.PromptResponse:
        text = " ".join(block.text for block in prompt if isinstance(block, schema.TextContentBlock))
        said = f"echo: {text} (to {self.client_name})"
        await self.connection.session_update(session_id, update_agent_message(text_block(said)))
        return schema.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(AgentProtocolRouter(v1=V1EchoAgent, v2=lambda connection: EchoAgent()).run())
