"""Limits against a peer that stops reading (reliability/flood_peer.py):
the connection stops reading at its configured bounds, every answer arrives
once the peer reads, and the stall timeout closes a connection whose peer
never reads."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any, Dict, List

from conftest import run_async

from acp_engine import Connection, Limits, spawn_stream

FLOOD_PEER = os.path.join(os.path.dirname(__file__), "..", "..", "reliability", "flood_peer.py")
PADDING = "x" * 1024


async def answer(method: str, params: Any) -> Dict[str, str]:
    return {"padding": PADDING}


@run_async
async def test_a_peer_that_stops_reading_is_held_at_the_limits_and_gets_every_answer() -> None:
    reports: List[Any] = []
    reported = asyncio.Event()

    def on_notification(method: str, params: Any) -> None:
        reports.append(params)
        reported.set()

    count = 200_000
    connection = Connection(
        spawn_stream(sys.executable, FLOOD_PEER, str(count), "--read"),
        answer,
        on_notification,
        limits=Limits(max_in_flight_requests=64, max_buffered_bytes=256 * 1024),
    )
    await asyncio.wait_for(reported.wait(), 120)
    report = reports[0]
    assert report["stalled"], report
    assert report["sent"] < count, report
    assert report["answered"] == report["sent"], report
    assert report["duplicates"] == 0, report
    assert not connection.is_closed
    await connection.aclose()


@run_async
async def test_the_stall_timeout_closes_a_connection_whose_peer_never_reads() -> None:
    connection = Connection(
        spawn_stream(sys.executable, FLOOD_PEER, "100000"),
        answer,
        limits=Limits(max_buffered_bytes=64 * 1024, output_stall_timeout=0.3),
    )
    ours = asyncio.ensure_future(connection.send_request("flood/never", {}))
    reason = await asyncio.wait_for(connection.closed, 30)
    assert "output stalled" in reason and "max_buffered_bytes" in reason, reason
    error = await asyncio.wait_for(asyncio.gather(ours, return_exceptions=True), 5)
    assert getattr(error[0], "is_connection_closed", lambda: False)(), error
