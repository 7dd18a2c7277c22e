"""``acp.http.protocol``: the Streamable HTTP and WebSocket transports' header
names, media types and endpoint, and the official package's helpers that
classify JSON-RPC messages (the engine routes messages itself; these are for
code that inspects them)."""

from __future__ import annotations

from typing import Any, Optional

from ..._tables import Headers
from ..interfaces import Agent
from ..meta import AGENT_METHODS

__all__ = [
    "ACP_ENDPOINT_PATH",
    "CONNECTION_ID_HEADER",
    "CONTENT_TYPE_JSON",
    "CONTENT_TYPE_SSE",
    "INITIALIZE_METHOD",
    "LOAD_SESSION_METHOD",
    "RESUME_SESSION_METHOD",
    "SESSION_ATTACH_METHODS",
    "SESSION_ID_HEADER",
    "is_initialize_request",
    "is_response_message",
    "message_id_key",
    "method_requires_session_header",
    "session_id_from_message",
    "session_id_from_params",
    "session_id_from_result",
]

CONNECTION_ID_HEADER: str = Headers.CONNECTION_ID
SESSION_ID_HEADER: str = Headers.SESSION_ID
CONTENT_TYPE_JSON = "application/json"
CONTENT_TYPE_SSE = "text/event-stream"
ACP_ENDPOINT_PATH = "/acp"

# (The table's key for it is the Agent protocol's handler name.)
INITIALIZE_METHOD = AGENT_METHODS[Agent.initialize.__name__]
LOAD_SESSION_METHOD = AGENT_METHODS["session_load"]
RESUME_SESSION_METHOD = AGENT_METHODS["session_resume"]

# Methods that attach the session their request names.
SESSION_ATTACH_METHODS = frozenset({LOAD_SESSION_METHOD, RESUME_SESSION_METHOD})

# Methods about an established session: their POSTs carry the session header.
_SESSION_SCOPED_METHODS = frozenset(
    AGENT_METHODS[key]
    for key in ("session_set_mode", "session_set_config_option", "session_prompt", "session_cancel", "session_close")
)


def is_initialize_request(message: dict[str, Any]) -> bool:
    """An ``initialize`` request (a notification of that name is not)."""
    return message.get("method") == INITIALIZE_METHOD and "id" in message


def is_response_message(message: dict[str, Any]) -> bool:
    """A response: an ``id`` and no ``method``."""
    return "id" in message and "method" not in message


def method_requires_session_header(method: Optional[str]) -> bool:
    """Whether a POST of ``method`` carries the session header."""
    return method in _SESSION_SCOPED_METHODS


def message_id_key(message_id: Any) -> Optional[str]:
    """A JSON-RPC id as a string key (``1`` and ``"1"`` alike); None for none."""
    return None if message_id is None else str(message_id)


def session_id_from_params(params: Any) -> Optional[str]:
    """The ``sessionId`` of a request's params, if any."""
    session_id = params.get("sessionId") if isinstance(params, dict) else None
    return session_id if isinstance(session_id, str) else None


def session_id_from_result(result: Any) -> Optional[str]:
    """The ``sessionId`` of a response's result, if any."""
    return session_id_from_params(result)


def session_id_from_message(message: dict[str, Any]) -> Optional[str]:
    """The ``sessionId`` of a request's params or a response's result."""
    return session_id_from_params(message.get("params")) or session_id_from_result(message.get("result"))
