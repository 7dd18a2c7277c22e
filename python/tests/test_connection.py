"""The generic Connection over real processes and pipes:
validation by the agent side, $/cancel_request both ways, asyncio streams."""

import asyncio
import sys
from typing import Any, List, Optional

import pytest
from conftest import peer, run_async

from acp_engine import Connection, RequestError, asyncio_stream, fd_stream, spawn_stream

AGENT = peer("full_agent.py")


def raw_agent(**kwargs: Any) -> Connection:
    return Connection(spawn_stream(sys.executable, AGENT), **kwargs)


@run_async
async def test_the_agent_side_validates_params() -> None:
    async with raw_agent() as connection:
        with pytest.raises(RequestError) as bad:
            await connection.send_request("session/new", {"cwd": 42})
        assert bad.value.code == -32602
        assert bad.value.data["path"] == "cwd"
        with pytest.raises(RequestError) as unknown:
            await connection.send_request("no/such/method", {})
        assert unknown.value.code == -32601
        # Unknown notifications are dropped; the connection keeps working.
        await connection.send_notification("no/such/notification", {})
        assert (await connection.send_request("initialize", {"protocolVersion": 1}))["protocolVersion"] == 1


@run_async
async def test_outbound_params_are_checked_by_typed_sides_only() -> None:
    async with raw_agent(side="client") as connection:
        with pytest.raises(RequestError) as bad:
            await connection.send_request("session/new", {"cwd": 42})
        assert bad.value.code == -32602
        with pytest.raises(TypeError):
            await connection.send_request("_x", {"not json": object()})
        with pytest.raises(ValueError):
            await connection.send_request("_x", {"nan": float("nan")})


@run_async
async def test_cancel_pending_request_and_send_cancel_request() -> None:
    async with raw_agent() as connection:
        await connection.send_request("initialize", {"protocolVersion": 1})
        session = await connection.send_request("session/new", {"cwd": "/tmp", "mcpServers": []})
        prompt = {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "hang"}]}
        call = asyncio.ensure_future(connection.send_request("session/prompt", prompt))
        # Cancel once the handler runs (see test_typed's cancel test).
        for _ in range(500):
            if (await connection.send_request("_test/notes", {}))["started"]:
                break
            await asyncio.sleep(0.01)
        id = max(connection._pending)  # the id the engine gave the request
        assert connection.cancel_pending_request(id)
        with pytest.raises(RequestError) as cancelled:
            await call
        assert cancelled.value.code == -32800
        assert not connection.cancel_pending_request(id)
        notes = await connection.send_request("_test/notes", {})
        for _ in range(100):
            if notes["cancelled"]:
                break
            await asyncio.sleep(0.02)
            notes = await connection.send_request("_test/notes", {})
        assert notes["cancelled"] == ["prompt"]
        await connection.send_cancel_request_notification(12345)  # unknown id: ignored by the peer
        assert (await connection.send_request("_x/ok", {}))["ext"] == "_x/ok"


def hanging_handler(cancelled: List[str], started: Optional[asyncio.Event] = None) -> Any:
    """A request handler that waits forever; `cancelled` gets the method of each one cancelled."""

    async def on_request(method: str, params: Any) -> Any:
        if started is not None:
            started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(method)
            raise

    return on_request


@run_async
async def test_inbound_cancel_request_cancels_the_handler_task() -> None:
    started = asyncio.Event()
    cancelled: List[str] = []
    on_request = hanging_handler(cancelled, started)

    # Two connections back to back over a socket pair: one side hangs, the
    # other cancels.
    import socket

    a, b = socket.socketpair()
    server = Connection(fd_stream(a.fileno(), a.fileno()), on_request)
    caller = Connection(fd_stream(b.fileno(), b.fileno()))
    a.close()
    b.close()
    call = asyncio.ensure_future(caller.send_request("slow", {}))
    await started.wait()
    call.cancel()
    for _ in range(100):
        if cancelled:
            break
        await asyncio.sleep(0.01)
    assert cancelled == ["slow"]
    await caller.aclose()
    await server.closed


@run_async
async def test_asyncio_streams() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, AGENT, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None and process.stdin is not None
    received: List[Any] = []
    connection = Connection(
        asyncio_stream(process.stdout, process.stdin),  # type: ignore[arg-type]
        on_notification=lambda method, params: received.append(params) or None,
        side="client",
    )
    await connection.send_request("initialize", {"protocolVersion": 1})
    await connection.send_request("session/new", {"cwd": "/tmp", "mcpServers": []})
    turn = await connection.send_request(
        "session/prompt", {"sessionId": "s-1", "prompt": [{"type": "text", "text": "burst 300"}]}
    )
    assert turn["stopReason"] == "end_turn"
    assert [p["update"]["content"]["text"] for p in received] == [str(i) for i in range(300)]
    await connection.aclose()
    assert await asyncio.wait_for(process.wait(), 10) == 0


@run_async
async def test_a_notification_handler_may_await_its_own_request() -> None:
    """Notifications run one at a time, in order, and a response waits for the
    notifications before it; a notification handler that awaits a request of
    its own still gets that answer (it used to wait forever), while the
    answer to an earlier request and the next notification wait for it."""
    import socket

    a, b = socket.socketpair()
    order: List[str] = []
    release = asyncio.Event()

    async def peer_request(method: str, params: Any) -> Any:
        if method == "outer":
            # Answer only after a notification and once `nested` was answered.
            await peer.send_notification("note", {"n": 1})
            await release.wait()
            return {"answer": "outer"}
        release.set()
        await peer.send_notification("note", {"n": 2})
        return {"answer": method}

    async def on_notification(method: str, params: Any) -> None:
        order.append(f"note {params['n']} starts")
        if params["n"] == 1:
            nested = await ours.send_request("nested", {})
            order.append(f"note 1 got {nested['answer']}")

    peer = Connection(fd_stream(a.fileno(), a.fileno()), peer_request)
    ours = Connection(fd_stream(b.fileno(), b.fileno()), on_notification=on_notification)
    a.close()
    b.close()
    outer = await asyncio.wait_for(ours.send_request("outer", {}), 10)
    order.append(f"outer got {outer['answer']}")
    assert order == ["note 1 starts", "note 1 got nested", "note 2 starts", "outer got outer"]
    await ours.aclose()
    await peer.aclose()


@run_async
async def test_a_notification_handler_may_return_any_awaitable() -> None:
    """A handler that returns a Future rather than a coroutine is awaited
    the same way: the next notification waits until it is done."""
    import socket

    a, b = socket.socketpair()
    order: List[str] = []
    loop = asyncio.get_running_loop()
    first = loop.create_future()

    def finish_first() -> None:
        order.append("note 1 done")
        first.set_result(None)

    def on_notification(method: str, params: Any) -> Any:
        order.append(f"note {params['n']} starts")
        if params["n"] == 1:
            loop.call_later(0.05, finish_first)
            return first
        return None

    peer = Connection(fd_stream(a.fileno(), a.fileno()))
    ours = Connection(fd_stream(b.fileno(), b.fileno()), on_notification=on_notification)
    a.close()
    b.close()
    await peer.send_notification("note", {"n": 1})
    await peer.send_notification("note", {"n": 2})
    for _ in range(500):
        if len(order) == 3:
            break
        await asyncio.sleep(0.01)
    assert order == ["note 1 starts", "note 1 done", "note 2 starts"]
    await ours.aclose()
    await peer.aclose()


@run_async
async def test_a_request_cancelled_in_the_same_read_never_reaches_its_handler() -> None:
    # The request and its $/cancel_request arrive in one write: the engine
    # withdraws the request before the dispatcher takes it, and answers -32800
    # itself (the official SDK never starts such a handler either).
    import socket

    cancelled: List[str] = []
    started = asyncio.Event()
    a, b = socket.socketpair()
    server = Connection(fd_stream(a.fileno(), a.fileno()), hanging_handler(cancelled, started))
    a.close()
    request = b'{"jsonrpc":"2.0","id":1,"method":"slow","params":{}}\n'
    cancel = b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}\n'
    b.sendall(request + cancel)
    answer = await asyncio.get_running_loop().run_in_executor(None, b.recv, 4096)
    assert b'"code":-32800' in answer, answer
    await asyncio.sleep(0.05)
    assert not started.is_set()
    assert cancelled == []
    b.close()
    await server.closed


@run_async
async def test_a_request_cancelled_after_the_dispatcher_took_it_in_a_batch_still_cancels_its_handler() -> None:
    # The request is cut into an earlier chunk of events than its
    # cancellation (63 notifications before it, one after), so the engine
    # cannot withdraw it: the dispatcher starts the handler and cancels it in
    # one turn, and the handler must still see its cancellation (it waited
    # forever once).
    import socket

    cancelled: List[str] = []
    a, b = socket.socketpair()
    server = Connection(fd_stream(a.fileno(), a.fileno()), hanging_handler(cancelled))
    a.close()
    notification = b'{"jsonrpc":"2.0","method":"n","params":{}}\n'
    request = b'{"jsonrpc":"2.0","id":1,"method":"slow","params":{}}\n'
    cancel = b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}\n'
    b.sendall(notification * 63 + request + notification + cancel)
    for _ in range(200):
        if cancelled:
            break
        await asyncio.sleep(0.01)
    assert cancelled == ["slow"]
    answer = await asyncio.get_running_loop().run_in_executor(None, b.recv, 4096)
    assert b'"code":-32800' in answer, answer
    b.close()
    await server.closed


@run_async
async def test_a_cancelled_handler_answers_what_it_returns() -> None:
    """On the peer's $/cancel_request the handler's task is cancelled and
    the answer is what it then returns (as in the official SDK): a result
    when it catches the cancellation, -32800 when it ends with it."""
    import socket

    started = asyncio.Event()

    async def on_request(method: str, params: Any) -> Any:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            if method == "partial":
                return {"stopReason": "cancelled"}
            raise
        return None

    a, b = socket.socketpair()
    server = Connection(fd_stream(a.fileno(), a.fileno()), on_request)
    a.close()
    loop = asyncio.get_running_loop()
    for id, method in ((1, "partial"), (2, "gives_up")):
        started.clear()
        b.sendall(b'{"jsonrpc":"2.0","id":%d,"method":"%s","params":{}}\n' % (id, method.encode()))
        await asyncio.wait_for(started.wait(), 10)
        b.sendall(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":%d}}\n' % id)
        answer = await loop.run_in_executor(None, b.recv, 4096)
        if method == "partial":
            assert answer == b'{"jsonrpc":"2.0","id":1,"result":{"stopReason":"cancelled"}}\n', answer
        else:
            assert b'"id":2,"error":{"code":-32800' in answer, answer
    b.close()
    await server.closed


@run_async
async def test_a_handler_that_cancels_itself_still_answers() -> None:
    """A request whose handler ends in a CancelledError of its own (not the
    peer's $/cancel_request, not a close) is answered -32800, not dropped."""
    import socket

    async def on_request(method: str, params: Any) -> Any:
        inner = asyncio.ensure_future(asyncio.Event().wait())
        inner.cancel()
        return await inner

    a, b = socket.socketpair()
    server = Connection(fd_stream(a.fileno(), a.fileno()), on_request)
    caller = Connection(fd_stream(b.fileno(), b.fileno()))
    a.close()
    b.close()
    with pytest.raises(RequestError) as cancelled:
        await asyncio.wait_for(caller.send_request("x", {}), 10)
    assert cancelled.value.code == -32800
    await caller.aclose()
    await server.aclose()


@run_async
async def test_params_and_results_as_json_bytes() -> None:
    """``bytes`` holding one JSON value go out as they are (a serializer's
    output needs no second pass through Python objects), as params and as a
    handler's result; bytes that are not one JSON value are refused before
    anything is sent, and the connection goes on."""
    import socket

    a, b = socket.socketpair()

    async def peer_request(method: str, params: Any) -> Any:
        if params == {"n": "not JSON"}:
            return b'{"echo": '
        if params == {"n": "pretty"}:
            return b' {\n  "echo": "pretty"\n}\n'
        return b'{"echo":' + (b"null" if params is None else str(params["n"]).encode()) + b"}"

    peer = Connection(fd_stream(a.fileno(), a.fileno()), peer_request)
    ours = Connection(fd_stream(b.fileno(), b.fileno()))
    a.close()
    b.close()
    assert await asyncio.wait_for(ours.send_request("echo", b'{"n": 7}'), 10) == {"echo": 7}
    for bad in (b'{"n": ', b"1 2", b"\xff"):
        with pytest.raises(ValueError):
            await ours.send_request("echo", bad)
    assert await asyncio.wait_for(ours.send_request("echo", b'{"n":8}'), 10) == {"echo": 8}
    # A result's bytes: pretty-printed JSON goes out on one line; bytes that
    # are not JSON are answered -32603, and the connection goes on.
    assert await asyncio.wait_for(ours.send_request("echo", {"n": "pretty"}), 10) == {"echo": "pretty"}
    with pytest.raises(RequestError) as refused:
        await asyncio.wait_for(ours.send_request("echo", {"n": "not JSON"}), 10)
    assert refused.value.code == -32603
    assert await asyncio.wait_for(ours.send_request("echo", b'{"n":9}'), 10) == {"echo": 9}
    await ours.aclose()
    await peer.aclose()
