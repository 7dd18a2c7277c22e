"""What the typed ACP connections share: serving the user's handler from
the generated method table, the sends the generated peer methods go
through, extensions and lifecycle. The public classes,
``AgentSideConnection`` (an agent's connection to its client) and
``ClientSideConnection`` (a client's connection to its agent), are
generated on top of these (``_generated.methods``), one method per peer
method of the schema. Both sides check messages against the ACP schema in
the engine, both ways; the protocol's rules (a client's cancelling a turn
answering that session's open permission requests, for one) live there
too."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, ClassVar, Dict, FrozenSet, Optional, Sequence, Tuple

from ._connection import Connection, Side
from ._limits import Limits
from ._terminal import TerminalHandle
from ._transport import Stream


class _Router:
    """Routes inbound methods to a handler object's methods."""

    def __init__(self, handler: Any, table: Dict[str, str], notifications: FrozenSet[str]) -> None:
        self.handler = handler
        self.requests: Dict[str, Callable[[Any], Awaitable[Any]]] = {}
        self.notifications: Dict[str, Callable[[Any], Awaitable[None]]] = {}
        for wire, name in table.items():
            (self.notifications if wire in notifications else self.requests)[wire] = getattr(handler, name)

    async def on_request(self, method: str, params: Any) -> Any:
        handle = self.requests.get(method)
        if handle is None:
            # The engine lets only known methods, `_` extensions and the
            # connection's unchecked methods through.
            return await self.handler.ext_method(method, params)
        return await handle(params)

    def on_notification(self, method: str, params: Any) -> Optional[Awaitable[None]]:
        handle = self.notifications.get(method)
        if handle is None:
            return self.handler.ext_notification(method, params)  # type: ignore[no-any-return]
        return handle(params)


class _TypedConnection:
    """What both typed connections share: serving the handler, the sends
    the generated peer methods go through, extensions and lifecycle."""

    #: The generated table this connection dispatches from.
    _handlers: ClassVar[Dict[str, str]]
    _notifications: ClassVar[FrozenSet[str]]
    _side: ClassVar[Side]
    _unstable: ClassVar[bool] = False
    #: The ACP versions the connection speaks (v2's connections: 2).
    _protocol_versions: ClassVar[Tuple[int, ...]] = (1,)

    connection: Connection

    def _serve(
        self,
        handler: Any,
        stream: Stream,
        max_message_size: Optional[int],
        limits: Optional[Limits],
        unchecked_methods: Sequence[str],
    ) -> None:
        router = _Router(handler, self._handlers, self._notifications)
        self.connection = Connection(
            stream,
            router.on_request,
            router.on_notification,
            side=self._side,
            max_message_size=max_message_size,
            limits=limits,
            unstable=self._unstable,
            protocol_versions=self._protocol_versions,
            unchecked_methods=unchecked_methods,
            # A handler that defines it hears of the peer's notifications
            # that fail the schema; otherwise they are logged as warnings.
            on_invalid_notification=getattr(handler, "on_invalid_notification", None),
            _routes=router.notifications,
        )
        # The peer methods call these: bound straight to the connection's
        # (one Python call per message, not two).
        self._request = self.connection.send_request
        self._notify = self.connection.send_notification

    def ext_method(self, method: str, params: Dict[str, Any]) -> Awaitable[Any]:
        """A request outside the schema, ``method`` sent as given: an
        extension (start it with ``_``) or one of the connection's
        ``unchecked_methods``."""
        return self.connection.send_request(method, params)

    def ext_notification(self, method: str, params: Dict[str, Any]) -> Awaitable[None]:
        """A notification outside the schema, ``method`` sent as given (see
        :meth:`ext_method`)."""
        return self.connection.send_notification(method, params)

    def cancel_pending_request(self, request_id: int) -> bool:
        """Cancel our request ``request_id`` if still pending (see :class:`Connection`)."""
        return self.connection.cancel_pending_request(request_id)

    @property
    def closed(self) -> "asyncio.Future[str]":
        """Resolves once the connection is closed and torn down."""
        return self.connection.closed

    @property
    def is_closed(self) -> bool:
        return self.connection.is_closed

    def close(self) -> None:
        """Start closing: pending calls fail, handlers are cancelled."""
        self.connection.close()

    async def aclose(self) -> None:
        """Close and wait until torn down."""
        await self.connection.aclose()


class _AgentSide(_TypedConnection):
    """An agent's connection: serves ``agent`` (made by ``to_agent(self)``)."""

    _side = Side.AGENT

    def __init__(
        self,
        to_agent: Callable[[Any], Any],
        stream: Stream,
        *,
        max_message_size: Optional[int] = None,
        limits: Optional[Limits] = None,
        unchecked_methods: Sequence[str] = (),
    ) -> None:
        self.agent = to_agent(self)
        self._serve(self.agent, stream, max_message_size, limits, unchecked_methods)

    async def _terminal(self, method: str, params: Any) -> TerminalHandle:
        """``terminal/create``: a handle to the terminal (release it, or use
        ``async with``)."""
        response = await self.connection.send_request(method, params)
        return TerminalHandle(response["terminalId"], params["sessionId"], self)  # type: ignore[arg-type]


class _ClientSide(_TypedConnection):
    """A client's connection: serves ``client`` (made by ``to_client(self)``)."""

    _side = Side.CLIENT

    def __init__(
        self,
        to_client: Callable[[Any], Any],
        stream: Stream,
        *,
        max_message_size: Optional[int] = None,
        limits: Optional[Limits] = None,
        unchecked_methods: Sequence[str] = (),
    ) -> None:
        self.client = to_client(self)
        self._serve(self.client, stream, max_message_size, limits, unchecked_methods)

    @property
    def pid(self) -> Optional[int]:
        """The spawned agent's process id."""
        return self.connection.pid
