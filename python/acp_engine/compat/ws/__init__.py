"""``acp.ws``: the WebSocket transport (client: on the engine; server:
:func:`acp.ws.server.handle_websocket`, with the ``http`` extra)."""

from __future__ import annotations

from typing import Any

__all__ = ["create_websocket_stream"]


def __getattr__(name: str) -> Any:
    if name == "create_websocket_stream":
        from .client import create_websocket_stream

        return create_websocket_stream
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
