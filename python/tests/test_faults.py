"""Faults over real processes (the Python side of core/tests/faults.rs): a
peer killed mid-write and mid-burst, a peer that closes its stdin only.
Every pending call fails with "Connection closed", ``closed`` resolves and
nothing hangs (run_async's ceiling catches a hang). The time from the fault
to the last failure is printed, not asserted: run with -s to see it."""

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from typing import Any, List, Sequence, Set

import pytest
from conftest import gone, run_async, wait_gone

from acp_engine import Connection, RequestError, spawn_stream

# The peers: plain Python scripts speaking raw bytes, so that they can stop
# anywhere in a line.

# Reads N requests (they are pending on our side), then writes a complete
# `ready` notification followed by the first half of a line, flushes, and
# waits to be killed. KIND "response": half of the answer to the first
# request; "update": half of a 4 MiB session/update.
HALF_LINE_PEER = textwrap.dedent(
    """
    import json, sys, time
    n, kind = int(sys.argv[1]), sys.argv[2]
    ids = [json.loads(sys.stdin.buffer.readline())["id"] for _ in range(n)]
    if kind == "response":
        line = json.dumps({"jsonrpc": "2.0", "id": ids[0], "result": {"pad": "r" * 1000}})
    else:
        line = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {
            "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "u" * (4 << 20)}}}})
    ready = json.dumps({"jsonrpc": "2.0", "method": "ready", "params": {"pending": ids}}) + "\\n"
    sys.stdout.buffer.write(ready.encode() + line.encode()[: len(line) // 2])
    sys.stdout.buffer.flush()
    time.sleep(60)
    """
)

# Reads N requests, then sends numbered notifications as fast as it can,
# forever (100 per write, so a kill lands mid-line most of the time).
BURST_PEER = textwrap.dedent(
    """
    import sys
    n = int(sys.argv[1])
    for _ in range(n):
        sys.stdin.buffer.readline()
    out, i, pad = sys.stdout.buffer, 0, b"x" * 100
    while True:
        out.write(b"".join(b'{"jsonrpc":"2.0","method":"tick","params":{"i":%d,"pad":"%s"}}\\n' % (i + k, pad)
                           for k in range(100)))
        i += 100
    """
)

# Closes its stdin and keeps running with its stdout open; says so first.
STDIN_CLOSING_PEER = textwrap.dedent(
    """
    import os, sys, time
    os.close(0)
    sys.stdout.write('{"jsonrpc":"2.0","method":"stdin_closed","params":{}}\\n')
    sys.stdout.flush()
    time.sleep(60)
    """
)


async def all_fail_closed(calls: "Sequence[asyncio.Future[Any]]", since: float) -> float:
    """Every call fails with "Connection closed"; returns the ms from
    ``since`` to the last failure."""
    for call in calls:
        with pytest.raises(RequestError) as error:
            await call
        assert error.value.is_connection_closed(), error.value
    return (time.monotonic() - since) * 1000


async def assert_closed(connection: Connection) -> None:
    reason = await asyncio.wait_for(connection.closed, 10)
    assert isinstance(reason, str) and reason
    assert connection.is_closed
    # Later sends fail fast.
    with pytest.raises(RequestError) as late:
        await connection.send_request("late", {})
    assert late.value.is_connection_closed(), late.value
    with pytest.raises(RequestError):
        await connection.send_notification("late", {})


@pytest.mark.parametrize("kind", ["response", "update"])
@run_async
async def test_a_peer_killed_mid_write(kind: str) -> None:
    n = 5
    notes: List[Any] = []
    ready = asyncio.Event()

    def on_notification(method: str, params: Any) -> None:
        notes.append((method, params))
        ready.set()

    connection = Connection(
        spawn_stream(sys.executable, "-c", HALF_LINE_PEER, str(n), kind), on_notification=on_notification
    )
    calls = [asyncio.ensure_future(connection.send_request("never/answered", {"i": i})) for i in range(n)]
    await ready.wait()
    # The peer has read all five requests and written half a line after `ready`.
    assert len(notes) == 1 and notes[0][0] == "ready" and len(notes[0][1]["pending"]) == n
    assert not any(call.done() for call in calls)
    assert connection.pid is not None
    killed = time.monotonic()
    os.kill(connection.pid, signal.SIGKILL)
    elapsed = await all_fail_closed(calls, killed)
    print(f"\npeer killed mid-write ({kind}): every pending call failed within {elapsed:.1f} ms")
    await assert_closed(connection)
    # The half line was never delivered as a message.
    assert [method for method, _ in notes] == ["ready"]
    assert wait_gone(connection.pid)


@run_async
async def test_a_peer_killed_mid_burst() -> None:
    n = 5
    received: List[int] = []
    methods: Set[str] = set()
    killed: List[float] = []
    pid: List[int] = []

    def on_notification(method: str, params: Any) -> None:
        methods.add(method)
        received.append(params["i"])
        if len(received) == 20_000:
            # The burst is flowing: kill the peer right here (a task waiting
            # for this might not run before the flood pauses).
            killed.append(time.monotonic())
            os.kill(pid[0], signal.SIGKILL)

    connection = Connection(spawn_stream(sys.executable, "-c", BURST_PEER, str(n)), on_notification=on_notification)
    assert connection.pid is not None
    pid.append(connection.pid)
    calls = [asyncio.ensure_future(connection.send_request("never/answered", {"i": i})) for i in range(n)]
    await asyncio.wait(calls, return_when=asyncio.FIRST_COMPLETED)
    assert len(killed) == 1, "a call ended before the peer was killed"
    elapsed = await all_fail_closed(calls, killed[0])
    print(f"\npeer killed mid-burst: every pending call failed within {elapsed:.1f} ms ({len(received)} received)")
    await assert_closed(connection)
    # What arrived before the kill arrived whole and in order; the line cut
    # by the kill was not delivered.
    assert methods == {"tick"}
    assert len(received) >= 20_000
    assert received == list(range(len(received)))
    assert wait_gone(connection.pid)


@run_async
async def test_a_peer_that_closes_its_stdin_only() -> None:
    # Our next write fails (EPIPE), which closes the connection and fails
    # what is pending; the peer, still running, is killed after the grace
    # period.
    stdin_closed = asyncio.Event()
    connection = Connection(
        spawn_stream(sys.executable, "-c", STDIN_CLOSING_PEER),
        on_notification=lambda method, params: stdin_closed.set(),
    )
    await stdin_closed.wait()
    pid = connection.pid
    assert pid is not None and not gone(pid)
    since = time.monotonic()
    calls = [asyncio.ensure_future(connection.send_request("never/answered", {"i": i})) for i in range(3)]
    elapsed = await all_fail_closed(calls, since)
    print(f"\npeer closed its stdin: every pending call failed within {elapsed:.1f} ms")
    await assert_closed(connection)
    assert wait_gone(pid)


def test_an_interpreter_exits_by_itself_after_its_peer_closed_its_stdin() -> None:
    # A script that never closes its connection: the peer's closed stdin
    # ends it, its calls fail, `closed` resolves, and the interpreter exits.
    script = textwrap.dedent(
        """
        import asyncio, sys
        from acp_engine import Connection, spawn_stream

        async def main():
            stdin_closed = asyncio.Event()
            connection = Connection(spawn_stream(PYTHON, "-c", PEER),
                                    on_notification=lambda method, params: stdin_closed.set())
            print(connection.pid, flush=True)
            await stdin_closed.wait()
            results = await asyncio.gather(
                *(connection.send_request("never/answered", {"i": i}) for i in range(3)), return_exceptions=True)
            for result in results:
                print(type(result).__name__, result.is_connection_closed(), flush=True)
            await connection.closed
            print("closed", flush=True)

        asyncio.run(main())
        """
    ).replace("PYTHON", repr(sys.executable)).replace("PEER", repr(STDIN_CLOSING_PEER))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1:] == ["RequestError True"] * 3 + ["closed"], done.stdout
    assert wait_gone(int(lines[0]))


@run_async
async def test_a_notification_flood_does_not_starve_the_loop() -> None:
    # The peer floods without pause. Other work on the loop (here a task
    # that sleeps 1 ms, twenty times) must get its turns while the flood
    # goes on: between a sleep's start and its end the dispatcher handles
    # at most a slice (a few ms) plus one batch (4,096), not the whole
    # flood (it held the loop for ~700,000 notifications before it yielded).
    received: List[int] = []
    connection = Connection(
        spawn_stream(sys.executable, "-c", BURST_PEER, "0"),
        on_notification=lambda method, params: received.append(params["i"]),
    )
    while len(received) < 10_000:  # the flood is flowing
        await asyncio.sleep(0.001)
    worst = 0
    for _ in range(20):
        before = len(received)
        await asyncio.sleep(0.001)
        worst = max(worst, len(received) - before)
    print(f"\nflood: at most {worst} notifications handled during a 1 ms sleep")
    assert worst < 50_000
    assert received == list(range(len(received)))
    connection.close()
    await connection.closed
    assert connection.pid is not None and wait_gone(connection.pid)
