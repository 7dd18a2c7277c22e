"""``acp.contrib.tool_calls``: agent-side bookkeeping for tool calls.

A :class:`ToolCallTracker` maps the agent's own ids for tool invocations to
ACP tool call ids and turns each change into the ``tool_call`` /
``tool_call_update`` message to send, remembering the merged state.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..schema import (
    ContentToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolCallUpdate,
    ToolKind,
)

__all__ = ["UNSET", "ToolCallTracker", "TrackedToolCallView"]


class _MissingToolCallTitleError(ValueError):
    """A ``ToolCallStart`` was asked for while the call has no title (the
    protocol requires one)."""

    def __init__(self) -> None:
        super().__init__("title must be set before sending a ToolCallStart")


class _UnknownToolCallError(KeyError):
    """The external id names no tracked tool call."""

    def __init__(self, external_id: str) -> None:
        self.external_id = external_id
        super().__init__(external_id)

    def __str__(self) -> str:
        # KeyError would print the repr of the key alone.
        return f"Unknown tool call id: {self.external_id}"


class _Unset:
    """Type of :data:`UNSET`: "argument not given", which differs from ``None``
    (``None`` clears the field in the update)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset()


def _copy_model_list(items: Sequence[Any] | None) -> list[Any] | None:
    """Deep copies of the models, so callers never share state with the tracker."""
    return None if items is None else [item.model_copy(deep=True) for item in items]


def _copy_model_tuple(items: Sequence[Any] | None) -> tuple[Any, ...] | None:
    # Views read an empty collection as "none".
    return tuple(item.model_copy(deep=True) for item in items) if items else None


class TrackedToolCallView(BaseModel):
    """Read-only snapshot of one tracked tool call."""

    model_config = ConfigDict(frozen=True)

    tool_call_id: str
    title: str | None
    name: str | None
    kind: ToolKind | None
    status: ToolCallStatus | None
    content: tuple[Any, ...] | None
    locations: tuple[ToolCallLocation, ...] | None
    raw_input: Any
    raw_output: Any


# Fields holding model lists: copied on the way in and out.
_LIST_FIELDS = frozenset({"content", "locations"})


class _TrackedToolCall:
    """The mutable state of one tool call."""

    def __init__(
        self,
        *,
        tool_call_id: str,
        title: str | None = None,
        name: str | None = None,
        kind: ToolKind | None = None,
        status: ToolCallStatus | None = None,
        content: Sequence[Any] | None = None,
        locations: Sequence[ToolCallLocation] | None = None,
        raw_input: Any = None,
        raw_output: Any = None,
    ) -> None:
        self.tool_call_id = tool_call_id
        self.title = title
        self.name = name
        self.kind = kind
        self.status = status
        self.content = _copy_model_list(content)
        self.locations: list[ToolCallLocation] | None = _copy_model_list(locations)
        self.raw_input = raw_input
        self.raw_output = raw_output
        self._stream_buffer: str | None = None

    def _fields(self, copy: Callable[[Sequence[Any] | None], Any] = _copy_model_list) -> dict[str, Any]:
        """The current fields, the collections deep-copied by ``copy``."""
        return {
            "tool_call_id": self.tool_call_id,
            "title": self.title,
            "name": self.name,
            "kind": self.kind,
            "status": self.status,
            "content": copy(self.content),
            "locations": copy(self.locations),
            "raw_input": self.raw_input,
            "raw_output": self.raw_output,
        }

    def to_view(self) -> TrackedToolCallView:
        return TrackedToolCallView(**self._fields(_copy_model_tuple))

    def to_tool_call_model(self) -> ToolCallUpdate:
        return ToolCallUpdate(**self._fields())

    def to_start_model(self) -> ToolCallStart:
        if self.title is None:
            raise _MissingToolCallTitleError()
        return ToolCallStart(session_update="tool_call", **self._fields())

    def update(
        self,
        *,
        title: Any = UNSET,
        name: Any = UNSET,
        kind: Any = UNSET,
        status: Any = UNSET,
        content: Any = UNSET,
        locations: Any = UNSET,
        raw_input: Any = UNSET,
        raw_output: Any = UNSET,
    ) -> ToolCallProgress:
        """Merge the given fields and return an update carrying just those."""
        given = {
            "title": title,
            "name": name,
            "kind": kind,
            "status": status,
            "content": content,
            "locations": locations,
            "raw_input": raw_input,
            "raw_output": raw_output,
        }
        changed: dict[str, Any] = {}
        for field, value in given.items():
            if value is UNSET:
                continue
            if field in _LIST_FIELDS:
                # One copy kept, another sent: the message must not alias our state.
                setattr(self, field, _copy_model_list(value))
                changed[field] = _copy_model_list(value)
            else:
                setattr(self, field, value)
                changed[field] = value
        return ToolCallProgress(session_update="tool_call_update", tool_call_id=self.tool_call_id, **changed)

    def append_stream_text(self, text: str, *, title: Any = UNSET, status: Any = UNSET) -> ToolCallProgress:
        """Grow the streamed text and send it whole, as the call's only content."""
        self._stream_buffer = (self._stream_buffer or "") + text
        content = [ContentToolCallContent(content=TextContentBlock(text=self._stream_buffer))]
        return self.update(title=title, status=status, content=content)


def _new_id() -> str:
    return uuid.uuid4().hex


class ToolCallTracker:
    """Generates ACP tool call messages for the tool calls an agent runs,
    keyed by the agent's own (external) ids."""

    def __init__(self, *, id_factory: Callable[[], str] | None = None) -> None:
        self._id_factory = id_factory or _new_id
        self._calls: dict[str, _TrackedToolCall] = {}

    def start(
        self,
        external_id: str,
        *,
        title: str,
        name: str | None = None,
        kind: ToolKind | None = None,
        status: ToolCallStatus | None = "in_progress",
        content: Sequence[Any] | None = None,
        locations: Sequence[ToolCallLocation] | None = None,
        raw_input: Any = None,
        raw_output: Any = None,
    ) -> ToolCallStart:
        """Track a new tool call (under a fresh ACP id) and return its ``tool_call``
        notification. Starting an external id again replaces its previous call."""
        call = _TrackedToolCall(
            tool_call_id=self._id_factory(),
            title=title,
            name=name,
            kind=kind,
            status=status,
            content=content,
            locations=locations,
            raw_input=raw_input,
            raw_output=raw_output,
        )
        self._calls[external_id] = call
        return call.to_start_model()

    def progress(
        self,
        external_id: str,
        *,
        title: Any = UNSET,
        name: Any = UNSET,
        kind: Any = UNSET,
        status: Any = UNSET,
        content: Any = UNSET,
        locations: Any = UNSET,
        raw_input: Any = UNSET,
        raw_output: Any = UNSET,
    ) -> ToolCallProgress:
        """Merge the given fields into the call and return the ``tool_call_update``
        carrying them (fields left out stay as they are)."""
        return self._require_call(external_id).update(
            title=title,
            name=name,
            kind=kind,
            status=status,
            content=content,
            locations=locations,
            raw_input=raw_input,
            raw_output=raw_output,
        )

    def append_stream_text(
        self,
        external_id: str,
        text: str,
        *,
        title: Any = UNSET,
        status: Any = UNSET,
    ) -> ToolCallProgress:
        """Append streamed text to the call's content and return the update."""
        return self._require_call(external_id).append_stream_text(text, title=title, status=status)

    def forget(self, external_id: str) -> None:
        """Stop tracking a call (an unknown id is not an error)."""
        self._calls.pop(external_id, None)

    def view(self, external_id: str) -> TrackedToolCallView:
        """A read-only snapshot of the call's current state."""
        return self._require_call(external_id).to_view()

    def tool_call_model(self, external_id: str) -> ToolCallUpdate:
        """The call's full state as a ``ToolCallUpdate`` (a copy), as a permission
        request carries it."""
        return self._require_call(external_id).to_tool_call_model()

    def _require_call(self, external_id: str) -> _TrackedToolCall:
        try:
            return self._calls[external_id]
        except KeyError:
            raise _UnknownToolCallError(external_id) from None
