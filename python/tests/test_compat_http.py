"""acp_engine.compat's remote transports (``acp.http``, ``acp.ws``) against the
official TypeScript SDK 2.4.0 (interop/ts, installed by interop/setup.sh): its
interop client drives the official Python SDK's interop agent served by our
ASGI app, over WebSocket and Streamable HTTP; our client streams drive its
agent behind its own server (AcpServer); and what a handshake carries."""

import asyncio
import socket
import subprocess
import sys
from typing import Any, Dict, Iterator, List, Tuple

import pytest
from conftest import official_ts, peer, run_async

pytest.importorskip("pydantic")  # the compat extra is installed by python/test.sh
import websockets.asyncio.server as ws_server  # noqa: E402

import acp_engine.compat as acp  # noqa: E402
from acp_engine.compat._cookies import MemoryAcpCookieStore  # noqa: E402
from acp_engine.compat.http.client import create_http_stream  # noqa: E402
from acp_engine.compat.ws.client import create_websocket_stream  # noqa: E402


def serve(argv: List[str]) -> Iterator[Tuple[str, str]]:
    """A server process: its WebSocket and HTTP URLs, the first two lines it prints."""
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        urls = (server.stdout.readline().strip(), server.stdout.readline().strip())
        assert urls[0].startswith("ws://") and urls[1].startswith("http://"), urls
        yield urls
    finally:
        server.kill()
        server.wait()


@pytest.fixture(scope="module")
def our_server() -> Iterator[Tuple[str, str]]:
    yield from serve([sys.executable, "-m", "acp_engine.compat", peer("compat_asgi_agent.py")])


@pytest.fixture(scope="module")
def official_server() -> Iterator[Tuple[str, str]]:
    yield from serve(official_ts("agent.mjs") + ["--serve", "127.0.0.1:0"])


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_the_official_client_drives_the_official_python_agent_on_our_asgi_app(
    our_server: Tuple[str, str], transport: str
) -> None:
    url = our_server[0] if transport == "ws" else our_server[1]
    done = subprocess.run(official_ts("client.mjs") + [url], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "interop ok"


class _Listener:
    """A client that advertises nothing and keeps what the agent says."""

    def __init__(self) -> None:
        self.said: List[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if getattr(update, "session_update", None) == "agent_message_chunk":
            self.said.append(update.content.text)


@pytest.mark.parametrize("transport", ["ws", "http"])
@run_async
async def test_our_client_streams_drive_the_official_agent_behind_its_own_server(
    official_server: Tuple[str, str], transport: str
) -> None:
    if transport == "ws":
        stream = await create_websocket_stream(official_server[0])
    else:
        stream = create_http_stream(official_server[1])
    listener = _Listener()
    conn = acp.connect_to_agent(listener, stream)
    try:
        init = await asyncio.wait_for(conn.initialize(protocol_version=1), 10)
        assert init.protocol_version == 1
        session = await asyncio.wait_for(conn.new_session(cwd="/", mcp_servers=[]), 10)
        result = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("Say hello")]), 10
        )
        assert result.stop_reason == "end_turn"
        # The updates come before the turn's answer.
        assert listener.said[0] == "Hello! " and "cannot read files" in listener.said[1], listener.said
    finally:
        await conn.close()
        await stream.close()


@run_async
async def test_headers_and_the_cookie_stores_cookies_go_with_the_handshake() -> None:
    seen: Dict[str, Any] = {}

    async def handler(websocket: Any) -> None:
        seen.update((name.lower(), value) for name, value in websocket.request.headers.raw_items())
        await websocket.close()

    store = MemoryAcpCookieStore()
    store.store_set_cookie("affinity=b2; Path=/")
    async with ws_server.serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        stream = await create_websocket_stream(f"ws://127.0.0.1:{port}/acp", headers={"X-Api-Key": "k1"}, cookie_store=store)
        conn = acp.connect_to_agent(_Listener(), stream)
        # The server closes at once: the request fails, after the handshake.
        with pytest.raises((acp.RequestError, ConnectionError)):
            await asyncio.wait_for(conn.initialize(protocol_version=1), 10)
        await conn.close()
    assert seen.get("x-api-key") == "k1" and seen.get("cookie") == "affinity=b2", seen


@pytest.mark.parametrize("transport", ["ws", "http"])
@run_async
async def test_messages_moved_by_hand_then_a_connection_over_the_same_stream(
    official_server: Tuple[str, str], transport: str
) -> None:
    if transport == "ws":
        stream: Any = await create_websocket_stream(official_server[0])
    else:
        stream = create_http_stream(official_server[1])
    try:
        initialize = {"protocolVersion": 1, "clientCapabilities": {}}
        # A receive() and a send() at once (the first use dials, once).
        answer, _ = await asyncio.wait_for(
            asyncio.gather(
                stream.receive(),
                stream.send({"jsonrpc": "2.0", "id": "by-hand", "method": "initialize", "params": initialize}),
            ),
            10,
        )
        assert answer is not None and answer["id"] == "by-hand", answer
        assert answer["result"]["protocolVersion"] == 1, answer
        # The connection runs over what the hand-moved messages used.
        listener = _Listener()
        conn = acp.connect_to_agent(listener, stream)
        session = await asyncio.wait_for(conn.new_session(cwd="/", mcp_servers=[]), 10)
        result = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("Say hello")]), 10
        )
        assert result.stop_reason == "end_turn" and listener.said[0] == "Hello! ", listener.said
        with pytest.raises(RuntimeError, match="a connection runs on this stream"):
            await stream.receive()
        await conn.close()
    finally:
        await stream.close()


@run_async
async def test_a_closed_websocket_stream_receives_nothing_and_refuses_to_send() -> None:
    async def echo(websocket: Any) -> None:
        async for message in websocket:
            await websocket.send(message)

    async with ws_server.serve(echo, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        stream = await create_websocket_stream(f"ws://127.0.0.1:{port}/acp")
        await stream.send({"n": 1})
        assert await asyncio.wait_for(stream.receive(), 10) == {"n": 1}
        await stream.close()
        assert await stream.receive() is None
        with pytest.raises(ConnectionError):
            await stream.send({"n": 2})


def test_a_websocket_nobody_answers_fails_when_it_is_dialled() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    url = f"ws://127.0.0.1:{port}/acp"
    with pytest.raises(OSError, match=f"cannot connect to {url}: "):
        asyncio.run(create_websocket_stream(url))


@run_async
async def test_an_http_stream_moved_by_hand_fails_with_the_reason_when_nobody_answers() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    url = f"http://127.0.0.1:{port}/acp"
    stream = create_http_stream(url)
    with pytest.raises(OSError, match=f"cannot connect to {url}: "):
        await stream.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    await stream.close()


@run_async
async def test_the_asgi_apps_refusal_of_a_post_reaches_the_client_every_time() -> None:
    # The app forwards the POST's body as a stream; the engine's server must
    # read it before answering 415, or closing over the unread bytes resets
    # the connection under the answer (httpx2.ReadError, some of the time).
    httpx2 = pytest.importorskip("httpx2")
    from acp_engine.compat.http.asgi import create_asgi_app

    app = create_asgi_app(lambda conn: _Listener())
    transport = httpx2.ASGITransport(app=app)
    async with app.router.lifespan_context(app), httpx2.AsyncClient(transport=transport, base_url="http://t") as client:
        for _ in range(30):
            response = await client.post("/acp", headers={"Content-Type": "text/plain"}, content="{}")
            assert (response.status_code, response.json()) == (415, {"error": "Unsupported Media Type"})


def test_a_client_stream_refuses_the_other_transports_url() -> None:
    with pytest.raises(ValueError, match="expected a http or https URL"):
        create_http_stream("ws://127.0.0.1:1/acp")
    with pytest.raises(ValueError, match="expected a ws or wss URL"):
        asyncio.run(create_websocket_stream("http://127.0.0.1:1/acp"))
    with pytest.raises(TypeError, match="takes no client"):
        create_http_stream("http://127.0.0.1:1/acp", client=object())
