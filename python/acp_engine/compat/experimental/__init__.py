"""``acp.experimental``: the official SDK's experimental APIs, on the engine:
:mod:`.v2` (ACP protocol version 2) and :class:`AgentProtocolRouter` (one agent
for v1 and v2 clients)."""

from . import v2
from .negotiation import AgentProtocolConnection, AgentProtocolRouter

__all__ = [
    "AgentProtocolConnection",
    "AgentProtocolRouter",
    "v2",
]
