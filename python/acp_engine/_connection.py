"""Connection: a JSON-RPC 2.0 peer on the Rust engine, driven by
an asyncio loop.

The engine queues inbound traffic and makes an eventfd readable once per
burst; one long-lived dispatcher task drains the burst (in chunks: lists
of events the engine builds in one call each), awaits notification
handlers inline and in order, resolves the futures of our requests in the
same order, and starts one task per inbound request (requests run
concurrently). Outbound messages
are serialized in Rust on this thread and queued for the engine's writer:
no thread hop, and the GIL is never held while the engine waits on I/O.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import weakref
from enum import Enum
from types import CoroutineType, MappingProxyType
from typing import (
    Any,
    Awaitable,
    Callable,
    Coroutine,
    Dict,
    Generator,
    Generic,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    TypeVar,
)

from . import _native
from ._errors import CONNECTION_CLOSED, RequestError
from ._tables import Messages
from ._limits import Limits
from ._transport import Stream

logger = logging.getLogger("acp_engine")

#: ``on_request(method, params)``: return the result or raise RequestError.
RequestHandler = Callable[[str, Any], Awaitable[Any]]
#: ``on_notification(method, params)``: called one at a time, in order.
NotificationHandler = Callable[[str, Any], Optional[Awaitable[None]]]
#: ``on_invalid_notification(method, error)``: a notification from the peer
#: whose params fail the schema was dropped; ``error`` is the -32602 that
#: says what failed.
InvalidNotificationHandler = Callable[[str, "RequestError"], None]
#: ``observer(inbound, line)``: every message read from the peer (``inbound``
#: True, before it is handled) or written to it, as the text of its line.
Observer = Callable[[bool, str], None]


def _log_notification_failure(method: str) -> None:
    logger.exception("notification handler for %s failed", method)


def _warn_invalid_notification(method: str, error: RequestError) -> None:
    logger.warning("dropped a %s notification that fails the schema: %s", method, error.data or error.message)


#: How long the dispatcher polls for input before it sleeps, when the loop
#: has nothing else to do (see `_dispatch`).
SPIN_US = int(os.environ.get("ACP_ENGINE_SPIN_US", "50"))
# The longest the dispatcher runs inbound messages without letting the loop's
# other work run (a peer flooding notifications would otherwise hold it).
FAIR_SLICE_S = 0.005

# Event kinds, from the engine.
_REQUEST = _native.EVENT_REQUEST
_NOTIFICATION = _native.EVENT_NOTIFICATION
_RESULT = _native.EVENT_RESULT
_ERROR = _native.EVENT_ERROR
_CANCELLED = _native.EVENT_CANCELLED
_WRITTEN = _native.EVENT_WRITTEN
_CLOSED = _native.EVENT_CLOSED
_INVALID_NOTIFICATION = _native.EVENT_INVALID_NOTIFICATION
_OBSERVED = _native.EVENT_OBSERVED

# Connections still open, closed at interpreter exit (so a spawned agent is
# reaped and no engine work is left behind).
_open_connections: "weakref.WeakSet[_native.NativeConnection]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for native in list(_open_connections):
        native.close()


async def _method_not_found(method: str, params: Any) -> Any:
    raise RequestError.method_not_found(method)


T = TypeVar("T")


class Side(str, Enum):
    """Which side of ACP a connection plays: the engine checks what it
    receives and sends against that side's methods (``RAW``: no checks)."""

    RAW = "raw"
    AGENT = "agent"
    CLIENT = "client"


def _go_on(coroutine: Coroutine[Any, Any, T], waiting_on: Any) -> Generator[Any, Any, T]:
    """Drive a coroutine whose first step already ran (it yielded
    ``waiting_on``) to its end and return its result: what the driving Task
    sends or throws in goes to the coroutine, what the coroutine yields goes
    to the Task."""
    try:
        while True:
            try:
                sent = yield waiting_on
            except GeneratorExit:
                coroutine.close()
                raise
            except BaseException as error:  # cancellation, thrown in by the Task
                waiting_on = coroutine.throw(error)
            else:
                waiting_on = coroutine.send(sent)
    except StopIteration as done:
        result: T = done.value
        return result


class _Resume(Generic[T]):
    """``await _Resume(coroutine, waiting_on)`` goes on with a started coroutine."""

    __slots__ = ("coroutine", "waiting_on")

    def __init__(self, coroutine: Coroutine[Any, Any, T], waiting_on: Any) -> None:
        self.coroutine = coroutine
        self.waiting_on = waiting_on

    def __await__(self) -> Generator[Any, Any, T]:
        return _go_on(self.coroutine, self.waiting_on)


def _as_coroutine(awaitable: Awaitable[T]) -> Coroutine[Any, Any, T]:
    """A handler's awaitable as a coroutine (one of its own, or one awaiting it)."""
    if asyncio.iscoroutine(awaitable):
        return awaitable
    return _wrap(awaitable)


async def _wrap(awaitable: Awaitable[T]) -> T:
    return await awaitable


def _cancel_after_first_step(loop: asyncio.AbstractEventLoop, task: "asyncio.Task[None]") -> None:
    """Cancel a handler's Task once it has taken its first step. A Task
    cancelled before it ever ran never resumes the handler it carries (the
    cancellation lands before ``_go_on_as_task`` starts): the handler would
    wait forever and its cleanup never run. Its first step is already
    scheduled, so this cancellation, scheduled after it, comes after it."""
    loop.call_soon(task.cancel)


async def _go_on_as_task(
    coroutine: Coroutine[Any, Any, None], waiting_on: Any, token: int, running: Dict[int, Any]
) -> None:
    try:
        await _Resume(coroutine, waiting_on)
    finally:
        running.pop(token, None)


class Connection:
    """A bidirectional JSON-RPC connection. Must be created inside a running
    asyncio loop; usable as ``async with``. Requests from the peer go to
    ``on_request`` (concurrently, one task each; an exception other than
    RequestError answers -32603), notifications to ``on_notification`` (one
    at a time, in arrival order). With ``side`` :attr:`Side.AGENT` or
    :attr:`Side.CLIENT` the engine checks ACP messages both ways
    (``unstable``: the unstable protocol's methods too; ``protocol_versions``:
    the ACP versions it speaks, ``(1,)`` by default, ``(1, 2)`` to serve or
    ask for the version 2 draft too, negotiated at ``initialize``: see
    :attr:`protocol_version`). ``unchecked_methods``:
    methods outside the schema it sends and receives as they are, unchecked
    (the legacy ``session/set_model``, methods of a newer schema).
    ``on_invalid_notification(method, error)`` hears of every notification
    from the peer that fails the schema and was dropped (by default a
    warning on the ``acp_engine`` logger). ``observer(inbound, line)`` sees
    every message read or written, as its line (for logging and tracing)."""

    def __init__(
        self,
        stream: Stream,
        on_request: Optional[RequestHandler] = None,
        on_notification: Optional[NotificationHandler] = None,
        *,
        side: "Side" = Side.RAW,
        max_message_size: Optional[int] = None,
        limits: Optional[Limits] = None,
        unstable: bool = False,
        protocol_versions: Sequence[int] = (1,),
        unchecked_methods: Sequence[str] = (),
        on_invalid_notification: Optional[InvalidNotificationHandler] = None,
        observer: Optional[Observer] = None,
        _routes: Optional[Mapping[str, Callable[[Any], Optional[Awaitable[None]]]]] = None,
        _notification_failed: Optional[Callable[[str], None]] = None,
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._on_request: RequestHandler = on_request or _method_not_found
        self._on_notification = on_notification
        self._on_invalid_notification = on_invalid_notification or _warn_invalid_notification
        self._observer = observer
        # The typed connections' notification handlers by method, called
        # with the params alone: one Python call per notification, not two.
        self._routes = _routes or {}
        # Logs a notification handler's exception (called in its except block):
        # the compat layer logs it as the official SDK does.
        self._notification_failed = _notification_failed or _log_notification_failure
        settings = {
            "side": Side(side).value,
            "max_message_size": max_message_size,
            "unstable": unstable,
            "protocol_versions": list(protocol_versions),
            "unchecked_methods": list(unchecked_methods),
            "observe": observer is not None,
        }
        if limits is not None:
            settings.update(limits._settings())
        self._native = stream._open(settings)
        _open_connections.add(self._native)
        self._pending: Dict[int, "asyncio.Future[Any]"] = {}
        self._tickets: Dict[int, "asyncio.Future[bool]"] = {}
        self._running: Dict[int, "asyncio.Task[None]"] = {}
        self._closed: "asyncio.Future[str]" = self._loop.create_future()
        self._close_reason: Optional[str] = None
        self._waiter: "Optional[asyncio.Future[None]]" = None
        # Events taken from the engine while a notification handler waited,
        # handled once it is done (see `_run_notification`).
        self._backlog: List[List[Any]] = []
        # The id of the last request sent (ids count from 0; -1: none yet).
        self._last_request_id = -1
        # Whether the connection is being torn down.
        self._finishing = False
        self._input_fd: Optional[int] = None
        # The stream's bytes are fed by Python (`FedStream`): pumped on this
        # thread like a watched fd, until the input ended.
        self._fed = self._native.is_fed()
        self._fed_input = self._fed
        # Output the engine wrote may be waiting for the stream to pass on.
        self._on_output = stream._on_output
        self._turn_started = 0.0
        self._flush_due = False
        self._flush_handle: Optional[asyncio.Handle] = None
        self._sent: "asyncio.Future[None]" = self._loop.create_future()
        self._sent.set_result(None)
        # The stream's wait for the input fed so far to be handled (`_input_handled`).
        self._handled: "Optional[asyncio.Future[None]]" = None
        self._stream_finished = stream._after_open(self._loop, self._input_handled, self._on_input)
        self._dispatcher = self._loop.create_task(self._dispatch())

    # -- calls to the peer -------------------------------------------------

    async def send_request(self, method: str, params: Any = None) -> Any:
        """Send a request and return its result; raises RequestError. If the
        awaiting task is cancelled, the peer gets ``$/cancel_request``.
        ``params``: a JSON value, or ``bytes`` holding one (sent as they are,
        e.g. a serializer's output; ValueError if they are not one value)."""
        try:
            id, _ticket = self._native.send_request(method, params)
        except _native.EngineError as error:
            raise RequestError._from_native(error) from None
        self._last_request_id = id
        if not self._flush_due:
            self._schedule_flush()
        # A parked send needs no wait here: its response cannot come first.
        future: "asyncio.Future[Any]" = self._loop.create_future()
        self._pending[id] = future
        try:
            return await future
        except asyncio.CancelledError:
            if self._pending.pop(id, None) is not None:
                self._native.cancel_pending_request(id)
                self._schedule_flush()
            raise

    def send_notification(self, method: str, params: Any = None) -> Awaitable[None]:
        """Send a notification; await the result: it completes once the
        message is queued for writing (at once unless the peer is not
        reading: that is the backpressure)."""
        try:
            ticket = self._native.send_notification(method, params)
        except _native.EngineError as error:
            raise RequestError._from_native(error) from None
        if not self._flush_due:
            self._schedule_flush()
        if ticket is None:
            # Already written or queued: a completed future (no coroutine
            # per message on the hot path).
            return self._sent
        return self._queued(ticket)

    async def send_cancel_request_notification(self, request_id: Any) -> None:
        """Send ``$/cancel_request`` for ``request_id`` (nothing else)."""
        try:
            ticket = self._native.send_cancel_request_notification(request_id)
        except _native.EngineError as error:
            raise RequestError._from_native(error) from None
        self._schedule_flush()
        if ticket is not None:
            await self._queued(ticket)

    def cancel_pending_request(self, request_id: int) -> bool:
        """Cancel our request ``request_id`` if still pending: its caller
        gets RequestError -32800, the peer ``$/cancel_request``, and a late
        response is dropped."""
        cancelled = self._native.cancel_pending_request(request_id)
        self._schedule_flush()
        return cancelled

    def _schedule_flush(self) -> None:
        """Sends are collected in the engine and written together once
        this loop turn's callbacks ran: one write per burst."""
        if not self._flush_due:
            self._flush_due = True
            self._flush_handle = self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        if not self._flush_due:
            return  # flushed early by the dispatcher
        self._flush_due = False
        try:
            ticket = self._native.flush()
        except _native.EngineError:
            return  # closed: the calls fail on their own
        if self._fed:
            self._on_output()  # what was just written, passed on at once
        if ticket is not None:
            # The write queue was full: later sends wait behind this batch
            # in the engine, so order holds; nothing to await here.
            pass
        waiter = self._waiter
        if (
            self._input_fd is None
            and not self._fed
            and self._pending
            and waiter is not None
            and not waiter.done()
            and self._idle()
        ):
            # The engine reads (a remote connection), an answer is due and
            # nothing else is to run: wait for it a moment rather than sleep
            # and be woken for it (the engine's wake-up is held off meanwhile).
            if self._native.pump_for(SPIN_US):
                waiter.set_result(None)

    async def _queued(self, ticket: int) -> None:
        future: "asyncio.Future[bool]" = self._loop.create_future()
        self._tickets[ticket] = future
        if not await future:
            raise self._closed_error()

    # -- lifecycle ---------------------------------------------------------

    @property
    def closed(self) -> "asyncio.Future[str]":
        """Resolves (to the reason) once the connection is closed and torn
        down: every pending call failed, a spawned agent reaped."""
        return self._closed

    @property
    def is_closed(self) -> bool:
        return self._native.is_closed

    @property
    def close_reason(self) -> Optional[str]:
        return self._close_reason or self._native.close_reason

    @property
    def protocol_version(self) -> int:
        """The ACP version the connection speaks now: the lowest of
        ``protocol_versions`` until ``initialize`` selects one (an agent's
        ``initialize`` handler already sees the selected version; a client,
        once the answer arrived)."""
        return int(self._native.protocol_version)

    @property
    def pending_requests(self) -> Mapping[int, "asyncio.Future[Any]"]:
        """Our requests awaiting an answer, by id (a read-only view)."""
        return MappingProxyType(self._pending)

    @property
    def pid(self) -> Optional[int]:
        """The spawned agent's process id (connections made by spawning)."""
        return self._native.pid

    def close(self) -> None:
        """Start closing: pending calls fail, running handlers are
        cancelled, queued output is flushed. Await ``closed`` to finish."""
        self._native.close()

    async def aclose(self) -> None:
        """Close and wait until torn down."""
        self.close()
        await asyncio.shield(self._closed)

    async def __aenter__(self) -> "Connection":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _closed_error(self) -> RequestError:
        return RequestError(CONNECTION_CLOSED, Messages.CONNECTION_CLOSED, {"reason": self.close_reason or "closed"})

    # -- the dispatcher ----------------------------------------------------

    def _on_wake(self) -> None:
        # The fd stays registered for the connection's life; resetting it
        # here keeps a busy dispatcher from being called back in a loop.
        self._native.reset_wake()
        if self._fed:
            self._on_output()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _idle(self) -> bool:
        """True if the loop has nothing to run but a spent flush callback
        (CPython's loops keep their ready queue in `_ready`; on others we
        cannot tell, and never spin)."""
        ready = getattr(self._loop, "_ready", None)
        if ready is None:
            return False
        return not ready or (len(ready) == 1 and ready[0] is self._flush_handle)

    def _input_handled(self) -> "asyncio.Future[None]":
        """Completes once the dispatcher has taken every event of the input
        its stream fed the engine so far and would wait for more: each one
        handled, or set aside behind a notification handler that is still
        running. Or once the connection ended. (One stream, one waiter.)"""
        handled: "asyncio.Future[None]" = self._loop.create_future()
        if self._finishing:
            handled.set_result(None)
        else:
            self._handled = handled
        return handled

    def _settle_handled(self) -> None:
        handled = self._handled
        if handled is not None:
            self._handled = None
            if not handled.done():
                handled.set_result(None)

    def _on_input(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _next_events(self, until: "Optional[asyncio.Future[Any]]" = None) -> Optional[List[List[Any]]]:
        """The next chunk of events: the backlog first, then the engine's,
        waiting for input if there is none. With ``until``: None once that
        completes (a notification handler being waited for, whose end wakes
        the waiter)."""
        if self._backlog:
            backlog = self._backlog
            self._backlog = []
            return backlog
        native = self._native
        loop = self._loop
        while until is None or not until.done():
            if loop.time() - self._turn_started > FAIR_SLICE_S:
                # A peer that never pauses must not starve the loop's
                # other tasks, timers and connections: give them a turn.
                await asyncio.sleep(0)
                self._turn_started = loop.time()
            events = native.drain()
            if events is None and (self._input_fd is not None or self._fed_input):
                if self._flush_due:
                    self._flush()  # what we answered goes out first
                if not native.pump():
                    self._input_fd = None
                    self._fed_input = False
                elif self._input_fd is not None and self._idle():
                    # Nothing else to run: wait for the peer's answer
                    # a moment without sleeping (waking a sleeping
                    # thread costs more than most answers take here).
                    native.pump_for(SPIN_US)
                events = native.drain()
            elif events is None and self._pending and not self._fed and self._idle():
                # The engine reads (a remote connection) and an answer is
                # due: wait for events a moment likewise, the engine's
                # wake-up held off meanwhile.
                if self._flush_due:
                    self._flush()
                if native.pump_for(SPIN_US):
                    events = native.drain()
            if events is not None:
                return events
            # Everything read so far was handled, or waits in the backlog
            # behind a notification handler (which may be waiting for what
            # the stream gives next): a stream waiting for that goes on.
            if self._handled is not None:
                self._settle_handled()
            self._waiter = waiter = loop.create_future()
            if self._input_fd is not None and native.is_closed:
                # The reader let the stream's fd go (its end came within
                # the spin above, or a close): watching it would fail.
                self._input_fd = None
            # At its limits the engine reads nothing until the peer
            # reads: the wake fd says when to pump again.
            input_fd = self._input_fd
            if input_fd is not None and not native.reading_paused():
                loop.add_reader(input_fd, self._on_input)
                try:
                    await waiter
                finally:
                    loop.remove_reader(input_fd)
            else:
                await waiter
            self._waiter = None
            self._turn_started = loop.time()
        return None

    async def _dispatch(self) -> None:
        native = self._native
        loop = self._loop
        pending = self._pending
        routes = self._routes
        fd = native.fileno()
        loop.add_reader(fd, self._on_wake)
        # The stream itself, when this thread reads it: watched only while
        # the dispatcher waits, so input waits in the pipe (backpressure)
        # while handlers are busy.
        self._input_fd = native.read_fd()
        self._turn_started = loop.time()
        try:
            while True:
                events = await self._next_events()
                assert events is not None
                for event in events:
                    kind = event[0]
                    if kind == _NOTIFICATION:
                        try:
                            route = routes.get(event[1])
                            if route is not None:
                                awaitable = route(event[2])
                            elif self._on_notification is not None:
                                awaitable = self._on_notification(event[1], event[2])
                            else:
                                continue
                            if awaitable is not None:
                                if type(awaitable) is not CoroutineType:
                                    awaitable = _as_coroutine(awaitable)
                                # The handler's first step runs right here: most
                                # end without waiting, and then cost no
                                # coroutine of ours.
                                started_after = self._last_request_id
                                try:
                                    waiting_on = awaitable.send(None)
                                except StopIteration:
                                    continue
                                await self._run_notification(awaitable, waiting_on, started_after)
                        except Exception:
                            self._notification_failed(event[1])
                    elif kind == _RESULT:
                        future = pending.pop(event[1], None)
                        if future is not None and not future.done():
                            future.set_result(event[2])
                    elif kind == _REQUEST:
                        self._start_request(event[1], event[2], event[3])
                    elif kind == _ERROR:
                        future = pending.pop(event[1], None)
                        if future is not None and not future.done():
                            future.set_exception(RequestError._from_object(event[2]))
                    elif kind == _CANCELLED:
                        task = self._running.get(event[1])
                        if task is not None:
                            _cancel_after_first_step(self._loop, task)
                    elif kind == _WRITTEN:
                        ticket = self._tickets.pop(event[1], None)
                        if ticket is not None and not ticket.done():
                            ticket.set_result(event[2])
                    elif kind == _CLOSED:
                        self._close_reason = event[1]
                        return
                    elif kind == _INVALID_NOTIFICATION:
                        try:
                            self._on_invalid_notification(event[1], RequestError._from_object(event[2]))
                        except Exception:
                            logger.exception("on_invalid_notification for %s failed", event[1])
                    elif kind == _OBSERVED:
                        self._observe(event[1], event[2])
        finally:
            # Normal end, or the loop is shutting down (task cancelled).
            loop.remove_reader(fd)
            native.close()
            await self._finish()

    async def _run_notification(self, handler: Coroutine[Any, Any, None], waiting_on: Any, started_after: int) -> None:
        """Run a notification handler, whose first step waits on ``waiting_on``,
        to its end before the next message. One that waits on a request it
        sent itself (after request ``started_after``) is not starved: while it
        waits, answers to requests sent since it started are delivered (and
        the peer's requests start, write tickets and cancellations go on);
        other answers and notifications wait in the backlog, in order."""
        task = self._loop.create_task(_go_on_as_task(handler, waiting_on, -1, {}))
        task.add_done_callback(lambda _: self._on_input())  # wakes `_next_events`
        held: List[List[Any]] = []
        try:
            while not task.done():
                events = await self._next_events(until=task)
                if events is None:
                    break
                for event in events:
                    kind = event[0]
                    if kind in (_RESULT, _ERROR):
                        if event[1] <= started_after:
                            held.append(event)  # its continuation runs after this handler
                            continue
                        future = self._pending.pop(event[1], None)
                        if future is not None and not future.done():
                            if kind == _RESULT:
                                future.set_result(event[2])
                            else:
                                future.set_exception(RequestError._from_object(event[2]))
                    elif kind == _REQUEST:
                        # Requests run concurrently anyway; the peer may wait on
                        # one before it answers ours.
                        self._start_request(event[1], event[2], event[3])
                    elif kind == _WRITTEN:
                        ticket = self._tickets.pop(event[1], None)
                        if ticket is not None and not ticket.done():
                            ticket.set_result(event[2])
                    elif kind == _CANCELLED:
                        running = self._running.get(event[1])
                        if running is not None:
                            _cancel_after_first_step(self._loop, running)
                    else:  # notifications wait their turn; a close ends the handler
                        held.append(event)
                        if kind == _CLOSED:
                            task.cancel()
        finally:
            self._backlog = held + self._backlog
            if not task.done():  # the dispatcher itself was cancelled
                task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise

    def set_observer(self, observer: Optional[Observer]) -> None:
        """See every message read or written from now on as ``observer(inbound,
        line)`` (None: stop)."""
        self._observer = observer
        self._native.set_observe(observer is not None)

    def _observe(self, inbound: bool, line: str) -> None:
        if self._observer is not None:
            try:
                self._observer(inbound, line)
            except Exception:
                logger.exception("the connection's observer failed")

    def _start_request(self, token: int, method: str, params: Any) -> None:
        # Run the handler's first step right here: most answer without
        # waiting, and then no Task is needed (the eager start of Python
        # 3.12's tasks, for every version). One that waits goes on as a Task.
        serve = self._serve(token, method, params)
        try:
            waiting_on = serve.send(None)
        except StopIteration:
            return
        self._running[token] = self._loop.create_task(_go_on_as_task(serve, waiting_on, token, self._running))

    async def _serve(self, token: int, method: str, params: Any) -> None:
        native = self._native
        try:
            result = await self._on_request(method, params)
        except asyncio.CancelledError:
            if self._finishing:
                return  # closed: nobody can read an answer
            # Cancelled by the peer's $/cancel_request, or by itself. A
            # handler that catches the cancellation answers what it returns.
            self._answer_error(token, RequestError.request_cancelled())
        except RequestError as error:
            self._answer_error(token, error)
        except Exception:
            logger.exception("request handler for %s failed; answering -32603", method)
            self._answer_error(token, RequestError.internal_error())
        else:
            if not self._flush_due:
                self._schedule_flush()
            try:
                native.respond(token, result)
            except (TypeError, ValueError) as error:
                logger.error("result of %s is not JSON: %s; answering -32603", method, error)
                self._answer_error(token, RequestError.internal_error())
            except _native.EngineError:
                pass  # closed meanwhile

    def _answer_error(self, token: int, error: RequestError) -> None:
        self._schedule_flush()
        try:
            self._native.respond_error(token, error.code, error.message, error.data)
        except (TypeError, ValueError):
            self._native.respond_error(token, error.code, error.message, None)
        except _native.EngineError:
            pass

    async def _finish(self) -> None:
        self._finishing = True
        self._settle_handled()
        _open_connections.discard(self._native)
        error = self._closed_error()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(error)
        self._pending.clear()
        for ticket in self._tickets.values():
            if not ticket.done():
                ticket.set_result(False)
        self._tickets.clear()
        running: Set["asyncio.Task[None]"] = set(self._running.values())
        self._running.clear()
        for task in running:
            _cancel_after_first_step(self._loop, task)
        if self._stream_finished is not None:
            try:
                await self._stream_finished()
            except Exception:  # pragma: no cover - best effort cleanup
                pass
        if not self._closed.done():
            self._closed.set_result(self.close_reason or "closed")
