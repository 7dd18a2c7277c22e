"""``acp.experimental.v2.client``: a client's v2 connection to its agent."""

from __future__ import annotations

from typing import Any, Optional, final

from ...._connection import Side
from ..._methods import Route
from . import schema
from ._methods import CLIENT_ROUTES
from ._peers import AgentMethods
from ._router import MODELS
from ._side import V2SideConnection
from .meta import AGENT_METHODS

__all__ = ["ClientSideConnection", "connect_to_agent"]

# The tag a value selects when none is given (custom values name theirs).
_TAG_OF_VALUE = {bool: "boolean", str: "id"}


@final
class ClientSideConnection(V2SideConnection, AgentMethods):
    """``ClientSideConnection(client, transport)`` or ``(client, writer, reader)``:
    serves ``client`` in ACP v2 and calls the agent with the methods below."""

    _side = Side.CLIENT
    _routes: tuple[Route, ...] = CLIENT_ROUTES

    # The official parameter name (a keyword call names it).
    def __init__(self, client: object, input_stream: Any, output_stream: Any = None, **connection_kwargs: Any) -> None:
        super().__init__(client, input_stream, output_stream, **connection_kwargs)

    async def set_config_option(
        self, config_id: str, session_id: str, value: Any, *, type: Optional[str] = None, **kwargs: Any
    ) -> schema.SetSessionConfigOptionResponse:
        """Set a session config option: ``type`` is its value's kind (``"boolean"``
        or ``"id"`` follow from the value; a custom kind must be named)."""
        tag = type if type is not None else _TAG_OF_VALUE.get(value.__class__)
        if tag is None:
            raise ValueError("set_config_option needs type= for a value that is neither a bool nor a str")
        fields = {"config_id": config_id, "session_id": session_id, "type": tag, "value": value}
        if kwargs:
            fields["field_meta"] = kwargs
        request = MODELS.validator("SetSessionConfigOptionRequest")(fields)
        result = await self._call(AGENT_METHODS["session_set_config_option"], request, "SetSessionConfigOptionResponse")
        return result  # type: ignore[no-any-return]


def connect_to_agent(client: object, input_stream: Any, output_stream: Any = None, **connection_kwargs: Any) -> ClientSideConnection:
    """A v2 connection serving ``client`` to the agent on these streams (or transport)."""
    return ClientSideConnection(client, input_stream, output_stream, **connection_kwargs)
