"""The handler base classes users subclass: :class:`Agent` (what an agent
answers) and :class:`Client` (what a client answers), with the table from
each wire method to the Python method that handles it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, FrozenSet

from ._errors import RequestError

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
        CreateTerminalResponse,
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


class Agent:
    """What an agent implements: subclass it and override the methods you
    support. Every request method answers -32601 (method not found) until
    overridden; notifications are ignored. Params that do not fit the
    schema never reach these methods (the client gets -32602). Requests run
    concurrently, each in its own task; ``cancel`` (a notification) runs in
    arrival order with the other notifications."""

    async def initialize(self, params: InitializeRequest) -> InitializeResponse:
        """``initialize``."""
        raise RequestError.method_not_found("initialize")

    async def authenticate(self, params: AuthenticateRequest) -> AuthenticateResponse:
        """``authenticate``."""
        raise RequestError.method_not_found("authenticate")

    async def logout(self, params: LogoutRequest) -> LogoutResponse:
        """``logout``."""
        raise RequestError.method_not_found("logout")

    async def new_session(self, params: NewSessionRequest) -> NewSessionResponse:
        """``session/new``."""
        raise RequestError.method_not_found("session/new")

    async def load_session(self, params: LoadSessionRequest) -> LoadSessionResponse:
        """``session/load``."""
        raise RequestError.method_not_found("session/load")

    async def list_sessions(self, params: ListSessionsRequest) -> ListSessionsResponse:
        """``session/list``."""
        raise RequestError.method_not_found("session/list")

    async def delete_session(self, params: DeleteSessionRequest) -> DeleteSessionResponse:
        """``session/delete``."""
        raise RequestError.method_not_found("session/delete")

    async def resume_session(self, params: ResumeSessionRequest) -> ResumeSessionResponse:
        """``session/resume``."""
        raise RequestError.method_not_found("session/resume")

    async def close_session(self, params: CloseSessionRequest) -> CloseSessionResponse:
        """``session/close``."""
        raise RequestError.method_not_found("session/close")

    async def set_session_mode(self, params: SetSessionModeRequest) -> SetSessionModeResponse:
        """``session/set_mode``."""
        raise RequestError.method_not_found("session/set_mode")

    async def set_session_config_option(self, params: SetSessionConfigOptionRequest) -> SetSessionConfigOptionResponse:
        """``session/set_config_option``."""
        raise RequestError.method_not_found("session/set_config_option")

    async def prompt(self, params: PromptRequest) -> PromptResponse:
        """``session/prompt``."""
        raise RequestError.method_not_found("session/prompt")

    async def cancel(self, params: CancelNotification) -> None:
        """``session/cancel`` (a notification; ignored unless overridden)."""
        return None

    async def ext_method(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        """An extension request (a method starting with ``_``)."""
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: Dict[str, Any]) -> None:
        """An extension notification (a method starting with ``_``); ignored by default."""
        return None


AGENT_HANDLERS: Dict[str, str] = {
    "initialize": "initialize",
    "authenticate": "authenticate",
    "logout": "logout",
    "session/new": "new_session",
    "session/load": "load_session",
    "session/list": "list_sessions",
    "session/delete": "delete_session",
    "session/resume": "resume_session",
    "session/close": "close_session",
    "session/set_mode": "set_session_mode",
    "session/set_config_option": "set_session_config_option",
    "session/prompt": "prompt",
    "session/cancel": "cancel",
}


class Client:
    """What a client implements: subclass it and override the methods you
    support (advertise only those in your capabilities). Every request
    method answers -32601 until overridden; ``session_update`` and the
    other notifications are handled one at a time, in arrival order."""

    async def request_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        """``session/request_permission``."""
        raise RequestError.method_not_found("session/request_permission")

    async def session_update(self, params: SessionNotification) -> None:
        """``session/update`` (a notification; ignored unless overridden)."""
        return None

    async def read_text_file(self, params: ReadTextFileRequest) -> ReadTextFileResponse:
        """``fs/read_text_file``."""
        raise RequestError.method_not_found("fs/read_text_file")

    async def write_text_file(self, params: WriteTextFileRequest) -> WriteTextFileResponse:
        """``fs/write_text_file``."""
        raise RequestError.method_not_found("fs/write_text_file")

    async def create_terminal(self, params: CreateTerminalRequest) -> CreateTerminalResponse:
        """``terminal/create``."""
        raise RequestError.method_not_found("terminal/create")

    async def terminal_output(self, params: TerminalOutputRequest) -> TerminalOutputResponse:
        """``terminal/output``."""
        raise RequestError.method_not_found("terminal/output")

    async def release_terminal(self, params: ReleaseTerminalRequest) -> ReleaseTerminalResponse:
        """``terminal/release``."""
        raise RequestError.method_not_found("terminal/release")

    async def wait_for_terminal_exit(self, params: WaitForTerminalExitRequest) -> WaitForTerminalExitResponse:
        """``terminal/wait_for_exit``."""
        raise RequestError.method_not_found("terminal/wait_for_exit")

    async def kill_terminal(self, params: KillTerminalRequest) -> KillTerminalResponse:
        """``terminal/kill``."""
        raise RequestError.method_not_found("terminal/kill")

    async def create_elicitation(self, params: CreateElicitationRequest) -> CreateElicitationResponse:
        """``elicitation/create``."""
        raise RequestError.method_not_found("elicitation/create")

    async def complete_elicitation(self, params: CompleteElicitationNotification) -> None:
        """``elicitation/complete`` (a notification; ignored unless overridden)."""
        return None

    async def ext_method(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        """An extension request (a method starting with ``_``)."""
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: Dict[str, Any]) -> None:
        """An extension notification (a method starting with ``_``); ignored by default."""
        return None


CLIENT_HANDLERS: Dict[str, str] = {
    "session/request_permission": "request_permission",
    "session/update": "session_update",
    "fs/read_text_file": "read_text_file",
    "fs/write_text_file": "write_text_file",
    "terminal/create": "create_terminal",
    "terminal/output": "terminal_output",
    "terminal/release": "release_terminal",
    "terminal/wait_for_exit": "wait_for_terminal_exit",
    "terminal/kill": "kill_terminal",
    "elicitation/create": "create_elicitation",
    "elicitation/complete": "complete_elicitation",
}

#: The wire methods in the tables above that are notifications.
AGENT_NOTIFICATIONS: FrozenSet[str] = frozenset({"session/cancel"})
CLIENT_NOTIFICATIONS: FrozenSet[str] = frozenset({"session/update", "elicitation/complete"})
