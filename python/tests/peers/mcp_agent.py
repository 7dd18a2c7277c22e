"""An agent that calls the MCP servers its client offers over the ACP
connection itself (MCP-over-ACP), on ``acp_engine.unstable.mcp``: the Python
twin of interop/ts/mcp-over-acp-agent.mjs (the same calls, the same words),
so the official TypeScript client drives it as it drives the official agent.
Exits when its client hangs up."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any, Dict, List

from acp_engine import RequestError, run_agent
from acp_engine.unstable import Agent, AgentSideConnection
from acp_engine.unstable.mcp import McpOverAcpCaller, is_mcp_server_acp

caller = McpOverAcpCaller(client_info={"name": "python-mcp-agent", "version": "1.0.0"})


class McpAgent(Agent):
    def __init__(self, client: AgentSideConnection) -> None:
        self.client = client
        self.ids = itertools.count(1)
        self.servers: Dict[str, List[Any]] = {}

    async def cancel(self, params: Any) -> None:
        pass

    async def initialize(self, params: Any) -> Any:
        return {"protocolVersion": 1, "agentCapabilities": {"mcpCapabilities": {"acp": True}}, "authMethods": []}

    async def new_session(self, params: Any) -> Any:
        session_id = f"s{next(self.ids)}"
        self.servers[session_id] = [server for server in params["mcpServers"] if is_mcp_server_acp(server)]
        return {"sessionId": session_id}

    async def message_mcp(self, params: Any) -> None:
        caller.handle_notification(self.client, params)

    async def prompt(self, params: Any) -> Any:
        servers = {server["name"]: server["serverId"] for server in self.servers[params["sessionId"]]}
        conn = self.client
        listed = await caller.request(conn, servers["tools"], "tools/list", {})
        added = await caller.request(conn, servers["tools"], "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        progress: List[str] = []
        counted = await caller.request(
            conn,
            servers["counter"],
            "tools/call",
            {"name": "count", "arguments": {"to": 3}},
            on_notification=lambda note: progress.append(f"{note['method']}:{note['params']['progress']}"),
        )
        refused = await caller.request(conn, servers["counter"], "tools/call", {"name": "nope"})
        try:
            await caller.request(conn, "nobody-declared-this", "tools/list", {})
            unavailable: Any = "none"
        except RequestError as error:
            unavailable = error.code
        words = " ".join(
            [
                "tools=" + ",".join(tool["name"] for tool in listed["result"]["tools"]),
                f"add={added['result']['content'][0]['text']}",
                f"count={counted['result']['content'][0]['text']}",
                "progress=" + ",".join(progress),
                f"refused={refused['error']['code']}:{refused['error']['message']}",
                f"unavailable={unavailable}",
            ]
        )
        await self.client.session_update(
            {
                "sessionId": params["sessionId"],
                "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": words}},
            }
        )
        return {"stopReason": "end_turn"}


if __name__ == "__main__":
    asyncio.run(run_agent(McpAgent, connection_class=AgentSideConnection))
