"""TerminalHandle: a terminal the agent created on its client."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable

if TYPE_CHECKING:
    from typing import Protocol

    from .schema import KillTerminalResponse, TerminalOutputResponse, WaitForTerminalExitResponse

    class _Terminals(Protocol):
        """What a handle calls: the terminal methods of an agent's connection."""

        @property
        def is_closed(self) -> bool: ...
        def terminal_output(self, params: Any) -> Awaitable[TerminalOutputResponse]: ...
        def wait_for_terminal_exit(self, params: Any) -> Awaitable[WaitForTerminalExitResponse]: ...
        def kill_terminal(self, params: Any) -> Awaitable[KillTerminalResponse]: ...
        def release_terminal(self, params: Any) -> Awaitable[Any]: ...


class TerminalHandle:
    """Returned by ``AgentSideConnection.create_terminal``. Release it when
    done (``async with`` does): the client frees it and kills the command if
    it still runs. Releasing twice sends nothing the second time."""

    def __init__(self, terminal_id: str, session_id: str, client: "_Terminals") -> None:
        self.id = terminal_id
        self.session_id = session_id
        self._client = client
        self._released = False

    def _params(self) -> Any:
        return {"sessionId": self.session_id, "terminalId": self.id}

    async def current_output(self) -> TerminalOutputResponse:
        """The output so far and the exit status, if exited (``terminal_output``)."""
        return await self._client.terminal_output(self._params())

    async def wait_for_exit(self) -> WaitForTerminalExitResponse:
        """Wait until the command exits (``wait_for_terminal_exit``)."""
        return await self._client.wait_for_terminal_exit(self._params())

    async def kill(self) -> KillTerminalResponse:
        """Stop the command; the terminal stays until released (``kill_terminal``)."""
        return await self._client.kill_terminal(self._params())

    async def release(self) -> None:
        """Free the terminal, killing the command if it still runs
        (``release_terminal``; once)."""
        if self._released:
            return
        self._released = True
        await self._client.release_terminal(self._params())

    @property
    def released(self) -> bool:
        return self._released

    async def __aenter__(self) -> "TerminalHandle":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if not self._client.is_closed:
            await self.release()
