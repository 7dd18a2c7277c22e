"""``acp.contrib``: the official SDK's experimental helpers, on acp-engine.

Unstable upstream and here alike: the names follow the official package's,
which may change them without notice. Import them explicitly from
``acp_engine.compat.contrib`` (or its modules) to opt in.
"""

from __future__ import annotations

from .permissions import PermissionBroker, default_permission_options
from .session_state import SessionAccumulator, SessionSnapshot, ToolCallView
from .tool_calls import ToolCallTracker, TrackedToolCallView

__all__ = [
    "PermissionBroker",
    "SessionAccumulator",
    "SessionSnapshot",
    "ToolCallTracker",
    "ToolCallView",
    "TrackedToolCallView",
    "default_permission_options",
]
