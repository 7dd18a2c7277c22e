"""Load (CI-sized; ACP_LOAD_SCALE=5 for the long run): many requests in
flight both ways, a long notification burst, many connections in one
process, and no growth in memory or live objects over many messages."""

import asyncio
import gc
import os
import socket
import sys
from typing import Any, List

from conftest import peer, run_async
from test_typed import RecordingClient, prompt

from acp_engine import Connection, fd_stream, spawn_agent

SCALE = int(os.environ.get("ACP_LOAD_SCALE", "1"))
AGENT = peer("full_agent.py")


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@run_async
async def test_ten_thousand_requests_in_flight_each_way() -> None:
    n = 10_000 * SCALE
    async with spawn_agent(lambda _: RecordingClient(), sys.executable, AGENT) as agent:
        # Client -> agent: every request waits in the agent's handler while
        # the others arrive; each answer matches its request.
        answers = await asyncio.gather(*(agent.ext_method("_test/echo_later", {"i": i}) for i in range(n)))
        assert [answer["echo"] for answer in answers] == list(range(n))
        # Agent -> client: the agent starts n reads at once.
        turn = await agent.prompt(prompt(f"concurrent {n}"))
        assert turn["_meta"] == {"wrong": [], "count": n}


@run_async
async def test_a_long_burst_arrives_whole_and_in_order() -> None:
    n = 200_000 * SCALE
    client = RecordingClient()
    async with spawn_agent(lambda _: client, sys.executable, AGENT) as agent:
        await agent.prompt(prompt(f"burst {n}"))
        texts = [update["content"]["text"] for update in client.updates]
        assert len(texts) == n
        assert texts == [str(i) for i in range(n)]


@run_async
async def test_a_hundred_connections_in_one_process() -> None:
    count = 100

    async def echo(method: str, params: Any) -> Any:
        await asyncio.sleep(0)
        return {"method": method, "params": params}

    pairs: List[Any] = []
    for _ in range(count):
        a, b = socket.socketpair()
        server = Connection(fd_stream(a.fileno(), a.fileno()), echo)
        caller = Connection(fd_stream(b.fileno(), b.fileno()))
        a.close()
        b.close()
        pairs.append((server, caller))
    results = await asyncio.gather(
        *(caller.send_request("_echo", {"n": n, "k": k}) for n, (_, caller) in enumerate(pairs) for k in range(20))
    )
    assert results == [{"method": "_echo", "params": {"n": n, "k": k}} for n in range(count) for k in range(20)]
    for server, caller in pairs:
        await caller.aclose()
        await asyncio.wait_for(server.closed, 10)


@run_async
async def test_memory_and_objects_stay_flat_over_many_messages() -> None:
    client = RecordingClient()
    async with spawn_agent(lambda _: client, sys.executable, AGENT) as agent:
        async def round_of_messages() -> None:
            await agent.prompt(prompt("burst 20000"))
            client.updates.clear()
            await asyncio.gather(*(agent.ext_method("_x/ping", {"i": i}) for i in range(2000)))

        for _ in range(2):  # warm up: caches, allocator arenas, code objects
            await round_of_messages()
        gc.collect()
        objects, memory = len(gc.get_objects()), rss_mb()
        for _ in range(5 * SCALE):  # 110,000 messages (x SCALE)
            await round_of_messages()
        gc.collect()
        grown_objects, grown_memory = len(gc.get_objects()) - objects, rss_mb() - memory
        assert grown_objects < 500, f"{grown_objects} more live objects"
        assert grown_memory < 8, f"RSS grew {grown_memory:.1f} MiB"
