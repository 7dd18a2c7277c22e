"""A scripted agent for test_mcp_over_acp.py: on ``initialize`` it sends its
client ``mcp/message`` requests that probe the provider's edges (server "s")
and reports each outcome, or each error, in the answer's ``_meta``; on
``session/new`` it waits on one request (the client disposes the server
meanwhile) and reports how it ended. Exits when its client hangs up."""

from __future__ import annotations

import asyncio
from typing import Any, Dict

from acp_engine import RequestError, run_agent
from acp_engine.unstable import Agent, AgentSideConnection
from acp_engine.unstable.mcp import MCP_MESSAGE_METHOD, with_mcp_request_meta


class RawCaller(Agent):
    def __init__(self, client: AgentSideConnection) -> None:
        self.client = client

    def envelope(self, request_id: str, name: str, meta: bool = True, server: str = "s") -> Dict[str, Any]:
        params: Dict[str, Any] = {"name": name}
        return {
            "serverId": server,
            "requestId": request_id,
            "method": "tools/call",
            "params": with_mcp_request_meta(params) if meta else params,
        }

    async def send(self, request_id: str, name: str, **kwargs: Any) -> Any:
        try:
            return await self.client.connection.send_request(MCP_MESSAGE_METHOD, self.envelope(request_id, name, **kwargs))
        except RequestError as error:
            return {"code": error.code, "message": error.message, "data": error.data}

    async def cancel(self, params: Any) -> None:
        pass

    async def initialize(self, params: Any) -> Any:
        results: Dict[str, Any] = {}
        for name in ("fine", "crash", "both"):
            results[name] = await self.send(name, name)
        waiting = asyncio.ensure_future(self.send("w1", "wait"))
        await asyncio.sleep(0.2)
        results["over_limit"] = await self.send("w1b", "fine")
        results["duplicate"] = await self.send("w1", "fine")
        waiting.cancel()
        try:
            await waiting
        except asyncio.CancelledError:
            results["cancelled"] = {"code": -32800}
        await asyncio.sleep(0.2)
        results["after_cancel"] = await self.send("w1", "fine")
        results["no_meta"] = await self.send("m", "fine", meta=False)
        results["unknown"] = await self.send("u", "fine", server="elsewhere")
        return {"protocolVersion": 1, "_meta": {"results": results}}

    async def prompt(self, params: Any) -> Any:
        return {"stopReason": "end_turn"}

    async def new_session(self, params: Any) -> Any:
        return {"sessionId": "s1", "_meta": {"wait": await self.send("w2", "wait")}}


if __name__ == "__main__":
    asyncio.run(run_agent(RawCaller, connection_class=AgentSideConnection))
