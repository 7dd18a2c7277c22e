"""An agent that speaks ACP v1 and the version 2 draft on one connection
(``protocol_versions=(1, 2)``), written on the plain ``Connection``: the
engine selects the version at ``initialize`` and checks every message
against it; the handlers answer in the selected version's shapes.

On a prompt it says "echo: <text>" and ends the turn: in v1 with a
``session/update`` chunk and the prompt's answer ``end_turn``; in v2 the
prompt is acknowledged with a message id and the turn is reported by
session updates (the user message, the chunk, ``running`` then ``idle`` with
stop reason ``end_turn``). Exits when its client hangs up.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from typing import Any, Dict

from acp_engine import Connection, RequestError, Side, stdio_stream

INFO = {"name": "dual-version-agent", "version": "1.0.0"}


def main() -> None:
    asyncio.run(serve())


async def serve() -> None:
    sessions = itertools.count(1)
    messages = itertools.count(1)
    connection: Connection

    async def update(session_id: str, update: Dict[str, Any]) -> None:
        await connection.send_notification("session/update", {"sessionId": session_id, "update": update})

    async def prompt(params: Dict[str, Any]) -> Dict[str, Any]:
        session_id = params["sessionId"]
        text = " ".join(block.get("text", "") for block in params["prompt"] if block.get("type") == "text")
        chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"echo: {text}"}}
        if connection.protocol_version == 1:
            await update(session_id, chunk)
            return {"stopReason": "end_turn"}
        user_message, reply = f"m{next(messages)}", f"m{next(messages)}"

        async def turn() -> None:
            await update(session_id, {"sessionUpdate": "state_update", "state": "running"})
            await update(
                session_id, {"sessionUpdate": "user_message", "messageId": user_message, "content": params["prompt"]}
            )
            await update(session_id, {**chunk, "messageId": reply})
            await update(session_id, {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})

        # v2 acknowledges the prompt; the turn goes on after the answer.
        asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(turn()))
        return {"messageId": user_message}

    async def on_request(method: str, params: Any) -> Any:
        if method == "initialize":
            if connection.protocol_version == 2:
                return {"protocolVersion": 2, "info": INFO, "capabilities": {}}
            return {"protocolVersion": 1, "agentCapabilities": {}, "agentInfo": INFO}
        if method == "session/new":
            return {"sessionId": f"s{next(sessions)}"}
        if method == "session/prompt":
            return await prompt(params)
        raise RequestError.method_not_found(method)

    connection = Connection(stdio_stream(), on_request, side=Side.AGENT, protocol_versions=(1, 2))
    reason = await connection.closed
    print(f"dual-version-agent: closed ({reason})", file=sys.stderr)


if __name__ == "__main__":
    main()
