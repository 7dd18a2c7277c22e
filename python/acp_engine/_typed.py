"""The typed ACP connections: :class:`AgentSideConnection` (an agent's
connection to its client) and :class:`ClientSideConnection` (a client's
connection to its agent). Each serves the user's handler and offers every
method of the peer. Both sides check messages against the ACP schema in the
engine, both ways."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Dict, FrozenSet, Optional, Set

from ._connection import Connection, _Resume
from ._handlers import AGENT_HANDLERS, AGENT_NOTIFICATIONS, CLIENT_HANDLERS, CLIENT_NOTIFICATIONS, Agent, Client
from ._terminal import TerminalHandle
from ._transport import Stream

if TYPE_CHECKING:  # the schema module is for type checkers: not imported at run time
    from .schema import (
        AuthenticateRequest,
        AuthenticateResponse,
        CancelNotification,
        CloseSessionRequest,
        CloseSessionResponse,
        CompleteElicitationNotification,
        CreateElicitationRequest,
        CreateElicitationResponse,
        CreateTerminalRequest,
        DeleteSessionRequest,
        DeleteSessionResponse,
        InitializeRequest,
        InitializeResponse,
        KillTerminalRequest,
        KillTerminalResponse,
        ListSessionsRequest,
        ListSessionsResponse,
        LoadSessionRequest,
        LoadSessionResponse,
        LogoutRequest,
        LogoutResponse,
        NewSessionRequest,
        NewSessionResponse,
        PromptRequest,
        PromptResponse,
        ReadTextFileRequest,
        ReadTextFileResponse,
        ReleaseTerminalRequest,
        ReleaseTerminalResponse,
        RequestPermissionRequest,
        RequestPermissionResponse,
        ResumeSessionRequest,
        ResumeSessionResponse,
        SessionNotification,
        SetSessionConfigOptionRequest,
        SetSessionConfigOptionResponse,
        SetSessionModeRequest,
        SetSessionModeResponse,
        TerminalOutputRequest,
        TerminalOutputResponse,
        WaitForTerminalExitRequest,
        WaitForTerminalExitResponse,
        WriteTextFileRequest,
        WriteTextFileResponse,
    )


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
            # The engine lets only known methods and `_` extensions through.
            result = await self.handler.ext_method(method, params)
        else:
            result = await handle(params)
        # ACP results are objects: a handler with nothing to say returns None.
        return {} if result is None else result

    def on_notification(self, method: str, params: Any) -> Optional[Awaitable[None]]:
        handle = self.notifications.get(method)
        if handle is None:
            return self.handler.ext_notification(method, params)  # type: ignore[no-any-return]
        return handle(params)

    def connect(self, stream: Stream, side: str, max_message_size: Optional[int]) -> Connection:
        """A connection whose inbound calls this router serves."""
        return Connection(
            stream,
            self.on_request,
            self.on_notification,
            side=side,
            max_message_size=max_message_size,
            _routes=self.notifications,
        )


class _TypedConnection:
    connection: Connection

    def ext_method(self, method: str, params: Dict[str, Any]) -> Awaitable[Any]:
        """An extension request; ``method`` is sent as given (start it with ``_``)."""
        return self.connection.send_request(method, params)

    def ext_notification(self, method: str, params: Dict[str, Any]) -> Awaitable[None]:
        """An extension notification; ``method`` is sent as given."""
        return self.connection.send_notification(method, params)

    def cancel_pending_request(self, request_id: int) -> bool:
        return self.connection.cancel_pending_request(request_id)

    @property
    def closed(self) -> "asyncio.Future[str]":
        """Resolves once the connection is closed and torn down."""
        return self.connection.closed

    @property
    def is_closed(self) -> bool:
        return self.connection.is_closed

    def close(self) -> None:
        self.connection.close()

    async def aclose(self) -> None:
        await self.connection.aclose()


class AgentSideConnection(_TypedConnection):
    """An agent's connection to its client: ``AgentSideConnection(lambda
    conn: MyAgent(conn), stdio_stream())``. The agent gets this connection
    to call its client back."""

    def __init__(
        self,
        to_agent: Callable[["AgentSideConnection"], Agent],
        stream: Stream,
        *,
        max_message_size: Optional[int] = None,
    ) -> None:
        self.agent = to_agent(self)
        router = _Router(self.agent, AGENT_HANDLERS, AGENT_NOTIFICATIONS)
        self.connection = router.connect(stream, "agent", max_message_size)

    def request_permission(self, params: RequestPermissionRequest) -> Awaitable[RequestPermissionResponse]:
        """``session/request_permission``."""
        return self.connection.send_request("session/request_permission", params)

    def session_update(self, params: SessionNotification) -> Awaitable[None]:
        """``session/update`` (a notification)."""
        return self.connection.send_notification("session/update", params)

    def read_text_file(self, params: ReadTextFileRequest) -> Awaitable[ReadTextFileResponse]:
        """``fs/read_text_file``."""
        return self.connection.send_request("fs/read_text_file", params)

    def write_text_file(self, params: WriteTextFileRequest) -> Awaitable[WriteTextFileResponse]:
        """``fs/write_text_file``."""
        return self.connection.send_request("fs/write_text_file", params)

    def terminal_output(self, params: TerminalOutputRequest) -> Awaitable[TerminalOutputResponse]:
        """``terminal/output``."""
        return self.connection.send_request("terminal/output", params)

    def release_terminal(self, params: ReleaseTerminalRequest) -> Awaitable[ReleaseTerminalResponse]:
        """``terminal/release``."""
        return self.connection.send_request("terminal/release", params)

    def wait_for_terminal_exit(self, params: WaitForTerminalExitRequest) -> Awaitable[WaitForTerminalExitResponse]:
        """``terminal/wait_for_exit``."""
        return self.connection.send_request("terminal/wait_for_exit", params)

    def kill_terminal(self, params: KillTerminalRequest) -> Awaitable[KillTerminalResponse]:
        """``terminal/kill``."""
        return self.connection.send_request("terminal/kill", params)

    def create_elicitation(self, params: CreateElicitationRequest) -> Awaitable[CreateElicitationResponse]:
        """``elicitation/create``."""
        return self.connection.send_request("elicitation/create", params)

    def complete_elicitation(self, params: CompleteElicitationNotification) -> Awaitable[None]:
        """``elicitation/complete`` (a notification)."""
        return self.connection.send_notification("elicitation/complete", params)

    async def create_terminal(self, params: CreateTerminalRequest) -> TerminalHandle:
        """``terminal/create``: a handle to the terminal (release it, or use
        ``async with``)."""
        response = await self.connection.send_request("terminal/create", params)
        return TerminalHandle(response["terminalId"], params["sessionId"], self.connection)


class ClientSideConnection(_TypedConnection):
    """A client's connection to its agent: ``ClientSideConnection(lambda
    agent: MyClient(), spawn_stream("my-agent"))``."""

    def __init__(
        self,
        to_client: Callable[["ClientSideConnection"], Client],
        stream: Stream,
        *,
        max_message_size: Optional[int] = None,
    ) -> None:
        self.client = to_client(self)
        router = _Router(self.client, CLIENT_HANDLERS, CLIENT_NOTIFICATIONS)
        # Permission requests still open, by session, for `cancel`.
        self._asking: Dict[str, Set["asyncio.Task[Any]"]] = {}
        self._withdrawn: Set["asyncio.Task[Any]"] = set()
        router.requests["session/request_permission"] = self._request_permission
        self.connection = router.connect(stream, "client", max_message_size)

    @property
    def pid(self) -> Optional[int]:
        """The spawned agent's process id."""
        return self.connection.pid

    def initialize(self, params: InitializeRequest) -> Awaitable[InitializeResponse]:
        """``initialize``."""
        return self.connection.send_request("initialize", params)

    def authenticate(self, params: AuthenticateRequest) -> Awaitable[AuthenticateResponse]:
        """``authenticate``."""
        return self.connection.send_request("authenticate", params)

    def logout(self, params: LogoutRequest) -> Awaitable[LogoutResponse]:
        """``logout``."""
        return self.connection.send_request("logout", params)

    def new_session(self, params: NewSessionRequest) -> Awaitable[NewSessionResponse]:
        """``session/new``."""
        return self.connection.send_request("session/new", params)

    def load_session(self, params: LoadSessionRequest) -> Awaitable[LoadSessionResponse]:
        """``session/load``."""
        return self.connection.send_request("session/load", params)

    def list_sessions(self, params: ListSessionsRequest) -> Awaitable[ListSessionsResponse]:
        """``session/list``."""
        return self.connection.send_request("session/list", params)

    def delete_session(self, params: DeleteSessionRequest) -> Awaitable[DeleteSessionResponse]:
        """``session/delete``."""
        return self.connection.send_request("session/delete", params)

    def resume_session(self, params: ResumeSessionRequest) -> Awaitable[ResumeSessionResponse]:
        """``session/resume``."""
        return self.connection.send_request("session/resume", params)

    def close_session(self, params: CloseSessionRequest) -> Awaitable[CloseSessionResponse]:
        """``session/close``."""
        return self.connection.send_request("session/close", params)

    def set_session_mode(self, params: SetSessionModeRequest) -> Awaitable[SetSessionModeResponse]:
        """``session/set_mode``."""
        return self.connection.send_request("session/set_mode", params)

    def set_session_config_option(self, params: SetSessionConfigOptionRequest) -> Awaitable[SetSessionConfigOptionResponse]:
        """``session/set_config_option``."""
        return self.connection.send_request("session/set_config_option", params)

    def prompt(self, params: PromptRequest) -> Awaitable[PromptResponse]:
        """``session/prompt``."""
        return self.connection.send_request("session/prompt", params)

    async def cancel(self, params: CancelNotification) -> None:
        """``session/cancel``. The session's permission requests still open
        are answered ``cancelled`` at once (the protocol requires it)."""
        for task in self._asking.pop(params["sessionId"], set()):
            self._withdrawn.add(task)
            task.cancel()
        await self.connection.send_notification("session/cancel", params)

    async def _request_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        answer = self.client.request_permission(params)
        if asyncio.iscoroutine(answer):
            # The handler's first step runs here: one that answers at once
            # needs no Task (a Task per request cost 4x in round trips).
            try:
                waiting_on = answer.send(None)
            except StopIteration as answered:
                result: RequestPermissionResponse = answered.value
                return result
            # It waits (on the user, say): a Task, which session/cancel can
            # cancel.
            asking = asyncio.ensure_future(_Resume(answer, waiting_on))
        else:
            asking = asyncio.ensure_future(answer)
        session = self._asking.setdefault(params["sessionId"], set())
        session.add(asking)
        try:
            return await asking
        except asyncio.CancelledError:
            if asking in self._withdrawn:
                return {"outcome": {"outcome": "cancelled"}}
            raise
        finally:
            session.discard(asking)
            self._withdrawn.discard(asking)
