"""MCP-over-ACP (unstable): MCP servers one side offers the other over the
ACP connection itself (MCP 2026-07-28 carried in ``mcp/message``), with the
names of the official TypeScript SDK's (``McpOverAcpProvider``,
``McpOverAcpCaller``) in Python's case. The binding's rules (the envelope,
the per-request MCP meta, outcome carriers, duplicate request ids,
per-server limits, how failures map to outer errors) are the engine's
(``acp_engine::mcp``); this module runs your handlers and listeners.

A client offers a server::

    provider = McpOverAcpProvider()

    class MyClient(Client):
        async def message_mcp(self, params):
            return await provider.handle_request(conn, params)

    conn = ClientSideConnection(lambda conn: MyClient(), stream)
    tools = provider.register_server(conn, "tools", handle_tools)
    # tools.declaration goes into session/new's mcpServers

``handle_tools(context)`` gets an :class:`McpOperationContext` and returns
``{"result": ...}`` (or raises :class:`McpProtocolError` for an MCP error).
An agent calls it::

    caller = McpOverAcpCaller(client_info={"name": "my-agent", "version": "1"})
    outcome = await caller.request(conn, server_id, "tools/call", {"name": "add", "arguments": {}})

and routes ``mcp/message`` notifications with
``caller.handle_notification(conn, params)``.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, Mapping, Optional, Set, Tuple, TypeVar

from .. import _native
from .._connection import Connection
from .._errors import RequestError
from .._tables import Codes, Mcp
from .schema import CLIENT_METHODS

#: ``mcp/message``, the method MCP-over-ACP travels in.
MCP_MESSAGE_METHOD: str = next(wire for wire, info in CLIENT_METHODS.items() if info.key == "mcp_message")
#: The only MCP revision the binding supports.
MCP_PROTOCOL_VERSION: str = Mcp.PROTOCOL_VERSION
#: Inner MCP ``_meta`` keys: protocol version, client capabilities, client info.
MCP_META_PROTOCOL_VERSION: str = Mcp.META_PROTOCOL_VERSION
MCP_META_CLIENT_CAPABILITIES: str = Mcp.META_CLIENT_CAPABILITIES
MCP_META_CLIENT_INFO: str = Mcp.META_CLIENT_INFO


class McpBindingErrorCode:
    """Outer ACP error codes reserved for the binding (never inner MCP codes)."""

    INVALID_PARAMS = Codes.INVALID_PARAMS
    REQUEST_CANCELLED = Codes.REQUEST_CANCELLED
    RESOURCE_LIMIT_EXCEEDED = Codes.MCP_RESOURCE_LIMIT_EXCEEDED
    SERVER_UNAVAILABLE = Codes.MCP_SERVER_UNAVAILABLE
    BACKEND_FAILED = Codes.MCP_BACKEND_FAILED


class McpProtocolError(Exception):
    """An inner MCP error raised by a server handler: answered inside a
    successful response's ``error`` carrier, not as an ACP error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_mcp_error(self) -> Dict[str, Any]:
        error: Dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


T = TypeVar("T")

#: Anything that carries a connection: a typed connection or a raw one.
HasConnection = Any

Outcome = Dict[str, Any]
McpRequestHandler = Callable[["McpOperationContext"], Awaitable[Outcome]]


def _connection_of(conn: HasConnection) -> Connection:
    raw = getattr(conn, "connection", conn)
    if not isinstance(raw, Connection):
        raise TypeError(f"expected an acp_engine connection, not {type(conn).__name__}")
    return raw


def _dumps(value: Any) -> Optional[str]:
    return None if value is None else json.dumps(value)


def _native_call(call: Callable[[], T]) -> T:
    try:
        return call()
    except _native.EngineError as error:
        raise RequestError._from_native(error) from None


def is_mcp_server_acp(server: Any) -> bool:
    """Whether a session's ``mcpServers`` entry is a server provided over ACP."""
    return (
        isinstance(server, Mapping)
        and server.get("type") == "acp"
        and isinstance(server.get("name"), str)
        and isinstance(server.get("serverId"), str)
    )


def parse_mcp_outcome(value: Any) -> Optional[Outcome]:
    """A received carrier as an outcome (``result`` wins); None when invalid."""
    parsed = _native.mcp_parse_outcome(json.dumps(value))
    return None if parsed is None else json.loads(parsed)


def with_mcp_request_meta(
    params: Optional[Mapping[str, Any]],
    client_capabilities: Optional[Mapping[str, Any]] = None,
    client_info: Optional[Mapping[str, Any]] = None,
) -> Dict[str, Any]:
    """``params`` with MCP 2026-07-28's request meta added, never replacing the caller's."""
    text = _native.mcp_with_request_meta(_dumps(params), _dumps(client_capabilities), _dumps(client_info))
    return json.loads(text)  # type: ignore[no-any-return]


@dataclass
class McpOperationContext:
    """What a server handler gets for one MCP request."""

    server_id: str
    request_id: str
    method: str
    params: Optional[Dict[str, Any]]
    protocol_version: str
    client_capabilities: Dict[str, Any]
    client_info: Any
    envelope_meta: Optional[Dict[str, Any]]
    _operation: _native.McpOperationHandle = field(repr=False)
    _connection: Connection = field(repr=False)

    async def notify(self, method: str, params: Optional[Mapping[str, Any]] = None) -> None:
        """Send an MCP notification scoped to this request (dropped once it completed)."""
        notification = self._operation.notification(method, _dumps(params))
        if notification is not None:
            await self._connection.send_notification(MCP_MESSAGE_METHOD, json.loads(notification))


@dataclass
class McpServerRegistration:
    """A registered server: publish :attr:`declaration` in a session's ``mcpServers``."""

    name: str
    server_id: str
    _release: Callable[[], Awaitable[None]] = field(repr=False)

    @property
    def declaration(self) -> Dict[str, str]:
        return {"type": "acp", "name": self.name, "serverId": self.server_id}

    async def dispose(self) -> None:
        """Remove the registration: later requests get -33001, running ones are cancelled."""
        await self._release()


@dataclass
class _Server:
    handler: McpRequestHandler
    running: Set["asyncio.Task[Any]"] = field(default_factory=set)


@dataclass
class _ProviderConnection:
    handle: _native.McpProviderHandle = field(default_factory=_native.McpProviderHandle)
    servers: Dict[str, _Server] = field(default_factory=dict)


class McpOverAcpProvider:
    """Serves MCP servers to an ACP peer over ``mcp/message``; one per app."""

    def __init__(self) -> None:
        self._connections: "weakref.WeakKeyDictionary[Connection, _ProviderConnection]" = weakref.WeakKeyDictionary()

    def _state(self, conn: HasConnection) -> _ProviderConnection:
        raw = _connection_of(conn)
        state = self._connections.get(raw)
        if state is None:
            state = self._connections[raw] = _ProviderConnection()
        return state

    def register_server(
        self,
        conn: HasConnection,
        name: str,
        handler: McpRequestHandler,
        *,
        server_id: Optional[str] = None,
        max_active_requests: Optional[int] = None,
    ) -> McpServerRegistration:
        """Register a server on ``conn`` (ready at once: publish its declaration afterwards)."""
        if max_active_requests is not None and max_active_requests < 1:
            raise ValueError("max_active_requests must be a positive integer")
        state = self._state(conn)
        try:
            registered = state.handle.register(name, server_id, max_active_requests)
        except _native.EngineError as error:
            raise ValueError(RequestError._from_native(error).message) from None
        server = state.servers[registered] = _Server(handler)

        async def release() -> None:
            if not state.handle.dispose(registered):
                return
            state.servers.pop(registered, None)
            for task in list(server.running):
                task.cancel()
            await asyncio.gather(*server.running, return_exceptions=True)

        return McpServerRegistration(name, registered, release)

    async def handle_request(self, conn: HasConnection, params: Any) -> Outcome:
        """Answer an ``mcp/message`` request (a client's ``message_mcp`` handler)."""
        state = self._state(conn)
        operation, text = _native_call(lambda: state.handle.start(json.dumps(params)))
        if operation is None:
            return json.loads(text)  # type: ignore[no-any-return]
        context = json.loads(text)
        server = state.servers[context["serverId"]]
        handler_context = McpOperationContext(
            server_id=context["serverId"],
            request_id=context["requestId"],
            method=context["method"],
            params=context.get("params"),
            protocol_version=context["protocolVersion"],
            client_capabilities=context["clientCapabilities"],
            client_info=context.get("clientInfo"),
            envelope_meta=context.get("envelopeMeta"),
            _operation=operation,
            _connection=_connection_of(conn),
        )
        task = asyncio.ensure_future(server.handler(handler_context))
        server.running.add(task)
        outcome: Optional[str] = None
        failure: Optional[str] = None
        try:
            outcome = json.dumps(await asyncio.shield(task))
        except asyncio.CancelledError:
            if not task.done():
                # The caller cancelled (answered -32800 once this re-raises):
                # stop the handler and free its slot.
                operation.cancel()
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                try:
                    operation.finish(None, json.dumps({"details": "cancelled"}))
                except _native.EngineError:
                    pass
                raise
            # The registration was disposed: the handler's task was cancelled (-32800).
            failure = json.dumps({"details": "the MCP server registration was disposed"})
        except McpProtocolError as error:
            failure = json.dumps({"protocol": error.to_mcp_error()})
        except RequestError as error:
            failure = json.dumps({"details": error.message, "code": error.code})
        except Exception as error:  # noqa: BLE001 - any other handler failure is -33002
            failure = json.dumps({"details": str(error)})
        finally:
            server.running.discard(task)
        return json.loads(_native_call(lambda: operation.finish(outcome, failure)))  # type: ignore[no-any-return]


NotificationListener = Callable[[Dict[str, Any]], None]


class McpOverAcpCaller:
    """Calls MCP servers an ACP peer declared with ``"type": "acp"``; one per app."""

    def __init__(
        self,
        *,
        client_capabilities: Optional[Mapping[str, Any]] = None,
        client_info: Optional[Mapping[str, Any]] = None,
    ) -> None:
        self._capabilities = client_capabilities
        self._client_info = client_info
        self._routes: "weakref.WeakKeyDictionary[Connection, Dict[Tuple[str, str], NotificationListener]]" = (
            weakref.WeakKeyDictionary()
        )

    def _routes_of(self, conn: HasConnection) -> Dict[Tuple[str, str], NotificationListener]:
        raw = _connection_of(conn)
        routes = self._routes.get(raw)
        if routes is None:
            routes = self._routes[raw] = {}
        return routes

    async def request(
        self,
        conn: HasConnection,
        server_id: str,
        method: str,
        params: Optional[Mapping[str, Any]] = None,
        *,
        request_id: Optional[str] = None,
        on_notification: Optional[NotificationListener] = None,
        meta: Optional[Mapping[str, Any]] = None,
    ) -> Outcome:
        """Send one MCP request and return its inner outcome (``{"result"}`` or
        ``{"error"}``); outer failures raise RequestError. Cancelling the
        awaiting task sends ``$/cancel_request``."""
        routes = self._routes_of(conn)
        request_id = request_id or _native.mcp_generate_id("mcp-request")
        key = (server_id, request_id)
        if key in routes:
            raise ValueError(f"MCP request {request_id} is already active for server {server_id}")
        routes[key] = on_notification or (lambda _notification: None)
        try:
            envelope: Dict[str, Any] = {
                "serverId": server_id,
                "requestId": request_id,
                "method": method,
                "params": with_mcp_request_meta(params, self._capabilities, self._client_info),
            }
            if meta is not None:
                envelope["_meta"] = dict(meta)
            response = await _connection_of(conn).send_request(MCP_MESSAGE_METHOD, envelope)
            return json.loads(_native_call(lambda: _native.mcp_outcome_of_response(json.dumps(response))))  # type: ignore[no-any-return]
        finally:
            routes.pop(key, None)

    def handle_notification(self, conn: HasConnection, params: Mapping[str, Any]) -> None:
        """Route an ``mcp/message`` notification to its request's listener
        (an agent's ``message_mcp`` notification handler); others are dropped."""
        listener = self._routes_of(conn).get((str(params.get("serverId")), str(params.get("requestId"))))
        if listener is None:
            return
        notification: Dict[str, Any] = {"method": params.get("method")}
        if params.get("params") is not None:
            notification["params"] = params["params"]
        if isinstance(params.get("_meta"), Mapping):
            notification["_meta"] = params["_meta"]
        listener(notification)


__all__ = [
    "MCP_MESSAGE_METHOD",
    "MCP_META_CLIENT_CAPABILITIES",
    "MCP_META_CLIENT_INFO",
    "MCP_META_PROTOCOL_VERSION",
    "MCP_PROTOCOL_VERSION",
    "McpBindingErrorCode",
    "McpOperationContext",
    "McpOverAcpCaller",
    "McpOverAcpProvider",
    "McpProtocolError",
    "McpServerRegistration",
    "is_mcp_server_acp",
    "parse_mcp_outcome",
    "with_mcp_request_meta",
]
