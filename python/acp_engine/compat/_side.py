"""What both compat connections share: serving the user's handler object through
the route table, calling the peer with models, extensions and lifecycle."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import Any, Awaitable, Dict, Iterable, Optional

from .._connection import Side
from ._methods import Route
from ._router import V1_MODELS, Models, Router
from .connection import Connection, MethodHandler, _raise_if_closed, wire_params
from .exceptions import RequestError

_STREAMS_ERROR = "{cls} requires asyncio StreamWriter/StreamReader"


class SideConnection:
    _side: Side
    _routes: Iterable[Route]
    # The API's models, router and protocol versions (v2's connections differ).
    _models: Models = V1_MODELS
    _router_class: type[Router] = Router
    _protocol_versions: tuple[int, ...] = (1,)
    _wire_params = staticmethod(wire_params)

    def __init__(
        self,
        to_handler: Any,
        input_stream: Any,
        output_stream: Any = None,
        listening: bool = True,
        *,
        use_unstable_protocol: bool = False,
        **connection_kwargs: Any,
    ) -> None:
        handler, router = self._prepare(to_handler)
        self._conn = Connection(
            router,
            input_stream,
            output_stream,
            listening=listening,
            _side=self._side,
            _unstable=use_unstable_protocol,
            _protocol_versions=self._protocol_versions,
            **connection_kwargs,
        )
        self._notify_connected(handler)

    def _prepare(self, to_handler: Any) -> tuple[Any, Router]:
        handler = to_handler(self) if callable(to_handler) else to_handler
        router = self._router_class(self._routes, handler, self._models)
        self._notification_params = router.notification_params
        # v1's peer methods (`_peers.py`) write with `_wire.Writers` and list the
        # notifications they send; v2's have neither.
        writers = getattr(self, "_writers", None)
        if writers is not None:
            sent = getattr(self, "_NOTIFICATION_PARAMS")
            router.on_session_made = functools.partial(self._prepare_writers, writers, sent)
        return handler, router

    def on_connect(self, conn: Any) -> None:
        """Nothing: the official connections are their peer's protocol too, whose hook this is."""

    def _notify_connected(self, handler: Any) -> None:
        on_connect = getattr(handler, "on_connect", None)
        if on_connect is not None:
            on_connect(self)

    @classmethod
    def attach(cls, to_handler: Any, connection: Connection, *, use_unstable_protocol: bool = False) -> tuple[Any, MethodHandler]:
        """A wrapper over an existing connection, and the handler to route its messages to."""
        self = cls.__new__(cls)
        self._conn = connection
        handler, router = self._prepare(to_handler)
        self._notify_connected(handler)
        return self, router

    async def _call(self, method: str, params: Any, result: Optional[str]) -> Any:
        if result is None or not self._models.first_use(result):
            try:
                answer = await self._conn._engine.send_request(method, self._wire_params(params))
            except RequestError as error:
                _raise_if_closed(error)
                raise
            return self._models.validate_result(answer, result)
        reply = self._conn.send_request(method, self._wire_params(params))
        # The first request of its kind: its result's model is made ready while
        # the peer works on it (this is when a spawned agent is still starting).
        sending = asyncio.ensure_future(reply)
        try:
            await asyncio.sleep(0)  # the request is handed to the engine, its write queued
            asyncio.get_running_loop().call_soon(self._prepare_ahead, result)  # after that write
            return self._models.validate_result(await sending, result)
        except asyncio.CancelledError:
            sending.cancel()  # the peer gets $/cancel_request, as for any call
            raise

    def _prepare_ahead(self, result: str) -> None:
        """The models a first request's wait is spent on: its result's, then
        those of the notifications the handler takes (a client's
        ``session/update``, whose tree of update models takes tens of
        milliseconds to create: otherwise the first update of the first turn
        pays for it), each once per process."""
        self._models.prepare(result)
        for params in self._notification_params:
            if self._models.first_use(params):
                self._models.prepare(params)

    @staticmethod
    def _prepare_writers(writers: Any, notification_params: Iterable[str]) -> None:
        """Make the writers of the notifications this side sends (an agent's
        ``session/update``, whose tree of update models takes tens of
        milliseconds to create) once a session is made and its answer is out:
        otherwise the first update of the first turn pays for them."""
        for params in notification_params:
            with contextlib.suppress(Exception):  # a head start: a failure recurs where it is used
                getattr(writers, params)

    def _notify(self, method: str, params: Any) -> Awaitable[None]:
        return self._conn._notify_now(method, self._wire_params(params))

    def _notify_wire(self, method: str, params: Any) -> Awaitable[None]:
        """``_notify`` for params already as the engine takes them (a ``_wire.Writers`` writer's)."""
        return self._conn._notify_now(method, params)

    async def ext_method(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        """An extension request: sent as ``_method``."""
        return await self._conn.send_request(f"_{method}", params)  # type: ignore[no-any-return]

    async def ext_notification(self, method: str, params: Dict[str, Any]) -> None:
        """An extension notification: sent as ``_method``."""
        await self._conn.send_notification(f"_{method}", params)

    async def listen(self) -> None:
        """Returns once the connection is closed."""
        await self._conn.main_loop()

    async def close(self) -> None:
        await self._conn.close()

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

