"""``acp.http.client``'s stream: the official Streamable HTTP client
transport as an engine stream. Given to ``connect_to_agent`` (or a
``ClientSideConnection``), the engine makes the requests, frames, keeps
the connection's affinity cookies and bounds what it reads; its
``send()`` / ``receive()`` move messages by hand over the same engine
client (the first use dials)."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence
from urllib.parse import urlsplit

from .._native import NativeConnection, NativeDial
from .._transport import _Remote
from ._dialled import DialledMessages, wait_for_dial


class RemoteClientStream(DialledMessages):
    """A remote agent's stream. ``close()`` ends the connection made on it
    (the connection's own ``close()`` does too)."""

    def __init__(self, url: str, schemes: Sequence[str], headers: Optional[Mapping[str, str]]) -> None:
        if urlsplit(url).scheme not in schemes:
            raise ValueError(f"{url}: expected a {' or '.join(schemes)} URL")
        super().__init__()
        self._remote = _Remote(url, None, None, None, headers)
        self._dial: Optional[NativeDial] = None

    def _open_untouched(self, settings: Dict[str, Any]) -> NativeConnection:
        return self._remote._open(settings)

    async def _dialled_socket(self) -> int:
        remote = self._remote
        self._dial = NativeDial.start(
            remote.url, None, None, None, remote.headers or None, remote.connect_timeout_ms
        )
        await wait_for_dial(self._dial)
        return self._dial.socket()

    def _close_untouched(self) -> None:
        if self._dial is not None:
            self._dial.close()
