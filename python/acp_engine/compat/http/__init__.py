"""``acp.http``: the Streamable HTTP transport. The client is the engine's;
the server (:class:`AcpServer`, :func:`acp.http.asgi.create_asgi_app`) needs
the ``http`` extra (``pip install acp-engine[http]``: starlette, httpx2)."""

from __future__ import annotations

from typing import Any

__all__ = ["AcpServer", "create_http_stream"]


def __getattr__(name: str) -> Any:
    if name == "create_http_stream":
        from .client import create_http_stream

        return create_http_stream
    if name == "AcpServer":
        from .server import AcpServer

        return AcpServer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
