"""An ACP agent on this process's stdio, built on acp_engine's Agent class.

On a prompt it streams a reply, asks the user's permission, reads a file
through the client, writes one, runs ``echo hi`` in a client terminal and
reports what it said. The prompt ``cancel me`` instead waits on a permission
request until the client cancels the turn, and ends it with stop reason
``cancelled``. To a client that can show them (it advertises
``session.notices`` and ``session.compaction``), the turn also reports a
notice and a context compaction. (This is the interop contract: see
interop/README.md.)

    python examples/client.py python examples/agent.py

With ``--serve HOST:PORT`` it serves remote clients instead, one agent per
connection, over WebSocket and Streamable HTTP (it prints both URLs; a
bearer token from ACP_ENGINE_TOKEN is required when set)::

    python examples/agent.py --serve 127.0.0.1:8080
    python examples/client.py http://127.0.0.1:8080/acp
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
from typing import Dict, List, Optional

from acp_engine import Agent, AgentSideConnection, RequestError, run_agent, serve_agent
from acp_engine.schema import (
    CancelNotification,
    InitializeRequest,
    InitializeResponse,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    SessionUpdate,
    StopReason,
)

#: A notice, and a context compaction from start to end with its summary.
COMPACTION: List[SessionUpdate] = [
    {
        "sessionUpdate": "notice",
        "severity": "info",
        "title": "Context compacted",
        "description": "Older messages were summarized.",
    },
    {"sessionUpdate": "compaction_update", "compactionId": "compaction-1", "status": "in_progress"},
    {
        "sessionUpdate": "compaction_summary_chunk",
        "compactionId": "compaction-1",
        "content": {"type": "text", "text": "The user asked for a greeting."},
    },
    {"sessionUpdate": "compaction_update", "compactionId": "compaction-1", "status": "completed"},
]


class ExampleAgent(Agent):
    def __init__(self, client: AgentSideConnection) -> None:
        self.client = client
        self.sessions: Dict[str, str] = {}  # session id -> cwd
        self.next_session = itertools.count(1)
        self.client_shows_news = False  # notices and compactions (its capabilities)
        # What the client said it can do: an agent asks only for that.
        self.client_reads = self.client_writes = self.client_terminals = False

    async def initialize(self, params: InitializeRequest) -> InitializeResponse:
        capabilities = params.get("clientCapabilities") or {}
        fs = capabilities.get("fs") or {}
        self.client_reads = fs.get("readTextFile") is True
        self.client_writes = fs.get("writeTextFile") is True
        self.client_terminals = capabilities.get("terminal") is True
        session = capabilities.get("session") or {}
        self.client_shows_news = session.get("notices") is not None and session.get("compaction") is not None
        return {
            "protocolVersion": 1,
            "agentCapabilities": {},
            "authMethods": [],
            "agentInfo": {"name": "acp-engine-python-example-agent", "version": "0.1.0"},
        }

    async def new_session(self, params: NewSessionRequest) -> NewSessionResponse:
        session_id = f"session-{next(self.next_session)}"
        self.sessions[session_id] = params["cwd"]
        return {"sessionId": session_id}

    async def prompt(self, params: PromptRequest) -> PromptResponse:
        session_id = params["sessionId"]
        cwd = self.sessions.get(session_id)
        if cwd is None:
            raise RequestError.resource_not_found(session_id)
        text = "".join(block["text"] for block in params["prompt"] if block["type"] == "text")
        stop_reason: StopReason
        if text.strip() == "cancel me":
            # Waits until the client cancels the turn, which answers the
            # permission request `cancelled`.
            allowed = await self.ask_permission(session_id)
            stop_reason = "cancelled" if allowed is None else "end_turn"
        else:
            stop_reason = await self.say_hello(session_id, cwd)
        return {"stopReason": stop_reason}

    async def cancel(self, params: CancelNotification) -> None:
        print(f"[agent] the client cancelled the turn of {params['sessionId']}", file=sys.stderr)

    async def say(self, session_id: str, text: str) -> None:
        await self.client.session_update(
            {
                "sessionId": session_id,
                "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
            }
        )

    async def ask_permission(self, session_id: str) -> Optional[bool]:
        """Ask to read hello.txt: True/False for the user's choice, None if
        the turn was cancelled."""
        response = await self.client.request_permission(
            {
                "sessionId": session_id,
                "toolCall": {"toolCallId": "call-1", "title": "Read hello.txt", "kind": "read", "status": "pending"},
                "options": [
                    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
                ],
            }
        )
        outcome = response["outcome"]
        if outcome["outcome"] == "selected":
            return outcome["optionId"] == "allow"
        return None

    async def say_hello(self, session_id: str, cwd: str) -> StopReason:
        if self.client_shows_news:
            for update in COMPACTION:
                await self.client.session_update({"sessionId": session_id, "update": update})
        await self.say(session_id, "Hello! ")
        if not self.client_reads:
            await self.say(session_id, "(this client cannot read files: nothing read)")
        else:
            allowed = await self.ask_permission(session_id)
            if allowed is None:
                return "cancelled"
            if not allowed:
                await self.say(session_id, "You did not let me read hello.txt.")
                return "end_turn"
            file = await self.client.read_text_file({"sessionId": session_id, "path": os.path.join(cwd, "hello.txt")})
            await self.say(session_id, file["content"])
        if self.client_writes:
            await self.client.write_text_file(
                {"sessionId": session_id, "path": os.path.join(cwd, "written.txt"), "content": "written by agent"}
            )
        if self.client_terminals:
            async with await self.client.create_terminal(
                {"sessionId": session_id, "command": "echo", "args": ["hi"]}
            ) as terminal:
                await terminal.wait_for_exit()
                output = await terminal.current_output()
                await self.say(session_id, f"terminal said: {output['output'].strip()}")
        return "end_turn"


async def serve(address: str) -> None:
    host, _, port = address.rpartition(":")
    async with serve_agent(ExampleAgent, host, int(port), token=os.environ.get("ACP_ENGINE_TOKEN")) as server:
        print(server.websocket_url, server.http_url, sep="\n", flush=True)
        await server.serve_forever()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"] and len(sys.argv) == 3:
        asyncio.run(serve(sys.argv[2]))
    else:
        asyncio.run(run_agent(ExampleAgent))
