"""``acp.agent.connection``: the agent's connection to its client."""

from __future__ import annotations

from typing import Any, final

from ..._connection import Side
from .. import schema
from .._elicitation import request_of
from .._legacy import add_model_calls_for
from .._methods import AGENT_ROUTES, CLIENT_ROUTES
from .._peers import ClientMethods
from .._side import SideConnection
from ..connection import Connection, MethodHandler
from ..meta import CLIENT_METHODS

__all__ = ["AgentSideConnection"]


@final
@add_model_calls_for(CLIENT_ROUTES)
class AgentSideConnection(SideConnection, ClientMethods):
    """``AgentSideConnection(agent, writer, reader)``: serves ``agent`` (or
    ``to_agent(conn)``) and calls the client back with the methods below."""

    _side = Side.AGENT
    _routes = AGENT_ROUTES

    # The official parameter names (a keyword call names them).
    def __init__(
        self,
        to_agent: Any,
        input_stream: Any,
        output_stream: Any = None,
        listening: bool = True,
        *,
        use_unstable_protocol: bool = False,
        **connection_kwargs: Any,
    ) -> None:
        super().__init__(
            to_agent, input_stream, output_stream, listening, use_unstable_protocol=use_unstable_protocol,
            **connection_kwargs,
        )

    @classmethod
    def attach(
        cls, to_agent: Any, connection: Connection, *, use_unstable_protocol: bool = False
    ) -> tuple[Any, MethodHandler]:
        return super().attach(to_agent, connection, use_unstable_protocol=use_unstable_protocol)

    async def create_elicitation(self, message: str, mode: Any = None, **kwargs: Any) -> schema.CreateElicitationResponse:
        """Elicit input from the user: ``mode`` is the mode and its scope as one
        model (``ElicitationFormSessionMode``, ...), or the flat form's tag."""
        request = request_of(message, mode, kwargs)
        if request is None:  # the flat form: mode="form", session_id=..., ...
            if mode is not None:
                kwargs["mode"] = mode
            return await super().create_elicitation(message, **kwargs)
        result = await self._call(CLIENT_METHODS["elicitation_create"], request, "CreateElicitationResponse")
        return result  # type: ignore[no-any-return]
