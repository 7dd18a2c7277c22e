"""Serving agents to remote clients with ``serve_agent``: a new agent per
connection over WebSocket and Streamable HTTP, calls both ways, the token
checked before any agent starts, and closing the server failing what is
pending."""

from __future__ import annotations

import asyncio
from typing import Any, List

import pytest
from conftest import run_async

from acp_engine import Agent, AgentSideConnection, Client, RequestError, connect_agent, serve_agent

INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {}}


class EchoAgent(Agent):
    """Answers a prompt by asking its client's permission and reporting the
    choice in an update; the prompt "hang" never ends."""

    made: List["EchoAgent"] = []

    def __init__(self, connection: AgentSideConnection) -> None:
        self.connection = connection
        EchoAgent.made.append(self)

    async def initialize(self, params: Any) -> Any:
        return {"protocolVersion": 1}

    async def new_session(self, params: Any) -> Any:
        return {"sessionId": f"s{len(EchoAgent.made)}"}

    async def prompt(self, params: Any) -> Any:
        if params["prompt"][0]["text"] == "hang":
            await asyncio.Event().wait()
        answer = await self.connection.request_permission(
            {
                "sessionId": params["sessionId"],
                "toolCall": {"toolCallId": "t1"},
                "options": [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}],
            }
        )
        chosen = answer["outcome"]["optionId"]
        await self.connection.session_update(
            {
                "sessionId": params["sessionId"],
                "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": chosen}},
            }
        )
        return {"stopReason": "end_turn"}

    async def cancel(self, params: Any) -> None:
        pass


class ChoosingClient(Client):
    def __init__(self) -> None:
        self.texts: List[str] = []

    async def request_permission(self, params: Any) -> Any:
        return {"outcome": {"outcome": "selected", "optionId": params["options"][0]["optionId"]}}

    async def session_update(self, params: Any) -> None:
        self.texts.append(params["update"]["content"]["text"])


@pytest.mark.parametrize("transport", ["websocket", "http"])
@run_async
async def test_each_connection_gets_its_own_agent(transport: str) -> None:
    EchoAgent.made.clear()
    async with serve_agent(EchoAgent) as server:
        url = server.websocket_url if transport == "websocket" else server.http_url
        assert url.startswith("ws://" if transport == "websocket" else "http://")
        for turn in range(2):
            client = ChoosingClient()
            async with connect_agent(lambda _agent: client, url) as agent:
                await agent.initialize(INITIALIZE)  # type: ignore[arg-type]
                session = await agent.new_session({"cwd": "/tmp", "mcpServers": []})
                result = await agent.prompt({"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "go"}]})
                assert result["stopReason"] == "end_turn"
                # The update came before the turn's end.
                assert client.texts == ["yes"]
            assert len(EchoAgent.made) == turn + 1


@run_async
async def test_the_token_is_checked_before_any_agent_starts() -> None:
    EchoAgent.made.clear()
    async with serve_agent(EchoAgent, token="s3cret") as server:
        for url in (server.websocket_url, server.http_url):
            async with connect_agent(lambda _agent: ChoosingClient(), url, token="guess") as agent:
                with pytest.raises(RequestError):
                    await agent.initialize(INITIALIZE)  # type: ignore[arg-type]
                assert "401" in await agent.closed
        assert EchoAgent.made == []
        async with connect_agent(lambda _agent: ChoosingClient(), server.http_url, token="s3cret") as agent:
            await agent.initialize(INITIALIZE)  # type: ignore[arg-type]
        assert len(EchoAgent.made) == 1


@run_async
async def test_closing_the_server_fails_what_is_pending() -> None:
    EchoAgent.made.clear()
    async with serve_agent(EchoAgent) as server:
        async with connect_agent(lambda _agent: ChoosingClient(), server.websocket_url) as agent:
            await agent.initialize(INITIALIZE)  # type: ignore[arg-type]
            session = await agent.new_session({"cwd": "/tmp", "mcpServers": []})
            turn = asyncio.ensure_future(
                agent.prompt({"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "hang"}]})
            )
            await asyncio.sleep(0.1)
            assert server.connections == 1
            await server.aclose()
            with pytest.raises(RequestError) as failed:
                await asyncio.wait_for(turn, 5)
            assert failed.value.is_connection_closed(), failed.value
            await EchoAgent.made[0].connection.closed
