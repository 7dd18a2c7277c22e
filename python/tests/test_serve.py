"""Serving agents to remote clients with ``serve_agent``: a new agent per
connection over WebSocket and Streamable HTTP, calls both ways, the token
checked before any agent starts, and closing the server failing what is
pending."""

from __future__ import annotations

import asyncio
import select
from typing import Any, Dict, List

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


class OneSessionAgent(Agent):
    """An agent with one session, "s"; its prompt is the subclass's."""

    def __init__(self, connection: AgentSideConnection) -> None:
        self.connection = connection

    async def initialize(self, params: Any) -> Any:
        return {"protocolVersion": 1}

    async def new_session(self, params: Any) -> Any:
        return {"sessionId": "s"}

    async def cancel(self, params: Any) -> None:
        pass


class AskingAgent(OneSessionAgent):
    """Asks its client's permission twelve times in a turn, one at a time."""

    async def prompt(self, params: Any) -> Any:
        chosen = []
        for i in range(12):
            answer = await self.connection.request_permission(
                {
                    "sessionId": params["sessionId"],
                    "toolCall": {"toolCallId": f"t{i}"},
                    "options": [{"optionId": f"o{i}", "name": "Yes", "kind": "allow_once"}],
                }
            )
            chosen.append(answer["outcome"]["optionId"])
        return {"stopReason": "end_turn" if chosen == [f"o{i}" for i in range(12)] else "refusal"}


class SlowEveryOtherClient(ChoosingClient):
    """Answers every other request 5 ms late: far beyond the wait for it (50 µs)."""

    asked = 0

    async def request_permission(self, params: Any) -> Any:
        self.asked += 1
        if self.asked % 2 == 0:
            await asyncio.sleep(0.005)
        return await super().request_permission(params)


@pytest.mark.parametrize("transport", ["websocket", "http"])
@run_async
async def test_answers_slower_than_the_wait_for_them_still_arrive(transport: str) -> None:
    # While an answer is due, a connection the engine reads waits for it a
    # moment without sleeping (the engine's wake-up held off meanwhile); an
    # answer that comes later must still wake it, at either end.
    async with serve_agent(AskingAgent) as server:
        url = server.websocket_url if transport == "websocket" else server.http_url
        client = SlowEveryOtherClient()
        async with connect_agent(lambda _agent: client, url) as agent:
            await agent.initialize(INITIALIZE)  # type: ignore[arg-type]
            session = await agent.new_session({"cwd": "/tmp", "mcpServers": []})
            result = await agent.prompt({"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "go"}]})
            assert result["stopReason"] == "end_turn"
            assert client.asked == 12


@run_async
async def test_a_server_with_nothing_to_accept_leaves_the_loop_alone() -> None:
    # Its wake fd is readable only while connections wait to be taken: one
    # left readable would run the accept callback on every turn of the loop
    # (a busy loop once the first client had come).
    async with serve_agent(EchoAgent) as server:
        wake_fd = server._native.fileno()
        assert select.select([wake_fd], [], [], 0)[0] == []
        async with connect_agent(lambda _agent: ChoosingClient(), server.websocket_url) as agent:
            await agent.initialize(INITIALIZE)  # type: ignore[arg-type]
            assert server.connections == 1
            assert select.select([wake_fd], [], [], 0)[0] == []


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


class GatedAgent(OneSessionAgent):
    """A prompt waits until the test opens the gate."""

    async def prompt(self, params: Any) -> Any:
        GATES["reached"].set()
        await GATES["open"].wait()
        return {"stopReason": "end_turn"}


# Made by each test, on its own event loop.
GATES: Dict[str, asyncio.Event] = {}


async def _get_status(port: int, path: str) -> str:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    response = (await reader.read()).decode()
    writer.close()
    return response


@pytest.mark.parametrize("transport", ["websocket", "http"])
@run_async
async def test_draining_lets_a_turn_finish_then_ends_the_connection(transport: str) -> None:
    GATES.update(open=asyncio.Event(), reached=asyncio.Event())
    async with serve_agent(GatedAgent) as server:
        url = server.websocket_url if transport == "websocket" else server.http_url
        port = server.address[1]
        async with connect_agent(lambda _agent: ChoosingClient(), url) as agent:
            await agent.initialize(INITIALIZE)  # type: ignore[arg-type]
            await agent.new_session({"cwd": "/tmp", "mcpServers": []})
            turn = asyncio.ensure_future(agent.prompt({"sessionId": "s", "prompt": []}))
            await asyncio.wait_for(GATES["reached"].wait(), 10)
            draining = asyncio.ensure_future(server.drain(60))
            for _ in range(500):
                ready = await _get_status(port, "/readyz")
                if ready.startswith("HTTP/1.1 503"):
                    break
                await asyncio.sleep(0.01)
            assert '"status":"draining"' in ready, ready
            assert not turn.done(), "the turn is still running"
            GATES["open"].set()
            result = await asyncio.wait_for(turn, 10)
            assert result["stopReason"] == "end_turn"
            await asyncio.wait_for(draining, 10)
            await asyncio.wait_for(agent.closed, 10)
