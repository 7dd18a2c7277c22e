"""``acp.exceptions``: the JSON-RPC error, the engine's own (one class for both APIs)."""

from .._errors import RequestError

__all__ = ["RequestError"]
