"""Benchmark agent on acp_engine's Agent class (see bench/README.md).
``--serve HOST:PORT`` serves remote clients instead (bench/remote.py)."""

import asyncio
import sys
from typing import Any

from acp_engine import Agent, AgentSideConnection, RequestError, run_agent, serve_agent

CHUNK_TEXT = "chunk of agent text"
SESSION_ID = "bench-session"
LARGE = 16 * 1024 * 1024


class BenchAgent(Agent):
    def __init__(self, client: AgentSideConnection) -> None:
        self.client = client

    async def initialize(self, params: Any) -> Any:
        return {"protocolVersion": 1}

    async def new_session(self, params: Any) -> Any:
        return {"sessionId": SESSION_ID}

    async def prompt(self, params: Any) -> Any:
        scenario, count = params["prompt"][0]["text"].split()
        n = int(count)
        session_id = params["sessionId"]
        client = self.client
        if scenario == "stream":
            update = client.session_update
            for _ in range(n):
                await update(
                    {
                        "sessionId": session_id,
                        "update": {
                            "sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": CHUNK_TEXT},
                        },
                    }
                )
        elif scenario == "rpc":
            for _ in range(n):
                await client.read_text_file({"sessionId": session_id, "path": "/bench/file.txt"})
        elif scenario == "perm":
            option = {"optionId": "allow", "name": "Allow", "kind": "allow_once"}
            for i in range(n):
                await client.request_permission(
                    {"sessionId": session_id, "toolCall": {"toolCallId": f"call-{i}"}, "options": [option]}
                )
        elif scenario == "concurrent":
            read = {"sessionId": session_id, "path": "/bench/file.txt"}
            await asyncio.gather(*(client.read_text_file(read) for _ in range(n)))
        elif scenario == "large":
            content = "x" * LARGE
            for _ in range(n):
                await client.write_text_file({"sessionId": session_id, "path": "/bench/large.txt", "content": content})
                read = await client.read_text_file({"sessionId": session_id, "path": "/bench/large.txt"})
                if len(read["content"]) != LARGE:
                    raise RequestError.internal_error({"got": len(read["content"])})
        else:
            raise RequestError.invalid_params()
        return {"stopReason": "end_turn"}

    async def cancel(self, params: Any) -> None:
        return None


async def serve(address: str) -> None:
    host, _, port = address.rpartition(":")
    async with serve_agent(BenchAgent, host, int(port)) as server:
        print(f"{server.websocket_url}\n{server.http_url}", flush=True)
        await server.serve_forever()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        asyncio.run(serve(sys.argv[2]))
    else:
        asyncio.run(run_agent(BenchAgent))
