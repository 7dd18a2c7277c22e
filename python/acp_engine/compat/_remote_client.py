"""What ``acp.http.client`` and ``acp.ws.client`` share: the official remote
client transports as engine streams. The engine dials, frames, keeps the
connection's affinity cookies and bounds what it reads; give the stream to
``connect_to_agent`` (or a ``ClientSideConnection``)."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence
from urllib.parse import urlsplit

from .._native import NativeConnection
from .._transport import _Remote
from ._cookies import MemoryAcpCookieStore


class RemoteClientStream(_Remote):
    """A remote agent's stream. ``close()`` ends the connection made on it
    (the connection's own ``close()`` does too)."""

    _native: Optional[NativeConnection] = None

    def __init__(
        self,
        url: str,
        schemes: Sequence[str],
        headers: Optional[Mapping[str, str]],
        cookie_store: Optional[MemoryAcpCookieStore] = None,
    ) -> None:
        if urlsplit(url).scheme not in schemes:
            raise ValueError(f"{url}: expected a {' or '.join(schemes)} URL")
        sent: Dict[str, str] = dict(headers or {})
        # The store's cookies go with the first request; the engine keeps what
        # the server sets for the rest of the connection, its reconnects included.
        cookies = cookie_store.cookie_header() if cookie_store is not None else None
        if cookies and not any(name.lower() == "cookie" for name in sent):
            sent["Cookie"] = cookies
        super().__init__(url, None, None, None, sent)

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        self._native = super()._open(settings)
        return self._native

    async def close(self) -> None:
        if self._native is not None:
            self._native.close()
