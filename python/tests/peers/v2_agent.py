"""An agent of the ACP version 2 draft on the typed API
(``acp_engine.experimental.v2``): on a prompt it acknowledges with a message
id, then reports the turn as session updates (running, the user message,
"echo: <text>", idle with stop reason end_turn). Exits when its client
hangs up."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from acp_engine.experimental import v2

INFO = {"name": "python-v2-agent", "version": "1.0.0"}


class EchoAgent(v2.Agent):
    def __init__(self, client: v2.AgentSideConnection) -> None:
        self.client = client
        self.sessions = itertools.count(1)
        self.messages = itertools.count(1)

    async def initialize(self, params: Any) -> Any:
        return {"protocolVersion": v2.PROTOCOL_VERSION, "info": INFO, "capabilities": {}}

    async def new_session(self, params: Any) -> Any:
        return {"sessionId": f"s{next(self.sessions)}"}

    async def prompt(self, params: Any) -> Any:
        session_id = params["sessionId"]
        text = " ".join(block.get("text", "") for block in params["prompt"] if block.get("type") == "text")
        user_message, reply = f"m{next(self.messages)}", f"m{next(self.messages)}"

        async def turn() -> None:
            for update in (
                {"sessionUpdate": "state_update", "state": "running"},
                {"sessionUpdate": "user_message", "messageId": user_message, "content": params["prompt"]},
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": reply,
                    "content": {"type": "text", "text": f"echo: {text}"},
                },
                {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
            ):
                await self.client.update_session({"sessionId": session_id, "update": update})

        # v2 acknowledges the prompt; the turn goes on after the answer.
        asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(turn()))
        return {"messageId": user_message}


if __name__ == "__main__":
    asyncio.run(v2.run_agent(EchoAgent))
