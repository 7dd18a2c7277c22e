"""``acp.contrib.session_state``: client-side view of a session.

A :class:`SessionAccumulator` folds the ``session/update`` notifications a
client receives into a :class:`SessionSnapshot`: the merged tool calls, the
plan, the mode, the commands and the message streams, ready for a UI.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommand,
    AvailableCommandsUpdate,
    CurrentModeUpdate,
    PlanEntry,
    SessionNotification,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolKind,
    UserMessageChunk,
)
from .tool_calls import _copy_model_list, _copy_model_tuple

# The official module has no __all__; these are the names it defines publicly.
__all__ = [
    "SessionAccumulator",
    "SessionNotificationMismatchError",
    "SessionSnapshot",
    "SessionSnapshotUnavailableError",
    "ToolCallView",
]


class SessionNotificationMismatchError(ValueError):
    """A notification for another session, with auto-reset turned off."""

    def __init__(self, expected: str, actual: str) -> None:
        super().__init__(f"SessionAccumulator received notification for {actual}, expected {expected}")


class SessionSnapshotUnavailableError(RuntimeError):
    """A snapshot was asked for before any notification (no session yet)."""

    def __init__(self) -> None:
        super().__init__("SessionAccumulator has not processed any notifications yet")


class ToolCallView(BaseModel):
    """Read-only state of one tool call of the session."""

    model_config = ConfigDict(frozen=True)

    tool_call_id: str
    title: str | None
    kind: ToolKind | None
    status: ToolCallStatus | None
    content: tuple[Any, ...] | None
    locations: tuple[ToolCallLocation, ...] | None
    raw_input: Any
    raw_output: Any


class SessionSnapshot(BaseModel):
    """Read-only state of the session after the latest notification."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    tool_calls: dict[str, ToolCallView]
    plan_entries: tuple[PlanEntry, ...]
    current_mode_id: str | None
    available_commands: tuple[AvailableCommand, ...]
    user_messages: tuple[UserMessageChunk, ...]
    agent_messages: tuple[AgentMessageChunk, ...]
    agent_thoughts: tuple[AgentThoughtChunk, ...]


class _MutableToolCallState:
    """One tool call as merged so far."""

    def __init__(self, tool_call_id: str) -> None:
        self.tool_call_id = tool_call_id
        self.title: str | None = None
        self.kind: ToolKind | None = None
        self.status: ToolCallStatus | None = None
        self.content: list[Any] | None = None
        self.locations: list[ToolCallLocation] | None = None
        self.raw_input: Any = None
        self.raw_output: Any = None

    def apply_start(self, update: ToolCallStart) -> None:
        """A start describes the whole call: every field is replaced."""
        self.title = update.title
        self.kind = update.kind
        self.status = update.status
        self.content = _copy_model_list(update.content)
        self.locations = _copy_model_list(update.locations)
        self.raw_input = update.raw_input
        self.raw_output = update.raw_output

    def apply_progress(self, update: ToolCallProgress) -> None:
        """An update carries the changed fields only: ``None`` means unchanged."""
        if update.title is not None:
            self.title = update.title
        if update.kind is not None:
            self.kind = update.kind
        if update.status is not None:
            self.status = update.status
        if update.content is not None:
            self.content = _copy_model_list(update.content)
        if update.locations is not None:
            self.locations = _copy_model_list(update.locations)
        if update.raw_input is not None:
            self.raw_input = update.raw_input
        if update.raw_output is not None:
            self.raw_output = update.raw_output

    def snapshot(self) -> ToolCallView:
        return ToolCallView(
            tool_call_id=self.tool_call_id,
            title=self.title,
            kind=self.kind,
            status=self.status,
            content=_copy_model_tuple(self.content),
            locations=_copy_model_tuple(self.locations),
            raw_input=self.raw_input,
            raw_output=self.raw_output,
        )


def _copies(items: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(item.model_copy(deep=True) for item in items)


class SessionAccumulator:
    """Merges :class:`SessionNotification` objects into a :class:`SessionSnapshot`.

    Tool call updates are merged into the call's state (an update for a call
    never started creates it); the plan, mode and commands keep their latest
    value; user / agent message and thought chunks are kept in arrival order.
    A notification for another session starts over on that session, or, with
    ``auto_reset_on_session_change=False``, raises
    :class:`SessionNotificationMismatchError`. Other updates are ignored.

    Experimental, like all of ``contrib``.
    """

    def __init__(self, *, auto_reset_on_session_change: bool = True) -> None:
        self._auto_reset = auto_reset_on_session_change
        self.session_id: str | None = None
        self._tool_calls: dict[str, _MutableToolCallState] = {}
        self._plan_entries: list[PlanEntry] = []
        self._current_mode_id: str | None = None
        self._available_commands: list[AvailableCommand] = []
        self._user_messages: list[UserMessageChunk] = []
        self._agent_messages: list[AgentMessageChunk] = []
        self._agent_thoughts: list[AgentThoughtChunk] = []
        # Kept across reset(): subscribers follow the accumulator, not a session.
        self._subscribers: list[Callable[[SessionSnapshot, SessionNotification], None]] = []

    def reset(self) -> None:
        """Forget the session and everything accumulated for it."""
        self.session_id = None
        self._tool_calls.clear()
        self._plan_entries.clear()
        self._current_mode_id = None
        self._available_commands.clear()
        self._user_messages.clear()
        self._agent_messages.clear()
        self._agent_thoughts.clear()

    def subscribe(self, callback: Callable[[SessionSnapshot, SessionNotification], None]) -> Callable[[], None]:
        """Call ``callback(snapshot, notification)`` after each :meth:`apply`;
        returns a function that unsubscribes it (calling it twice is harmless)."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            with suppress(ValueError):
                self._subscribers.remove(callback)

        return unsubscribe

    def apply(self, notification: SessionNotification) -> SessionSnapshot:
        """Merge one notification and return the resulting snapshot."""
        self._ensure_session(notification.session_id)
        self._apply_update(notification.update)
        snapshot = self.snapshot()
        # A copy of the list: a callback may unsubscribe itself.
        for callback in list(self._subscribers):
            callback(snapshot, notification)
        return snapshot

    def snapshot(self) -> SessionSnapshot:
        """The current state, as copies the caller may keep."""
        if self.session_id is None:
            raise SessionSnapshotUnavailableError()
        return SessionSnapshot(
            session_id=self.session_id,
            tool_calls={call_id: state.snapshot() for call_id, state in self._tool_calls.items()},
            plan_entries=_copies(self._plan_entries),
            current_mode_id=self._current_mode_id,
            available_commands=_copies(self._available_commands),
            user_messages=_copies(self._user_messages),
            agent_messages=_copies(self._agent_messages),
            agent_thoughts=_copies(self._agent_thoughts),
        )

    def _ensure_session(self, session_id: str) -> None:
        if self.session_id is None or session_id == self.session_id:
            self.session_id = session_id
            return
        if not self._auto_reset:
            raise SessionNotificationMismatchError(self.session_id, session_id)
        self.reset()
        self.session_id = session_id

    def _tool_call(self, tool_call_id: str) -> _MutableToolCallState:
        state = self._tool_calls.get(tool_call_id)
        if state is None:
            state = self._tool_calls[tool_call_id] = _MutableToolCallState(tool_call_id)
        return state

    def _apply_update(self, update: Any) -> None:
        if isinstance(update, ToolCallStart):
            self._tool_call(update.tool_call_id).apply_start(update)
        elif isinstance(update, ToolCallProgress):
            self._tool_call(update.tool_call_id).apply_progress(update)
        elif isinstance(update, AgentPlanUpdate):
            self._plan_entries = _copy_model_list(update.entries) or []
        elif isinstance(update, CurrentModeUpdate):
            self._current_mode_id = update.current_mode_id
        elif isinstance(update, AvailableCommandsUpdate):
            self._available_commands = _copy_model_list(update.available_commands) or []
        elif isinstance(update, UserMessageChunk):
            self._user_messages.append(update.model_copy(deep=True))
        elif isinstance(update, AgentMessageChunk):
            self._agent_messages.append(update.model_copy(deep=True))
        elif isinstance(update, AgentThoughtChunk):
            self._agent_thoughts.append(update.model_copy(deep=True))
