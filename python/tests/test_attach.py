"""Several clients on one session (``serve_agent(attach=True)``): a second
client's ``load_session`` of a session live on another connection attaches
it as an observer, with the session's history and then every update; a
permission request reaches both clients and the first answer wins; the
observer may not prompt. Over loopback, both transports, with our client."""

from __future__ import annotations

import asyncio
from typing import Any, List

from conftest import run_async

from acp_engine import Agent, AgentSideConnection, Client, RequestError, connect_agent, serve_agent

INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {}}


class AskingAgent(Agent):
    """A turn says its prompt back, asks permission, and says who allowed it."""

    def __init__(self, connection: AgentSideConnection) -> None:
        self.connection = connection

    async def initialize(self, params: Any) -> Any:
        return {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}}

    async def new_session(self, params: Any) -> Any:
        return {"sessionId": "shared"}

    async def say(self, session: str, text: str) -> None:
        update: Any = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        await self.connection.session_update({"sessionId": session, "update": update})

    async def prompt(self, params: Any) -> Any:
        session, said = params["sessionId"], params["prompt"][0]["text"]
        await self.say(session, f"{said}: heard")
        options: Any = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]
        outcome: Any = await self.connection.request_permission(
            {"sessionId": session, "toolCall": {"toolCallId": said}, "options": options}
        )
        await self.say(session, f"{said}: allowed by {outcome['_meta']['by']}")
        return {"stopReason": "end_turn"}

    async def cancel(self, params: Any) -> None:
        pass


class Watcher(Client):
    """Keeps the update texts; answers permission requests as ``name``, or
    (``answers`` False) only once they are withdrawn, which it counts."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.texts: List[str] = []
        self.answers = True
        self.asked = 0
        self.withdrawn = 0

    async def request_permission(self, params: Any) -> Any:
        self.asked += 1
        if self.answers:
            return {"outcome": {"outcome": "selected", "optionId": "allow"}, "_meta": {"by": self.name}}
        try:
            await asyncio.Future()
        except asyncio.CancelledError:
            self.withdrawn += 1
            raise

    async def session_update(self, params: Any) -> None:
        self.texts.append(params["update"]["content"]["text"])


async def _eventually(done: Any, state: Any = None) -> None:
    for _ in range(1000):
        if done():
            return
        await asyncio.sleep(0.01)
    assert done(), state() if state is not None else None


async def _two_clients_share_a_session(scheme: str) -> None:
    async with serve_agent(AskingAgent, attach=True) as server:
        url = server.http_url if scheme == "http" else server.websocket_url
        controller, observer = Watcher("controller"), Watcher("observer")
        async with connect_agent(lambda _agent: controller, url) as agent:
            await agent.initialize(INITIALIZE)  # type: ignore[arg-type]
            await agent.new_session({"cwd": "/tmp", "mcpServers": []})
            await agent.prompt({"sessionId": "shared", "prompt": [{"type": "text", "text": "one"}]})
            assert controller.texts == ["one: heard", "one: allowed by controller"]
            async with connect_agent(lambda _agent: observer, url) as joined:
                await joined.initialize(INITIALIZE)  # type: ignore[arg-type]
                loaded: Any = await joined.load_session({"sessionId": "shared", "cwd": "/tmp", "mcpServers": []})
                assert loaded["_meta"]["acpEngine/attach"]["role"] == "observer", loaded
                history = ["one", *controller.texts]
                await _eventually(lambda: len(observer.texts) == len(history))
                assert observer.texts == history

                controller.answers = False
                asked_before = controller.asked  # prompt one's request
                await agent.prompt({"sessionId": "shared", "prompt": [{"type": "text", "text": "two"}]})
                assert controller.texts[2:] == ["two: heard", "two: allowed by observer"]
                # The controller's copy is withdrawn: its handler is cancelled,
                # or (withdrawn before its engine handed it over) never runs.
                # A handler that started is cancelled, and stays so: checked
                # again a while later, since one started late would hold
                # `asked == asked_before` at first.
                def withdrawn() -> bool:
                    return controller.withdrawn == controller.asked - asked_before

                def state() -> str:
                    return f"asked {controller.asked} (before: {asked_before}), withdrawn {controller.withdrawn}"

                await _eventually(withdrawn, state)
                await asyncio.sleep(0.2)
                assert withdrawn(), state()
                assert observer.asked == 1
                await _eventually(lambda: len(observer.texts) == len(history) + 3)
                assert observer.texts[len(history) :] == ["two", *controller.texts[2:]]

                try:
                    await joined.prompt({"sessionId": "shared", "prompt": [{"type": "text", "text": "mine"}]})
                    raise AssertionError("an observer's prompt went through")
                except RequestError as error:
                    assert error.code == -32600 and "observes session shared" in str(error.data), error


@run_async
async def test_two_websocket_clients_share_a_session() -> None:
    await _two_clients_share_a_session("ws")


@run_async
async def test_two_streamable_http_clients_share_a_session() -> None:
    await _two_clients_share_a_session("http")
