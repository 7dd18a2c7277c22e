"""``acp.http.client``'s stream: the official Streamable HTTP client
transport as an engine stream. The engine makes the requests, frames, keeps
the connection's affinity cookies and bounds what it reads; give the stream
to ``connect_to_agent`` (or a ``ClientSideConnection``)."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence
from urllib.parse import urlsplit

from .._native import NativeConnection
from .._transport import _Remote


class RemoteClientStream(_Remote):
    """A remote agent's stream. ``close()`` ends the connection made on it
    (the connection's own ``close()`` does too)."""

    _native: Optional[NativeConnection] = None

    def __init__(self, url: str, schemes: Sequence[str], headers: Optional[Mapping[str, str]]) -> None:
        if urlsplit(url).scheme not in schemes:
            raise ValueError(f"{url}: expected a {' or '.join(schemes)} URL")
        super().__init__(url, None, None, None, headers)

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        self._native = super()._open(settings)
        return self._native

    async def close(self) -> None:
        if self._native is not None:
            self._native.close()
