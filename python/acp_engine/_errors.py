"""RequestError: a JSON-RPC error, raised by calls to the peer and raised by
handlers to answer with that error (any other exception answers -32603)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from . import _native
from ._tables import Codes, Messages

#: The code of the error every pending and later call fails with once the
#: connection is closed (the engine's ``connection_closed``).
CONNECTION_CLOSED = Codes.CONNECTION_CLOSED


class RequestError(Exception):
    """A JSON-RPC error: ``code``, ``message`` and optional ``data``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        return f"RequestError({self.code}, {self.message!r}, {self.data!r})"

    def __str__(self) -> str:
        return f"{self.message} ({self.code})" if self.data is None else f"{self.message} ({self.code}): {self.data}"

    def to_error_obj(self) -> Dict[str, Any]:
        """The JSON-RPC error object (the official SDK's name): ``code``, ``message``, ``data``."""
        return {"code": self.code, "message": self.message, "data": self.data}

    # Standard JSON-RPC errors.
    @classmethod
    def parse_error(cls, data: Any = None, additional_message: Optional[str] = None) -> "RequestError":
        return cls(Codes.PARSE_ERROR, _message(Messages.PARSE_ERROR, additional_message), data)

    @classmethod
    def invalid_request(cls, data: Any = None, additional_message: Optional[str] = None) -> "RequestError":
        return cls(Codes.INVALID_REQUEST, _message(Messages.INVALID_REQUEST, additional_message), data)

    @classmethod
    def method_not_found(cls, method: str) -> "RequestError":
        return cls(Codes.METHOD_NOT_FOUND, Messages.METHOD_NOT_FOUND, {"method": method})

    @classmethod
    def invalid_params(cls, data: Any = None, additional_message: Optional[str] = None) -> "RequestError":
        return cls(Codes.INVALID_PARAMS, _message(Messages.INVALID_PARAMS, additional_message), data)

    @classmethod
    def internal_error(cls, data: Any = None, additional_message: Optional[str] = None) -> "RequestError":
        return cls(Codes.INTERNAL_ERROR, _message(Messages.INTERNAL_ERROR, additional_message), data)

    # ACP errors.
    @classmethod
    def auth_required(cls, data: Any = None, additional_message: Optional[str] = None) -> "RequestError":
        return cls(Codes.AUTH_REQUIRED, _message(Messages.AUTH_REQUIRED, additional_message), data)

    @classmethod
    def resource_not_found(cls, uri: Optional[str] = None) -> "RequestError":
        return cls(Codes.RESOURCE_NOT_FOUND, Messages.RESOURCE_NOT_FOUND, None if uri is None else {"uri": uri})

    @classmethod
    def request_cancelled(cls, data: Any = None, additional_message: Optional[str] = None) -> "RequestError":
        return cls(Codes.REQUEST_CANCELLED, _message(Messages.REQUEST_CANCELLED, additional_message), data)

    @classmethod
    def session_not_found(cls, session_id: str) -> "RequestError":
        """The session is unknown (-32002 with ``data.sessionId``)."""
        return cls(Codes.RESOURCE_NOT_FOUND, Messages.SESSION_NOT_FOUND, {"sessionId": session_id})

    @classmethod
    def unsupported_protocol_version(cls, requested: int, supported: List[int]) -> "RequestError":
        """``initialize`` asked for a protocol version this side does not speak (-32022)."""
        return cls(Codes.UNSUPPORTED_PROTOCOL_VERSION, Messages.UNSUPPORTED_PROTOCOL_VERSION, {"requested": requested, "supported": supported})

    def is_connection_closed(self) -> bool:
        """True for the error calls fail with once the connection closed."""
        return self.code == CONNECTION_CLOSED

    def to_error_response(self) -> Dict[str, Any]:
        """The JSON-RPC error object: ``{"code", "message", "data"?}``."""
        error: Dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def to_result(self) -> Dict[str, Any]:
        """The JSON-RPC result shape: ``{"error": {...}}``."""
        return {"error": self.to_error_response()}

    @classmethod
    def _from_object(cls, error: Dict[str, Any]) -> "RequestError":
        return cls(int(error.get("code", Codes.INTERNAL_ERROR)), str(error.get("message", "")), error.get("data"))

    @classmethod
    def _from_native(cls, error: _native.EngineError) -> "RequestError":
        code, message, data = error.args
        return cls(code, message, None if data is None else _native.loads(data))


def _message(base: str, additional: Optional[str]) -> str:
    return base if not additional else f"{base}: {additional}"
