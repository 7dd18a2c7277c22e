"""MCP-over-ACP on ``acp_engine.unstable.mcp``, the rules in the engine
(core/src/mcp/): our Python caller (tests/peers/mcp_agent.py) under the
official TypeScript SDK's MCP-over-ACP client (interop/ts, an
``@modelcontextprotocol/server`` server and a handler of its own), our Python
provider under the official TypeScript agent, then the edges with both ends
ours, over real processes."""

import asyncio
import subprocess
import sys
from typing import Any, Dict, List

import pytest
from conftest import official_ts, peer, run_async

from acp_engine import RequestError
from acp_engine.unstable import Client, ClientSideConnection
from acp_engine.unstable.mcp import (
    MCP_META_PROTOCOL_VERSION,
    McpBindingErrorCode,
    McpOperationContext,
    McpOverAcpProvider,
    McpProtocolError,
    parse_mcp_outcome,
    with_mcp_request_meta,
)
from acp_engine import spawn_agent

AGENT = peer("mcp_agent.py")
PROGRESS = "progress=notifications/progress:1,notifications/progress:2,notifications/progress:3"
WORDS = f"tools=add add=5 count=3 {PROGRESS} refused=-32602:Unknown tool: nope unavailable=-33001"


def test_the_official_typescript_provider_serves_our_python_caller() -> None:
    done = subprocess.run(
        official_ts("mcp-over-acp-client.mjs") + [sys.executable, AGENT], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    words, verdict = done.stdout.strip().splitlines()[-2:]
    assert verdict == "mcp ok"
    assert words == WORDS, "every progress notification, in order, before the answer"


class ProvidingClient(Client):
    """Offers "tools" (add) and "counter" (count, with progress) as the TypeScript client does."""

    def __init__(self, provider: McpOverAcpProvider) -> None:
        self.provider = provider
        self.conn: Any = None
        self.words: List[str] = []

    async def message_mcp(self, params: Any) -> Any:
        return await self.provider.handle_request(self.conn, params)

    async def session_update(self, params: Any) -> None:
        self.words.append(params["update"]["content"]["text"])

    async def request_permission(self, params: Any) -> Any:
        raise RequestError.method_not_found("session/request_permission")


async def tools(context: McpOperationContext) -> Dict[str, Any]:
    if context.method == "tools/list":
        return {"result": {"tools": [{"name": "add", "inputSchema": {"type": "object"}}]}}
    arguments = (context.params or {})["arguments"]
    return {"result": {"content": [{"type": "text", "text": str(arguments["a"] + arguments["b"])}]}}


async def counter(context: McpOperationContext) -> Dict[str, Any]:
    params = context.params or {}
    if params.get("name") != "count":
        raise McpProtocolError(-32602, f"Unknown tool: {params.get('name')}")
    to = params["arguments"]["to"]
    for step in range(1, to + 1):
        await context.notify("notifications/progress", {"progress": step, "total": to})
    return {"result": {"content": [{"type": "text", "text": str(to)}]}}


async def session_with(command: str, *args: str) -> str:
    provider = McpOverAcpProvider()
    client = ProvidingClient(provider)
    async with spawn_agent(lambda conn: client, command, *args, connection_class=ClientSideConnection) as conn:
        client.conn = conn
        servers = [provider.register_server(conn, "tools", tools), provider.register_server(conn, "counter", counter)]
        await conn.initialize({"protocolVersion": 1, "clientCapabilities": {}})
        session = await conn.new_session({"cwd": "/", "mcpServers": [server.declaration for server in servers]})
        await conn.prompt({"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "call"}]})
        for server in servers:
            await server.dispose()
    return "".join(client.words)


@run_async
async def test_our_python_provider_serves_the_official_typescript_caller() -> None:
    words = await session_with(*official_ts("mcp-over-acp-agent.mjs"))
    # The official caller drops notifications it handles after the answer: a prefix, in order.
    prefix, _, rest = words.partition(" progress=")
    assert prefix == "tools=add add=5 count=3", words
    assert rest.endswith(" refused=-32602:Unknown tool: nope unavailable=-33001"), words
    assert PROGRESS.startswith("progress=" + rest.split(" ")[0]), words


@run_async
async def test_python_provider_and_python_caller() -> None:
    assert await session_with(sys.executable, AGENT) == WORDS


class EdgeClient(ProvidingClient):
    pass


@run_async
async def test_cancel_dispose_limits_and_failures() -> None:
    """Our provider under raw mcp/message requests from a scripted agent (tests/peers/raw_mcp_caller.py)."""
    provider = McpOverAcpProvider()
    client = EdgeClient(provider)
    seen: List[str] = []
    release = asyncio.Event()

    async def handler(context: McpOperationContext) -> Dict[str, Any]:
        name = (context.params or {}).get("name")
        if name == "wait":
            try:
                await release.wait()
            except asyncio.CancelledError:
                seen.append(f"cancelled {context.request_id}")
                raise
        if name == "crash":
            raise RuntimeError("disk on fire")
        if name == "both":
            return {"result": 1, "error": {"code": 1, "message": "m"}}
        return {"result": {"ok": name}}

    async with spawn_agent(lambda conn: client, sys.executable, peer("raw_mcp_caller.py"), connection_class=ClientSideConnection) as conn:
        client.conn = conn
        registration = provider.register_server(conn, "s", handler, server_id="s", max_active_requests=1)
        with pytest.raises(ValueError, match="already registered"):
            provider.register_server(conn, "s", handler, server_id="s")
        report = await conn.initialize({"protocolVersion": 1, "clientCapabilities": {}})
        results = report["_meta"]["results"]
        # Disposing the server cancels what it runs: -32800, then it is unavailable.
        session = asyncio.ensure_future(conn.new_session({"cwd": "/", "mcpServers": []}))
        while provider._state(conn).servers["s"].running == set():
            await asyncio.sleep(0.01)
        await registration.dispose()
        waited = (await session)["_meta"]["wait"]
    assert results["fine"] == {"result": {"ok": "fine"}}
    assert results["crash"]["code"] == McpBindingErrorCode.BACKEND_FAILED
    assert results["crash"]["data"] == {"details": "disk on fire"}
    assert results["both"]["code"] == McpBindingErrorCode.BACKEND_FAILED
    assert results["over_limit"]["code"] == McpBindingErrorCode.RESOURCE_LIMIT_EXCEEDED
    assert results["duplicate"]["code"] == McpBindingErrorCode.INVALID_PARAMS
    assert results["cancelled"]["code"] == -32800
    assert results["after_cancel"] == {"result": {"ok": "fine"}}, "the slot was freed"
    assert results["no_meta"]["error"]["code"] == -32602
    assert results["unknown"]["code"] == McpBindingErrorCode.SERVER_UNAVAILABLE
    assert waited["code"] == -32800, waited
    assert seen == ["cancelled w1", "cancelled w2"]


def test_helpers() -> None:
    params = with_mcp_request_meta({"a": 1}, client_info={"name": "n", "version": "1"})
    assert params["_meta"][MCP_META_PROTOCOL_VERSION] == "2026-07-28"
    assert params["a"] == 1
    assert parse_mcp_outcome({"result": None, "_meta": 5}) == {"result": None}
    assert parse_mcp_outcome({"error": {"code": "x", "message": "m"}}) is None
    assert isinstance(RequestError(1, "m"), Exception)
