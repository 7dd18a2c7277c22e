"""What one connection may hold for a peer that is not reading."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional


@dataclass(frozen=True)
class Limits:
    """Bounds on what a connection holds for a peer that stops reading.

    While the peer's requests in flight reach ``max_in_flight_requests`` or
    the output queued for it reaches ``max_buffered_bytes``, the engine reads
    nothing more (the peer's writes then wait: backpressure). With
    ``output_stall_timeout`` (seconds), a wait in which nothing is written
    and no request finishes for that long closes the connection. None: the
    engine's default (:class:`Defaults`; no timeout; the README's Limits
    section says more).
    """

    max_in_flight_requests: Optional[int] = None
    max_buffered_bytes: Optional[int] = None
    output_stall_timeout: Optional[float] = None

    def _settings(self) -> Dict[str, Any]:
        timeout = self.output_stall_timeout
        return {
            "max_in_flight_requests": self.max_in_flight_requests,
            "max_buffered_bytes": self.max_buffered_bytes,
            "output_stall_timeout_ms": None if timeout is None else max(0, round(timeout * 1000)),
        }
