"""``acp.experimental.v2``: ACP protocol version 2 (a draft; this API may change in
any release), the official SDK's v2 API on the engine: the ``Agent`` / ``Client``
protocols, their connections (the engine speaking v2 alone: it checks every
message both ways against v2's schema and refuses a peer's messages before
``initialize``), ``run_agent`` / ``connect_to_agent``, and the pydantic models of
v2's schema (:mod:`.schema`, the official names)."""

from . import schema
from .agent import AgentSideConnection, run_agent
from .client import ClientSideConnection, connect_to_agent
from .interfaces import Agent, Client
from .meta import PROTOCOL_VERSION

__all__ = [
    "PROTOCOL_VERSION",
    "Agent",
    "AgentSideConnection",
    "Client",
    "ClientSideConnection",
    "connect_to_agent",
    "run_agent",
    "schema",
]
