"""Stream observers over a real pipe to the official TypeScript SDK's agent
(interop/ts/agent.mjs): the engine hands the host every message it reads or
writes, as its line, in wire order; the native ``Connection(observer=...)`` /
``set_observer`` and the compat ``Connection(observers=[...])`` /
``add_observer`` (the official ``acp.connection`` API) see them."""

import asyncio
import json
from typing import Any, List, Tuple

from conftest import official_ts, run_async

from acp_engine import Connection, Side, spawn_stream
from acp_engine.compat import connect_to_agent
from acp_engine.compat.connection import StreamDirection, StreamEvent
from acp_engine.compat.schema import Implementation

INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {}}


@run_async
async def test_the_native_observer_sees_every_line_in_wire_order() -> None:
    argv = official_ts("agent.mjs")
    seen: List[Tuple[bool, Any]] = []
    connection = Connection(
        spawn_stream(*argv), side=Side.CLIENT, observer=lambda inbound, line: seen.append((inbound, json.loads(line)))
    )
    try:
        answer = await connection.send_request("initialize", INITIALIZE)
        assert seen[0] == (
            False,
            {"jsonrpc": "2.0", "id": seen[0][1]["id"], "method": "initialize", "params": INITIALIZE},
        )
        assert seen[1] == (True, {"jsonrpc": "2.0", "id": seen[0][1]["id"], "result": answer})
        connection.set_observer(None)
        await connection.send_request("session/new", {"cwd": "/", "mcpServers": []})
        assert len(seen) == 2
    finally:
        await connection.aclose()


class _Quiet:
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None


@run_async
async def test_compat_observers_see_stream_events() -> None:
    argv = official_ts("agent.mjs")
    process = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    events: List[StreamEvent] = []
    later: List[StreamEvent] = []
    awaited: "asyncio.Queue[StreamEvent]" = asyncio.Queue()

    async def slow(event: StreamEvent) -> None:
        await awaited.put(event)

    async with connect_to_agent(_Quiet(), process.stdin, process.stdout, observers=[events.append, slow]) as agent:
        await agent.initialize(protocol_version=1, client_info=Implementation(name="ours", version="1"))
        assert [(e.direction, e.message.get("method", "result" in e.message)) for e in events] == [
            (StreamDirection.OUTGOING, "initialize"),
            (StreamDirection.INCOMING, True),
        ]
        assert events[1].message["result"]["protocolVersion"] == 1
        assert (await asyncio.wait_for(awaited.get(), 5)).message["method"] == "initialize"
        agent._conn.add_observer(later.append)
        session = await agent.new_session(cwd="/")
        assert [e.message.get("method") for e in later if e.direction == StreamDirection.OUTGOING] == ["session/new"]
        assert later[-1].message["result"]["sessionId"] == session.session_id
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), 10) == 0
