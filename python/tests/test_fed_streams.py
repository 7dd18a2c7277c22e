"""A caller's asyncio streams (``asyncio_stream``): the connection is fed
what the reader gives and hands the writer what the engine writes, on the
loop's thread (the engine's ``Transport::fed``), in memory here: two
connections wired back to back, a reader the test fills, a writer that
fails."""

import asyncio
import json
from typing import Any, List

import pytest
from conftest import run_async

from acp_engine import Connection, Limits, RequestError, asyncio_stream


class MemoryWriter:
    """An asyncio StreamWriter's calls the stream makes, into a reader."""

    def __init__(self, into: asyncio.StreamReader) -> None:
        self.into = into

    def write(self, data: bytes) -> None:
        self.into.feed_data(data)

    async def drain(self) -> None:
        await asyncio.sleep(0)

    def close(self) -> None:
        self.into.feed_eof()


class FailingWriter:
    """A peer that went away: every write fails."""

    def __init__(self, transport: Any = None) -> None:
        self.writes = 0
        if transport is not None:
            self.transport = transport

    def write(self, data: bytes) -> None:
        self.writes += 1
        raise ConnectionResetError("the peer went away")

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass


def wired(on_request: Any) -> "tuple[Connection, Connection]":
    """Two connections, each reading what the other writes."""
    to_a, to_b = asyncio.StreamReader(), asyncio.StreamReader()
    a = Connection(asyncio_stream(to_a, MemoryWriter(to_b)))  # type: ignore[arg-type]
    b = Connection(asyncio_stream(to_b, MemoryWriter(to_a)), on_request=on_request)  # type: ignore[arg-type]
    return a, b


@run_async
async def test_two_connections_on_memory_streams_answer_each_other() -> None:
    async def echo(method: str, params: Any) -> Any:
        return {"method": method, "n": params["n"], "text": params["text"]}

    a, b = wired(echo)
    # Many at once, and one larger than any chunk the streams move.
    big = "x" * (1024 * 1024)
    answers = await asyncio.gather(
        *(a.send_request("echo", {"n": n, "text": big if n == 7 else "t"}) for n in range(2000))
    )
    assert [answer["n"] for answer in answers] == list(range(2000))
    assert answers[7]["text"] == big
    await a.aclose()
    # b's input ended with a's output: it closes too.
    assert await asyncio.wait_for(b.closed, 10)


@run_async
async def test_the_end_of_the_input_fails_what_is_pending() -> None:
    reader = asyncio.StreamReader()
    sink = asyncio.StreamReader()
    connection = Connection(asyncio_stream(reader, MemoryWriter(sink)))  # type: ignore[arg-type]
    pending = asyncio.ensure_future(connection.send_request("never/answered", {}))
    line = await asyncio.wait_for(sink.readline(), 10)
    assert json.loads(line)["method"] == "never/answered"
    reader.feed_eof()
    with pytest.raises(RequestError) as closed:
        await asyncio.wait_for(pending, 10)
    assert closed.value.code == -32099
    await asyncio.wait_for(connection.closed, 10)


class IdleTransport:
    """A writer's transport that holds nothing: the stream writes to it as
    output comes, without waiting for the writer."""

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0


@pytest.mark.parametrize("transport", [None, IdleTransport()], ids=["drained", "written-at-once"])
@run_async
async def test_a_peer_that_takes_no_output_closes_the_connection(transport: Any) -> None:
    """The writer fails: the connection closes and what is pending fails,
    rather than its output waiting for a taker forever."""
    writer = FailingWriter(transport)
    connection = Connection(asyncio_stream(asyncio.StreamReader(), writer))  # type: ignore[arg-type]
    with pytest.raises(RequestError) as closed:
        await asyncio.wait_for(connection.send_request("anything", {}), 10)
    assert closed.value.code == -32099
    assert writer.writes >= 1
    await asyncio.wait_for(connection.closed, 10)


@run_async
async def test_input_waits_in_the_reader_while_the_engine_holds_reading() -> None:
    """With one request in flight at most and its handler busy, the stream
    stops taking the reader's bytes: the input stays bounded, then all of it
    is answered once the handler goes on."""
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    sink = asyncio.StreamReader(limit=64 * 1024 * 1024)
    requests = 30_000
    for n in range(requests):
        request = {"jsonrpc": "2.0", "id": n, "method": "work", "params": {"pad": "p" * 100}}
        reader.feed_data(json.dumps(request).encode() + b"\n")
    total = len(reader._buffer)  # type: ignore[attr-defined]
    release = asyncio.Event()
    started: List[int] = []

    async def work(method: str, params: Any) -> Any:
        started.append(1)
        await release.wait()
        return {}

    connection = Connection(
        asyncio_stream(reader, MemoryWriter(sink)),  # type: ignore[arg-type]
        on_request=work,
        limits=Limits(max_in_flight_requests=1),
    )
    for _ in range(50):
        await asyncio.sleep(0.01)
    # The engine stops reading at the limit; what it had read already is
    # handed out (one read's worth).
    assert 1 <= len(started) < requests // 10
    taken = total - len(reader._buffer)  # type: ignore[attr-defined]
    # At most two of the stream's reads (64 KiB each): one the engine read,
    # one fed and waiting for it (a socket pair in between held twice that).
    assert taken <= 2 * 65536, f"{taken} of {total} bytes taken from the reader while reading was held"
    release.set()
    answered = 0
    while answered < requests:
        line = await asyncio.wait_for(sink.readline(), 30)
        assert "result" in json.loads(line)
        answered += 1
    assert len(started) == requests
    await connection.aclose()
