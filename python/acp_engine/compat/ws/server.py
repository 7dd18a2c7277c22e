"""``acp.ws.server``: an agent on a Starlette WebSocket, run by the engine
over its frames (one message per text frame). Needs the ``http`` extra."""

from __future__ import annotations

import contextlib
import logging
import uuid
from typing import Any

from ..._transport import FedStream
from .._serving import ServedAgent, connection_for
from ..http.protocol import CONNECTION_ID_HEADER

__all__ = ["handle_websocket"]


class _WebSocketFrames(FedStream):
    """Text frames in, one per line for the engine; its lines out, a frame each."""

    def __init__(self, websocket: Any) -> None:
        self._ws = websocket
        self._warned_binary = False

    async def _copy_in(self) -> None:
        while True:
            event = await self._ws.receive()
            if event["type"] == "websocket.disconnect":
                return
            text = event.get("text")
            if text is None:
                if event.get("bytes") is not None and not self._warned_binary:
                    self._warned_binary = True
                    logging.warning("Ignoring binary WebSocket frame; ACP messages must be sent as text frames")
                continue
            # A frame is one message; the engine's framing needs it on one line.
            line = text.replace("\r", " ").replace("\n", " ") + "\n"
            if not await self._feed(line.encode()):
                return

    async def _copy_out(self) -> None:
        try:
            async for line in self._engine_lines():
                await self._ws.send_text(line.decode())
        except RuntimeError:
            self._output_failed()  # the WebSocket went away
        finally:
            with contextlib.suppress(Exception):
                await self._ws.close()


async def handle_websocket(agent_factory: ServedAgent, websocket: Any) -> None:
    """Run one agent (``agent_factory(connection)``, or an AgentProtocolRouter's
    for the client's version) for the life of the socket; a disconnect ends its
    connection."""
    await websocket.accept(headers=[(CONNECTION_ID_HEADER.lower().encode(), uuid.uuid4().hex.encode())])
    connection = connection_for(agent_factory, _WebSocketFrames(websocket))
    try:
        await connection.listen()
    finally:
        await connection.close()
