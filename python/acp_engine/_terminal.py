"""TerminalHandle: a terminal the agent created on its client."""

from __future__ import annotations

from typing import Any, TYPE_CHECKING


if TYPE_CHECKING:
    from .schema import KillTerminalResponse, TerminalOutputResponse, WaitForTerminalExitResponse
    from ._connection import Connection


class TerminalHandle:
    """Returned by ``AgentSideConnection.create_terminal``. Release it when
    done (``async with`` does): the client frees it and kills the command if
    it still runs. Releasing twice sends nothing the second time."""

    def __init__(self, terminal_id: str, session_id: str, connection: "Connection") -> None:
        self.id = terminal_id
        self.session_id = session_id
        self._connection = connection
        self._released = False

    def _params(self) -> Any:
        return {"sessionId": self.session_id, "terminalId": self.id}

    async def current_output(self) -> TerminalOutputResponse:
        """``terminal/output``: the output so far and the exit status, if exited."""
        result: TerminalOutputResponse = await self._connection.send_request("terminal/output", self._params())
        return result

    async def wait_for_exit(self) -> WaitForTerminalExitResponse:
        """``terminal/wait_for_exit``."""
        result: WaitForTerminalExitResponse = await self._connection.send_request(
            "terminal/wait_for_exit", self._params()
        )
        return result

    async def kill(self) -> KillTerminalResponse:
        """``terminal/kill``: stop the command; the terminal stays until released."""
        result: KillTerminalResponse = await self._connection.send_request("terminal/kill", self._params())
        return result

    async def release(self) -> None:
        """``terminal/release`` (once)."""
        if self._released:
            return
        self._released = True
        await self._connection.send_request("terminal/release", self._params())

    @property
    def released(self) -> bool:
        return self._released

    async def __aenter__(self) -> "TerminalHandle":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if not self._connection.is_closed:
            await self.release()
