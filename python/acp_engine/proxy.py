"""Proxies for ACP proxy chains (``editor -> conductor -> proxy ... -> agent``).

A proxy sits between its predecessor (toward the client) and its successor
(toward the agent), both reached through its one connection to the
conductor. The engine splits that connection in two
(``acp_engine::conductor::split``: ``proxy/initialize`` arrives as
``initialize``, the successor's messages are taken out of
``proxy/successor`` and put back in), so a proxy is two plain
:class:`~acp_engine.Connection` objects: one it serves as an agent, one it
talks to as a client.

Subclass :class:`Proxy` and override what you change; every method's
default passes the message on unchanged::

    class Logger(Proxy):
        async def client_request(self, method, params, successor):
            print("->", method, file=sys.stderr)
            return await successor.send_request(method, params)

    asyncio.run(run_proxy(Logger()))

Requests run concurrently; notifications one at a time in arrival order,
per direction (the engine's rules for a connection). Cancellation crosses
the proxy: a request the predecessor cancels cancels the request its
handler is awaiting on the successor.
"""

from __future__ import annotations

import asyncio
from typing import Any, Dict, Optional, Tuple

from ._connection import Connection
from ._native import NativeConnection, NativeProxyStreams
from ._transport import Stream

__all__ = ["Proxy", "proxy_streams", "run_proxy"]


class Proxy:
    """What a proxy does with the messages that cross it."""

    async def client_request(self, method: str, params: Any, successor: Connection) -> Any:
        """A request from the client side (``initialize`` included), on its way to the agent."""
        return await successor.send_request(method, params)

    async def client_notification(self, method: str, params: Any, successor: Connection) -> None:
        """A notification from the client side, on its way to the agent."""
        await successor.send_notification(method, params)

    async def agent_request(self, method: str, params: Any, predecessor: Connection) -> Any:
        """A request from the agent side (a permission request, a file read...), on its way to the client."""
        return await predecessor.send_request(method, params)

    async def agent_notification(self, method: str, params: Any, predecessor: Connection) -> None:
        """A notification from the agent side (``session/update``...), on its way to the client."""
        await predecessor.send_notification(method, params)


class _ProxyHalf(Stream):
    def __init__(self, streams: NativeProxyStreams, successor: bool) -> None:
        self._streams = streams
        self._successor = successor

    def _open(self, settings: Dict[str, Any]) -> NativeConnection:
        return self._streams.open(self._successor, settings)


def proxy_streams() -> Tuple[Stream, Stream]:
    """This process's stdio (its conductor's connection to it) as a proxy's
    two streams: ``(predecessor, successor)``. Each opens one connection."""
    streams = NativeProxyStreams.stdio()
    return _ProxyHalf(streams, False), _ProxyHalf(streams, True)


async def run_proxy(proxy: Proxy, streams: Optional[Tuple[Stream, Stream]] = None) -> str:
    """Serve ``proxy`` until the conductor closes its connection (or either
    side ends); returns the close reason."""
    toward_client, toward_agent = streams or proxy_streams()
    predecessor: Connection
    successor: Connection

    async def from_client(method: str, params: Any) -> Any:
        return await proxy.client_request(method, params, successor)

    async def client_notified(method: str, params: Any) -> None:
        await proxy.client_notification(method, params, successor)

    async def from_agent(method: str, params: Any) -> Any:
        return await proxy.agent_request(method, params, predecessor)

    async def agent_notified(method: str, params: Any) -> None:
        await proxy.agent_notification(method, params, predecessor)

    # Neither handler runs before both exist: the dispatchers start on the next loop turn.
    predecessor = Connection(toward_client, from_client, client_notified)
    successor = Connection(toward_agent, from_agent, agent_notified)
    done, _ = await asyncio.wait([predecessor.closed, successor.closed], return_when=asyncio.FIRST_COMPLETED)
    reason = next(iter(done)).result()
    predecessor.close()
    successor.close()
    await asyncio.gather(predecessor.closed, successor.closed, return_exceptions=True)
    return reason
