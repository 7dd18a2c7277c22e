"""``acp.helpers``: the builders of the official package's 0.x line
(``text_block``, ``update_agent_message_text``, ``start_tool_call``, ...),
which 1.0 dropped, for programs written against it. An argument left as
None is left out of the model, so it is not sent as ``null``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence, Type, TypeVar, Union

from . import schema

if TYPE_CHECKING:
    from .schema import (
        AgentMessageChunk,
        AgentPlanUpdate,
        AgentThoughtChunk,
        AudioContentBlock,
        AvailableCommand,
        AvailableCommandsUpdate,
        BlobResourceContents,
        ContentToolCallContent,
        CurrentModeUpdate,
        EmbeddedResourceContentBlock,
        FileEditToolCallContent,
        ImageContentBlock,
        PlanEntry,
        PlanEntryPriority,
        PlanEntryStatus,
        ResourceContentBlock,
        SessionNotification,
        TerminalToolCallContent,
        TextContentBlock,
        TextResourceContents,
        ToolCallLocation,
        ToolCallProgress,
        ToolCallStart,
        ToolCallStatus,
        ToolKind,
        UserMessageChunk,
    )

__all__ = [
    "audio_block",
    "embedded_blob_resource",
    "embedded_text_resource",
    "image_block",
    "plan_entry",
    "resource_block",
    "resource_link_block",
    "session_notification",
    "start_edit_tool_call",
    "start_read_tool_call",
    "start_tool_call",
    "text_block",
    "tool_content",
    "tool_diff_content",
    "tool_terminal_ref",
    "update_agent_message",
    "update_agent_message_text",
    "update_agent_thought",
    "update_agent_thought_text",
    "update_available_commands",
    "update_current_mode",
    "update_plan",
    "update_tool_call",
    "update_user_message",
    "update_user_message_text",
]

if TYPE_CHECKING:
    ContentBlock = Union[
        TextContentBlock, ImageContentBlock, AudioContentBlock, ResourceContentBlock, EmbeddedResourceContentBlock
    ]
    ToolCallContentVariant = Union[ContentToolCallContent, FileEditToolCallContent, TerminalToolCallContent]


def _given(**fields: Any) -> dict[str, Any]:
    """The fields that were given (not None)."""
    return {name: value for name, value in fields.items() if value is not None}


def _listed(items: Optional[Iterable[Any]]) -> Optional[list[Any]]:
    return None if items is None else list(items)


def text_block(text: str) -> TextContentBlock:
    return schema.TextContentBlock(text=text)


def image_block(data: str, mime_type: str, *, uri: Optional[str] = None) -> ImageContentBlock:
    return schema.ImageContentBlock(**_given(data=data, mime_type=mime_type, uri=uri))


def audio_block(data: str, mime_type: str) -> AudioContentBlock:
    return schema.AudioContentBlock(data=data, mime_type=mime_type)


def resource_link_block(
    name: str,
    uri: str,
    *,
    mime_type: Optional[str] = None,
    size: Optional[int] = None,
    description: Optional[str] = None,
    title: Optional[str] = None,
) -> ResourceContentBlock:
    return schema.ResourceContentBlock(
        **_given(name=name, uri=uri, mime_type=mime_type, size=size, description=description, title=title)
    )


def embedded_text_resource(uri: str, text: str, *, mime_type: Optional[str] = None) -> TextResourceContents:
    return schema.TextResourceContents(**_given(uri=uri, text=text, mime_type=mime_type))


def embedded_blob_resource(uri: str, blob: str, *, mime_type: Optional[str] = None) -> BlobResourceContents:
    return schema.BlobResourceContents(**_given(uri=uri, blob=blob, mime_type=mime_type))


def resource_block(resource: Union[TextResourceContents, BlobResourceContents]) -> EmbeddedResourceContentBlock:
    return schema.EmbeddedResourceContentBlock(resource=resource)


def tool_content(block: ContentBlock) -> ContentToolCallContent:
    return schema.ContentToolCallContent(content=block)


def tool_diff_content(path: str, new_text: str, old_text: Optional[str] = None) -> FileEditToolCallContent:
    return schema.FileEditToolCallContent(**_given(path=path, new_text=new_text, old_text=old_text))


def tool_terminal_ref(terminal_id: str) -> TerminalToolCallContent:
    return schema.TerminalToolCallContent(terminal_id=terminal_id)


def plan_entry(content: str, *, priority: PlanEntryPriority = "medium", status: PlanEntryStatus = "pending") -> PlanEntry:
    return schema.PlanEntry(content=content, priority=priority, status=status)


def update_plan(entries: Iterable[PlanEntry]) -> AgentPlanUpdate:
    return schema.AgentPlanUpdate(entries=list(entries))


def update_user_message(content: ContentBlock) -> UserMessageChunk:
    return schema.UserMessageChunk(content=content)


def update_user_message_text(text: str) -> UserMessageChunk:
    return update_user_message(text_block(text))


def update_agent_message(content: ContentBlock) -> AgentMessageChunk:
    return schema.AgentMessageChunk(content=content)


def update_agent_message_text(text: str) -> AgentMessageChunk:
    return update_agent_message(text_block(text))


def update_agent_thought(content: ContentBlock) -> AgentThoughtChunk:
    return schema.AgentThoughtChunk(content=content)


def update_agent_thought_text(text: str) -> AgentThoughtChunk:
    return update_agent_thought(text_block(text))


def update_available_commands(commands: Iterable[AvailableCommand]) -> AvailableCommandsUpdate:
    return schema.AvailableCommandsUpdate(available_commands=list(commands))


def update_current_mode(current_mode_id: str) -> CurrentModeUpdate:
    return schema.CurrentModeUpdate(current_mode_id=current_mode_id)


def session_notification(session_id: str, update: Any) -> SessionNotification:
    return schema.SessionNotification(session_id=session_id, update=update)


def start_tool_call(
    tool_call_id: str,
    title: str,
    *,
    kind: Optional[ToolKind] = None,
    status: Optional[ToolCallStatus] = None,
    content: Optional[Sequence[ToolCallContentVariant]] = None,
    locations: Optional[Sequence[ToolCallLocation]] = None,
    raw_input: Any = None,
    raw_output: Any = None,
) -> ToolCallStart:
    return _tool_call(schema.ToolCallStart, tool_call_id, title, kind, status, content, locations, raw_input, raw_output)


def start_read_tool_call(
    tool_call_id: str,
    title: str,
    path: str,
    *,
    extra_options: Optional[Sequence[ToolCallContentVariant]] = None,
) -> ToolCallStart:
    return _start_on_file(tool_call_id, title, path, "read", {"path": path}, extra_options)


def start_edit_tool_call(
    tool_call_id: str,
    title: str,
    path: str,
    content: Any,
    *,
    extra_options: Optional[Sequence[ToolCallContentVariant]] = None,
) -> ToolCallStart:
    return _start_on_file(tool_call_id, title, path, "edit", {"path": path, "content": content}, extra_options)


def _start_on_file(tool_call_id: str, title: str, path: str, kind: ToolKind, raw_input: Any,
                   extra_options: Optional[Sequence[ToolCallContentVariant]]) -> ToolCallStart:
    """A pending tool call on the file at ``path``."""
    return start_tool_call(tool_call_id, title, kind=kind, status="pending", content=extra_options,
                           locations=[schema.ToolCallLocation(path=path)], raw_input=raw_input)


def update_tool_call(
    tool_call_id: str,
    *,
    title: Optional[str] = None,
    kind: Optional[ToolKind] = None,
    status: Optional[ToolCallStatus] = None,
    content: Optional[Sequence[ToolCallContentVariant]] = None,
    locations: Optional[Sequence[ToolCallLocation]] = None,
    raw_input: Any = None,
    raw_output: Any = None,
) -> ToolCallProgress:
    return _tool_call(schema.ToolCallProgress, tool_call_id, title, kind, status, content, locations, raw_input, raw_output)


_ToolCall = TypeVar("_ToolCall", "ToolCallStart", "ToolCallProgress")


def _tool_call(model: Type[_ToolCall], tool_call_id: str, title: Optional[str], kind: Optional[ToolKind],
               status: Optional[ToolCallStatus], content: Optional[Sequence[ToolCallContentVariant]],
               locations: Optional[Sequence[ToolCallLocation]], raw_input: Any, raw_output: Any) -> _ToolCall:
    """A tool call's start or progress, with the fields that were given."""
    return model(**_given(tool_call_id=tool_call_id, title=title, kind=kind, status=status, content=_listed(content),
                          locations=_listed(locations), raw_input=raw_input, raw_output=raw_output))
