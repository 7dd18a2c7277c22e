"""``acp.contrib.permissions``: asking the client to approve a tool call.

A :class:`PermissionBroker` builds the ``session/request_permission`` request
for a tool call (taken from a :class:`ToolCallTracker` or given) and hands it
to a requester, typically the connection's ``request_permission``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..schema import (
    ContentToolCallContent,
    PermissionOption,
    RequestPermissionRequest,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallUpdate,
)
from .tool_calls import ToolCallTracker, _copy_model_list

__all__ = ["PermissionBroker", "default_permission_options"]


class PermissionBrokerError(ValueError):
    """A permission request the broker cannot build."""


class MissingToolCallError(PermissionBrokerError):
    """No tool call given, and no tracker to look it up in."""

    def __init__(self) -> None:
        super().__init__("tool_call must be provided when no ToolCallTracker is configured")


class MissingPermissionOptionsError(PermissionBrokerError):
    """The request would offer no option (the protocol needs at least one)."""

    def __init__(self) -> None:
        super().__init__("PermissionBroker requires at least one permission option")


def default_permission_options() -> tuple[PermissionOption, PermissionOption, PermissionOption]:
    """Approve once, approve for the session, reject: fresh models on each call."""
    return (
        PermissionOption(option_id="approve", name="Approve", kind="allow_once"),
        PermissionOption(option_id="approve_for_session", name="Approve for session", kind="allow_always"),
        PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
    )


def _copy_options(options: Sequence[PermissionOption]) -> tuple[PermissionOption, ...]:
    return tuple(option.model_copy(deep=True) for option in options)


class PermissionBroker:
    """Issues permission requests for one session's tool calls."""

    def __init__(
        self,
        session_id: str,
        requester: Callable[[RequestPermissionRequest], Awaitable[RequestPermissionResponse]],
        *,
        tracker: ToolCallTracker | None = None,
        default_options: Sequence[PermissionOption] | None = None,
    ) -> None:
        self._session_id = session_id
        self._requester = requester
        self._tracker = tracker
        # Copied so later changes to the caller's models do not leak into requests.
        # An empty sequence is kept as given: request_for then refuses to send.
        self._default_options = _copy_options(
            default_permission_options() if default_options is None else default_options
        )

    async def request_for(
        self,
        external_id: str,
        *,
        description: str | None = None,
        options: Sequence[PermissionOption] | None = None,
        content: Sequence[Any] | None = None,
        tool_call: ToolCallUpdate | None = None,
    ) -> RequestPermissionResponse:
        """Ask the client to approve a tool call and return its answer.

        The tool call is ``tool_call`` if given, else the tracker's state for
        ``external_id``. ``content`` replaces the call's content; ``description``
        is appended to it as a text item. ``options`` (default: the broker's)
        must not be empty.
        """
        if tool_call is not None:
            call = tool_call.model_copy(deep=True)
        elif self._tracker is not None:
            call = self._tracker.tool_call_model(external_id)
        else:
            raise MissingToolCallError()

        if content is not None:
            call.content = _copy_model_list(content)
        if description:
            call.content = [
                *(call.content or []),
                ContentToolCallContent(content=TextContentBlock(text=description)),
            ]

        offered = _copy_options(self._default_options if options is None else options)
        if not offered:
            raise MissingPermissionOptionsError()

        request = RequestPermissionRequest(session_id=self._session_id, tool_call=call, options=list(offered))
        return await self._requester(request)
