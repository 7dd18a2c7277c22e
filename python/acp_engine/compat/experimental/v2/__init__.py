"""``acp.experimental.v2``: ACP protocol version 2 (a draft; this API may change in
any release). So far: the pydantic models of v2's schema (:mod:`.schema`, the
official names) and its method tables (:mod:`.meta`). The v2 ``Agent`` /
``Client`` protocols and connections are not here yet; the native
:mod:`acp_engine.experimental.v2` serves and calls v2 peers on the engine."""

from . import schema
from .meta import PROTOCOL_VERSION

__all__ = [
    "PROTOCOL_VERSION",
    "schema",
]
