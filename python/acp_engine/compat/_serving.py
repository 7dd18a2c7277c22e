"""What a server makes for each client it accepts: an agent's connection from
an agent factory (v1), or an :class:`AgentProtocolRouter`'s (the client's
version, selected at ``initialize``)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable, Union

from .agent.connection import AgentSideConnection

if TYPE_CHECKING:  # not imported at run time: v2's models take a while to load
    from .experimental.negotiation import AgentProtocolRouter

AgentFactory = Callable[[AgentSideConnection], Any]
#: What a server takes: ``agent_factory(connection) -> agent``, or a router.
ServedAgent = Union[AgentFactory, "AgentProtocolRouter"]

_NEGOTIATION = f"{__package__}.experimental.negotiation"


def _is_router(agent: Any) -> bool:
    # A router exists only once its module was imported.
    module = sys.modules.get(_NEGOTIATION)
    return module is not None and isinstance(agent, module.AgentProtocolRouter)


def check_served(agent: Any) -> None:
    if not _is_router(agent) and not callable(agent):
        raise TypeError("takes an agent factory (agent_factory(connection) -> agent) or an AgentProtocolRouter")


def connection_for(agent: ServedAgent, stream: Any) -> Any:
    """The connection serving one client on ``stream`` (``listen()``, ``close()``)."""
    if _is_router(agent):
        return agent.connect(stream)  # type: ignore[union-attr]
    return AgentSideConnection(agent, stream)
