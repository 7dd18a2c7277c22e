"""``acp.http.client``: the official Streamable HTTP client transport,
driven by the engine."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from .._remote_client import RemoteClientStream

__all__ = ["AcpHttpStatusError", "create_http_stream"]


class AcpHttpStatusError(RuntimeError):
    """The official client's error for an HTTP status it cannot go on from.
    On the engine such a failure ends the connection with the status in
    the reason (a ``RequestError`` for what is pending)."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(f"HTTP {status_code}: {message}")
        self.status_code = status_code


def create_http_stream(
    url: str,
    *,
    client: Any = None,
    headers: Optional[Mapping[str, str]] = None,
) -> RemoteClientStream:
    """A Streamable HTTP (``http://``, ``https://``) client stream for
    :func:`acp.connect_to_agent`. ``headers`` go with every request. The
    engine makes the requests itself, so an ``httpx2`` ``client`` cannot be
    given."""
    if client is not None:
        raise TypeError("acp_engine.compat: the engine makes the HTTP requests; create_http_stream takes no client")
    return RemoteClientStream(url, ("http", "https"), headers)
