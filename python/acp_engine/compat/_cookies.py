"""``acp._cookies``: the official WebSocket client's affinity cookie store
(``name=value`` pairs only, attributes ignored, as the official one)."""

from __future__ import annotations

from typing import Dict, List, Optional

__all__ = ["MemoryAcpCookieStore"]


class MemoryAcpCookieStore:
    """A tiny name-to-value cookie store keyed by cookie name."""

    def __init__(self) -> None:
        self._cookies: Dict[str, str] = {}

    def store_set_cookie(self, header_value: str) -> None:
        """Keep the leading ``name=value`` pair of one ``Set-Cookie`` value."""
        name, separator, value = header_value.split(";", 1)[0].strip().partition("=")
        if separator and name.strip():
            self._cookies[name.strip()] = value.strip()

    def store_set_cookies(self, header_values: List[str]) -> None:
        """Keep several ``Set-Cookie`` values."""
        for value in header_values:
            self.store_set_cookie(value)

    def cookie_header(self) -> Optional[str]:
        """The stored cookies as a ``Cookie`` request header value."""
        if not self._cookies:
            return None
        return "; ".join(f"{name}={value}" for name, value in self._cookies.items())

    def clear(self) -> None:
        """Drop every stored cookie."""
        self._cookies.clear()

    def __len__(self) -> int:
        return len(self._cookies)
