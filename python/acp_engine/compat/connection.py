"""``acp.connection``: the official SDK's low-level JSON-RPC connection, on the engine.

``Connection(handler, writer, reader)`` calls ``handler(method, params,
is_notification)`` for every message from the peer; the engine does the framing,
ids, ordering, ``$/cancel_request`` and limits. What the handler returns (a model
or plain JSON) answers the request; a ``RequestError`` answers with that error, a
pydantic ``ValidationError`` with -32602, anything else with -32603.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from dataclasses import dataclass
from enum import Enum
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Set

from pydantic import BaseModel, ValidationError

from .._connection import Connection as _EngineConnection
from .._connection import Side
from .._errors import RequestError
from .._tables import Messages
from .._transport import Stream, asyncio_stream
from . import telemetry
from ._transport import TransportStream, is_transport
from ._wire import to_wire_json
from ._wire_models import written_by_engine

__all__ = ["Connection", "JsonValue", "MethodHandler", "StreamDirection", "StreamEvent"]

logger = logging.getLogger("acp_engine.compat")

JsonValue = Any
MethodHandler = Callable[[str, Optional[JsonValue], bool], Awaitable[Optional[JsonValue]]]


class StreamDirection(str, Enum):
    """Which way a message went (the official stream observers' type)."""

    INCOMING = "incoming"
    OUTGOING = "outgoing"


@dataclass(frozen=True)
class StreamEvent:
    """A message a stream observer sees: which way it went, and the message."""

    direction: StreamDirection
    message: Dict[str, Any]


#: Called with every message read or written; a coroutine it returns runs as a task.
StreamObserver = Callable[[StreamEvent], Optional[Awaitable[None]]]

# Methods outside our schema (those of a newer one) go through unchecked, to the
# handler, which answers -32601 for what it does not know.
_EVERY_UNKNOWN_METHOD = ("*",)


def dump_result(result: Any) -> Any:
    """A handler's result as wire JSON (models by alias, unset fields left
    out): a model as JSON bytes, which the engine takes as they are."""
    if isinstance(result, BaseModel):
        written = written_by_engine(result, unset=True)
        if written is not None:
            return written
        return result.__pydantic_serializer__.to_json(result, by_alias=True, exclude_none=True, exclude_unset=True)
    return result


def wire_params(params: Any) -> Any:
    """Params for the engine: a model as JSON bytes (by alias; defaults and
    None left out, as ``serialize_params``), anything else as it is."""
    if type(params) in _WIRE_READY:
        # What the peer methods pass: the check below is an ABC's (slow).
        return params
    if isinstance(params, BaseModel):
        return to_wire_json(params)
    return params


_WIRE_READY = frozenset((dict, bytes, type(None)))


def _log_notification_failure(method: str) -> None:
    logger.exception("Unhandled error while handling notification method=%s", method)


def _raise_if_closed(error: RequestError) -> None:
    """The engine's "connection closed" as the official ConnectionError
    (any other error is the caller's to raise)."""
    if error.is_connection_closed():
        raise ConnectionError(Messages.CONNECTION_CLOSED) from error


async def _closed_as_connection_error(sent: Awaitable[None]) -> None:
    try:
        await sent
    except RequestError as error:
        _raise_if_closed(error)
        raise


def _as_request_error(error: Exception) -> RequestError:
    if isinstance(error, RequestError):
        return error
    if isinstance(error, ValidationError):
        return RequestError.invalid_params({"errors": json.loads(error.json(include_url=False))})
    try:
        data = json.loads(str(error))
    except ValueError:
        data = {"details": str(error)}
    return RequestError.internal_error(data)


def _stream_of(writer: Any, reader: Any) -> Stream:
    if isinstance(writer, Stream) and reader is None:
        return writer
    if isinstance(writer, asyncio.StreamWriter) and isinstance(reader, asyncio.StreamReader):
        return asyncio_stream(reader, writer)
    if reader is None and is_transport(writer):
        return TransportStream(writer)
    raise TypeError(
        "Connection needs an asyncio StreamWriter and StreamReader, a message Transport, or an acp_engine Stream"
    )


class Connection:
    """A JSON-RPC 2.0 connection over newline-delimited JSON (see the module)."""

    def __init__(
        self,
        handler: MethodHandler,
        writer: Any,
        reader: Optional[asyncio.StreamReader] = None,
        *,
        observers: Optional[list[Any]] = None,
        listening: bool = True,
        receive_timeout: Optional[float] = None,
        _side: Side = Side.RAW,
        _unstable: bool = False,
        _unchecked_methods: Sequence[str] = _EVERY_UNKNOWN_METHOD,
        _protocol_versions: Sequence[int] = (1,),
    ) -> None:
        self._handler = handler
        self._observers: List[StreamObserver] = list(observers or [])
        self._observer_tasks: Set["asyncio.Task[None]"] = set()
        self._stream = _stream_of(writer, reader)
        # A compat router's notifications go from the engine to their handler
        # directly (no coroutine of ours per notification).
        notification_routes = getattr(handler, "notification_routes", None)
        routes = notification_routes() if notification_routes is not None else None
        if routes is not None and telemetry.installed():
            routes = telemetry.traced_notifications(routes)
        self._engine = _EngineConnection(
            self._stream,
            self._on_request,
            self._on_notification,
            _routes=routes,
            _notification_failed=_log_notification_failure,
            side=_side,
            unstable=_unstable,
            unchecked_methods=_unchecked_methods,
            protocol_versions=_protocol_versions,
            observer=self._observe if self._observers else None,
        )

    def add_observer(self, observer: StreamObserver) -> None:
        """See every message read or written from now on."""
        self._observers.append(observer)
        if len(self._observers) == 1:
            self._engine.set_observer(self._observe)

    def _observe(self, inbound: bool, line: str) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return  # not a message (the engine answered it as such)
        if not isinstance(message, dict):
            return
        # One event for every observer, as the official connection hands out.
        event = StreamEvent(StreamDirection.INCOMING if inbound else StreamDirection.OUTGOING, message)
        for observer in list(self._observers):
            try:
                result = observer(event)
            except Exception:
                logger.exception("Stream observer failed")
                continue
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._observer_tasks.add(task)
                task.add_done_callback(self._observer_done)

    def _observer_done(self, task: "asyncio.Task[None]") -> None:
        self._observer_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("Stream observer coroutine failed", exc_info=task.exception())

    async def _on_request(self, method: str, params: Any) -> Any:
        try:
            with telemetry.span_context("acp.request", attributes={"method": method}):
                return dump_result(await self._handler(method, params, False))
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if not isinstance(error, (RequestError, ValidationError)):
                logger.exception("Unhandled error while handling request method=%s", method)
            raise _as_request_error(error) from None

    async def _on_notification(self, method: str, params: Any) -> None:
        try:
            with telemetry.span_context("acp.notification", attributes={"method": method}):
                await self._handler(method, params, True)
        except Exception:
            _log_notification_failure(method)

    async def send_request(self, method: str, params: Optional[JsonValue] = None) -> Any:
        """Send a request and return its result; raises RequestError, or
        ConnectionError once the connection is closed."""
        try:
            return await self._engine.send_request(method, params)
        except RequestError as error:
            _raise_if_closed(error)
            raise

    async def send_notification(self, method: str, params: Optional[JsonValue] = None) -> None:
        await self._notify_now(method, params)

    def _notify_now(self, method: str, params: Optional[JsonValue] = None) -> Awaitable[None]:
        """``send_notification`` without a coroutine of its own: what the peer
        methods await (a completed future when the message is queued at once)."""
        try:
            sent = self._engine.send_notification(method, params)
        except RequestError as error:
            _raise_if_closed(error)
            raise
        if isinstance(sent, asyncio.Future) and sent.done():
            return sent
        return _closed_as_connection_error(sent)

    async def main_loop(self) -> None:
        """Returns once the connection is closed (the engine reads from the start),
        or once it is cancelled, as the official receive loop does."""
        try:
            await asyncio.shield(self._engine.closed)
        except asyncio.CancelledError:
            return

    async def close(self) -> None:
        """Close: pending calls fail, handlers are cancelled."""
        if isinstance(self._stream, TransportStream):
            self._stream.cancel_send()
        await self._engine.aclose()

    @property
    def protocol_version(self) -> int:
        """The ACP version the connection speaks (the one ``initialize`` selected)."""
        return self._engine.protocol_version

    @property
    def _pending(self) -> Mapping[int, Any]:
        """Our requests awaiting an answer, by id (the official attribute)."""
        return self._engine.pending_requests

    async def __aenter__(self) -> "Connection":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
