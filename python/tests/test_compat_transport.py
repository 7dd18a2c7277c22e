"""acp_engine.compat over a message-level Transport (the official SDK's
``Connection(handler, transport)`` / ``run_agent(agent, transport)`` form):
an agent and a client joined by ``memory_transport_pair``, through the engine
on both ends."""

import asyncio
from typing import Any, List, Optional

import pytest
from conftest import run_async

pytest.importorskip("pydantic")

from acp_engine.compat import PROTOCOL_VERSION, connect_to_agent, run_agent  # noqa: E402
from acp_engine.compat._transport import memory_transport_pair  # noqa: E402
from acp_engine.compat.connection import Connection  # noqa: E402
from acp_engine.compat.schema import (  # noqa: E402
    AgentMessageChunk,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    ReadTextFileResponse,
    TextContentBlock,
)


class EchoAgent:
    """Reads the file the prompt names from the client and streams it back."""

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=protocol_version)

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=f"s-{cwd}")

    async def prompt(self, session_id: str, prompt: List[Any], **kwargs: Any) -> PromptResponse:
        read = await self.conn.read_text_file(session_id=session_id, path=prompt[0].text)
        for word in read.content.split():
            chunk = AgentMessageChunk(
                session_update="agent_message_chunk", content=TextContentBlock(type="text", text=word)
            )
            await self.conn.session_update(session_id, chunk)
        return PromptResponse(stop_reason="end_turn")


class RecordingClient:
    def __init__(self) -> None:
        self.words: List[str] = []

    def on_connect(self, conn: Any) -> None:
        pass

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> ReadTextFileResponse:
        return ReadTextFileResponse(content=f"contents of {path} in {session_id}")

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.words.append(update.content.text)


@run_async
async def test_agent_and_client_over_a_memory_transport_pair() -> None:
    agent_end, client_end = memory_transport_pair()
    served = asyncio.ensure_future(run_agent(EchoAgent(), agent_end))
    client = RecordingClient()
    conn = connect_to_agent(client, client_end)
    init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
    assert init.protocol_version == PROTOCOL_VERSION
    session = await conn.new_session(cwd="/w", mcp_servers=[])
    assert session.session_id == "s-/w"
    done = await conn.prompt(session_id=session.session_id, prompt=[TextContentBlock(type="text", text="a.txt")])
    assert done.stop_reason == "end_turn"
    # Every update before the response that follows them, in order.
    assert client.words == ["contents", "of", "a.txt", "in", "s-/w"]
    # Closing the client's end ends the agent's input: run_agent returns.
    await conn.close()
    await asyncio.wait_for(served, 10)


class FailingSendTransport:
    """Receives nothing; every send fails."""

    def __init__(self) -> None:
        self.closed = asyncio.Event()

    async def send(self, message: dict) -> None:  # type: ignore[type-arg]
        raise ConnectionError("the line is down")

    async def receive(self) -> Optional[dict]:  # type: ignore[type-arg]
        await asyncio.Event().wait()
        return None

    async def close(self) -> None:
        self.closed.set()


@run_async
async def test_a_transport_that_cannot_send_closes_the_connection() -> None:
    async def handler(method: str, params: Any, is_notification: bool) -> Any:
        return None

    transport = FailingSendTransport()
    conn = Connection(handler, transport)
    # The request is written, its send fails: the connection closes and the
    # pending call fails instead of waiting forever.
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(conn.send_request("ping"), 10)
    await asyncio.wait_for(transport.closed.wait(), 10)
    assert conn._pending == {}
    await conn.close()


class ScriptedTransport:
    """The peer's end, driven by the test: ``deliver`` hands the connection a
    message and returns once the connection asks for the next one."""

    def __init__(self) -> None:
        self.incoming: "asyncio.Queue[Optional[dict[str, Any]]]" = asyncio.Queue()
        self.sent: "asyncio.Queue[dict[str, Any]]" = asyncio.Queue()
        self.receiving = asyncio.Event()

    async def send(self, message: dict) -> None:  # type: ignore[type-arg]
        await self.sent.put(message)

    async def receive(self) -> Optional[dict]:  # type: ignore[type-arg]
        self.receiving.set()
        try:
            return await self.incoming.get()
        finally:
            self.receiving.clear()

    async def close(self) -> None:
        self.incoming.put_nowait(None)

    async def deliver(self, message: dict) -> None:  # type: ignore[type-arg]
        self.receiving.clear()
        await self.incoming.put(message)
        await asyncio.wait_for(self.receiving.wait(), 10)


@run_async
async def test_a_message_is_handled_before_the_transport_is_asked_for_the_next() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def handler(method: str, params: Any, is_notification: bool) -> Any:
        started.set()
        await release.wait()
        return {"ok": True}

    transport = ScriptedTransport()
    conn = Connection(handler, transport)
    await transport.deliver({"jsonrpc": "2.0", "id": 7, "method": "work", "params": {}})
    await asyncio.wait_for(started.wait(), 10)
    # The cancellation is handled before the transport is asked for more, so
    # the handler finishing in this same turn is too late: -32800, not its result.
    await transport.deliver({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}})
    release.set()
    answer = await asyncio.wait_for(transport.sent.get(), 10)
    assert answer["id"] == 7 and answer["error"]["code"] == -32800, answer
    await conn.close()


@run_async
async def test_a_request_and_its_cancellation_queued_together_never_start_the_handler() -> None:
    started: List[str] = []

    async def handler(method: str, params: Any, is_notification: bool) -> Any:
        started.append(method)
        return {"ok": True}

    transport = ScriptedTransport()
    # Both wait in the transport before the connection asks for anything: as
    # in the official Connection, a request's handler runs only once the
    # transport is asked for more and waits, so the cancellation is first.
    transport.incoming.put_nowait({"jsonrpc": "2.0", "id": 3, "method": "work", "params": {}})
    transport.incoming.put_nowait({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 3}})
    conn = Connection(handler, transport)
    answer = await asyncio.wait_for(transport.sent.get(), 10)
    assert answer["id"] == 3 and answer["error"]["code"] == -32800, answer
    # The next request does run.
    await transport.deliver({"jsonrpc": "2.0", "id": 4, "method": "next", "params": {}})
    assert (await asyncio.wait_for(transport.sent.get(), 10))["result"] == {"ok": True}
    assert started == ["next"]
    await conn.close()


@run_async
async def test_a_notification_handler_waiting_for_the_transport_next_message_is_not_stuck() -> None:
    conn: Optional[Connection] = None
    handled: List[str] = []
    noted = asyncio.Event()

    async def handler(method: str, params: Any, is_notification: bool) -> Any:
        if method == "ask":
            assert conn is not None
            # The connection's first request: its answer comes from the
            # transport after a request and a notification.
            assert await conn.send_request("question") == {"answer": 42}
        handled.append(method)
        if method == "note":
            noted.set()
        return {"echo": method}

    transport = ScriptedTransport()
    conn = Connection(handler, transport)
    await transport.deliver({"jsonrpc": "2.0", "method": "ask", "params": {}})
    question = await asyncio.wait_for(transport.sent.get(), 10)
    assert question == {"jsonrpc": "2.0", "id": 0, "method": "question"}
    # While the notification handler waits: a request (it runs at once) and a
    # notification (it waits its turn); then the answer.
    await transport.deliver({"jsonrpc": "2.0", "id": 1, "method": "other", "params": {}})
    assert await asyncio.wait_for(transport.sent.get(), 10) == {"jsonrpc": "2.0", "id": 1, "result": {"echo": "other"}}
    await transport.deliver({"jsonrpc": "2.0", "method": "note", "params": {}})
    await transport.deliver({"jsonrpc": "2.0", "id": 0, "result": {"answer": 42}})
    await asyncio.wait_for(noted.wait(), 10)
    assert handled == ["other", "ask", "note"]
    await conn.close()
