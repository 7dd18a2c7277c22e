"""A client whose network breaks mid-turn comes back to the same agent and
misses nothing (``reconnect_timeout``), over Streamable HTTP and WebSocket, and a server's
``max_replay_bytes`` bounds what it keeps for that: a resume needing more is
refused with 410 (and ``max_id_length`` refuses a longer session id with 400). Over loopback,
through a proxy that cuts connections."""

from __future__ import annotations

import asyncio
import re
from typing import Any, List, Optional, Set, Tuple

from conftest import run_async

from acp_engine import Agent, AgentSideConnection, Client, connect_agent, serve_agent

INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {}}
UPDATES = 300


class CutProxy:
    """Forwards loopback connections to a port; ``cut()`` ends every one it
    carries, as a network that drops would."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.carried: Set[asyncio.StreamWriter] = set()
        self.made = 0

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._forward, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    def cut(self) -> None:
        for writer in list(self.carried):
            writer.transport.abort()
        self.carried.clear()

    async def _forward(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.made += 1
        self.carried.update((client_writer, server_writer))

        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while chunk := await reader.read(65536):
                    writer.write(chunk)
                    await writer.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                writer.transport.abort()

        await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))


class StreamingAgent(Agent):
    """A prompt streams UPDATES message chunks ("0", "1", ...), then ends."""

    made: List["StreamingAgent"] = []

    def __init__(self, connection: AgentSideConnection) -> None:
        self.connection = connection
        StreamingAgent.made.append(self)

    async def initialize(self, params: Any) -> Any:
        return {"protocolVersion": 1}

    async def new_session(self, params: Any) -> Any:
        return {"sessionId": "s"}

    async def prompt(self, params: Any) -> Any:
        for i in range(UPDATES):
            await self.connection.session_update(
                {
                    "sessionId": params["sessionId"],
                    "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": str(i)}},
                }
            )
            await asyncio.sleep(0.001)
        return {"stopReason": "end_turn"}

    async def cancel(self, params: Any) -> None:
        pass


class CuttingClient(Client):
    """Collects the chunks, and cuts the network after the 100th and 200th."""

    def __init__(self, proxy: CutProxy) -> None:
        self.proxy = proxy
        self.texts: List[str] = []

    async def request_permission(self, params: Any) -> Any:
        raise NotImplementedError

    async def session_update(self, params: Any) -> None:
        self.texts.append(params["update"]["content"]["text"])
        if len(self.texts) in (100, 200):
            self.proxy.cut()


async def _cut_off_mid_turn(scheme: str) -> None:
    StreamingAgent.made.clear()
    async with serve_agent(StreamingAgent) as server:
        port = int(server.http_url.split(":")[2].split("/")[0])
        proxy = CutProxy(port)
        url = f"{scheme}://127.0.0.1:{await proxy.start()}/acp"
        client = CuttingClient(proxy)
        async with connect_agent(lambda _agent: client, url, reconnect_timeout=5) as agent:
            await agent.initialize(INITIALIZE)  # type: ignore[arg-type]
            session = await agent.new_session({"cwd": "/tmp", "mcpServers": []})
            result = await agent.prompt({"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "go"}]})
            assert result["stopReason"] == "end_turn"
            assert client.texts == [str(i) for i in range(UPDATES)], "each update once, in order"
        assert len(StreamingAgent.made) == 1, "the same agent throughout"
        assert proxy.made >= 3, "the streams or sockets were reopened"


@run_async
async def test_a_client_cut_off_mid_turn_resumes_and_misses_nothing() -> None:
    await _cut_off_mid_turn("http")


@run_async
async def test_a_websocket_client_cut_off_mid_turn_resumes_and_misses_nothing() -> None:
    await _cut_off_mid_turn("ws")


async def _http(port: int, request: str, until: Optional[str] = None) -> Tuple[str, asyncio.StreamWriter]:
    """Send a raw request; read the response to its end, or until ``until`` shows."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request.encode())
    text = ""
    while until is None or until not in text:
        chunk = await asyncio.wait_for(reader.read(65536), 10)
        if not chunk:
            break
        text += chunk.decode()
    return text, writer


def _post(connection: Optional[str], body: str) -> str:
    header = f"Acp-Connection-Id: {connection}\r\n" if connection else ""
    return (
        "POST /acp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
        f"{header}Content-Length: {len(body)}\r\n\r\n{body}"
    )


def _get(connection: str, last_event_id: Optional[int] = None) -> str:
    resume = "" if last_event_id is None else f"Last-Event-ID: {last_event_id}\r\n"
    return f"GET /acp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAcp-Connection-Id: {connection}\r\n{resume}\r\n"


@run_async
async def test_max_replay_bytes_bounds_what_a_resume_can_get() -> None:
    StreamingAgent.made.clear()
    async with serve_agent(StreamingAgent, max_replay_bytes=256) as server:
        port = int(server.http_url.split(":")[2].split("/")[0])
        initialize = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}'
        answer, _ = await _http(port, _post(None, initialize))
        connection = re.search(r"(?i)acp-connection-id: *(\S+)", answer).group(1)  # type: ignore[union-attr]
        await _http(port, _post(connection, '{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}'))
        prompt = '{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}'
        session_stream = asyncio.ensure_future(
            _http(port, _get(connection).replace("\r\n\r\n", "\r\nAcp-Session-Id: s\r\n\r\n"), until='"stopReason"')
        )
        await asyncio.sleep(0.1)
        await _http(port, _post(connection, prompt).replace("\r\n\r\n", "\r\nAcp-Session-Id: s\r\n\r\n", 1))
        events, _ = await session_stream
        ids = [int(i) for i in re.findall(r"\nid: (\d+)\n", "\n" + events)]
        assert len(ids) == UPDATES + 1, "every event has an id"
        session_get = _get(connection).replace("\r\n\r\n", "\r\nAcp-Session-Id: s\r\n\r\n")
        # After the last one nothing is missing; after the first, too much was forgotten.
        resumed, _ = await _http(port, session_get.replace("\r\n\r\n", f"\r\nLast-Event-ID: {ids[-1]}\r\n\r\n"), until="\r\n\r\n")
        assert resumed.startswith("HTTP/1.1 200"), resumed
        refused, _ = await _http(port, session_get.replace("\r\n\r\n", f"\r\nLast-Event-ID: {ids[0]}\r\n\r\n"), until="kept")
        assert refused.startswith("HTTP/1.1 410") and "no longer kept" in refused, refused


@run_async
async def test_max_id_length_refuses_a_longer_session_id_with_400() -> None:
    async with serve_agent(StreamingAgent, max_id_length=8) as server:
        port = int(server.http_url.split(":")[2].split("/")[0])
        initialize = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}'
        answer, _ = await _http(port, _post(None, initialize))
        connection = re.search(r"(?i)acp-connection-id: *(\S+)", answer).group(1)  # type: ignore[union-attr]

        def cancel(session: str) -> str:
            body = '{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"%s"}}' % session
            return _post(connection, body).replace("\r\n\r\n", f"\r\nAcp-Session-Id: {session}\r\n\r\n", 1)

        accepted, _ = await _http(port, cancel("abcdefgh"))
        assert accepted.startswith("HTTP/1.1 202"), accepted
        refused, _ = await _http(port, cancel("abcdefghi"))
        assert refused.startswith("HTTP/1.1 400") and "Session ID exceeds maxIdLength (8)" in refused, refused
