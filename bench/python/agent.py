"""Benchmark agent on acp_engine's Agent class (see bench/README.md)."""

import asyncio

from acp_engine import Agent, AgentSideConnection, RequestError, run_agent

CHUNK_TEXT = "chunk of agent text"
SESSION_ID = "bench-session"


class BenchAgent(Agent):
    def __init__(self, client: AgentSideConnection) -> None:
        self.client = client

    async def initialize(self, params):  # type: ignore[no-untyped-def]
        return {"protocolVersion": 1}

    async def new_session(self, params):  # type: ignore[no-untyped-def]
        return {"sessionId": SESSION_ID}

    async def prompt(self, params):  # type: ignore[no-untyped-def]
        scenario, n = params["prompt"][0]["text"].split()
        session_id = params["sessionId"]
        if scenario == "stream":
            update = self.client.session_update
            for _ in range(int(n)):
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
            read = self.client.read_text_file
            for _ in range(int(n)):
                await read({"sessionId": session_id, "path": "/bench/file.txt"})
        else:
            raise RequestError.invalid_params()
        return {"stopReason": "end_turn"}

    async def cancel(self, params):  # type: ignore[no-untyped-def]
        return None


if __name__ == "__main__":
    asyncio.run(run_agent(BenchAgent))
