"""acp_engine: the Agent Client Protocol for asyncio, on the acp-engine Rust
engine.

- :class:`Connection`: a JSON-RPC 2.0 peer (send_request, send_notification,
  send_cancel_request_notification, cancel_pending_request, closed).
- :class:`Agent` / :class:`Client`: handler base classes to subclass.
- :class:`AgentSideConnection` / :class:`ClientSideConnection`: typed ACP,
  every method of the peer; :class:`TerminalHandle`.
- :func:`run_agent`, :func:`spawn_agent`: one-call helpers.
- Streams: :func:`stdio_stream`, :func:`spawn_stream`, :func:`asyncio_stream`,
  :func:`fd_stream`.
- :class:`RequestError` with the JSON-RPC / ACP error factories.
- :mod:`acp_engine.schema`: TypedDicts for every ACP v1 type.
"""

from ._lazy import TYPE_CHECKING, lazy_attributes

if TYPE_CHECKING:
    from . import schema
    from ._connection import Connection, Side
    from ._errors import RequestError
    from ._generated.methods import Agent, AgentSideConnection, Client, ClientSideConnection
    from ._helpers import connect_agent, run_agent, spawn_agent
    from ._limits import Limits
    from ._native import __version__
    from ._server import AgentServer, serve_agent
    from ._tables import Defaults
    from ._terminal import TerminalHandle
    from ._transport import Stream, asyncio_stream, fd_stream, remote_stream, spawn_stream, stdio_stream

#: The ACP protocol version this package speaks.
PROTOCOL_VERSION = 1

# Where each name of the API lives, imported on its first use (see ._lazy): importing
# a submodule (``acp_engine.compat``, its ``import acp`` alias) does not import this API.
_WHERE = {
    "schema": ".schema",  # TypedDicts, for type checkers: most of the import time
    **dict.fromkeys(("Connection", "Side"), "._connection"),
    "RequestError": "._errors",
    **dict.fromkeys(("Agent", "AgentSideConnection", "Client", "ClientSideConnection"), "._generated.methods"),
    **dict.fromkeys(("connect_agent", "run_agent", "spawn_agent"), "._helpers"),
    "Limits": "._limits",
    "__version__": "._native",
    **dict.fromkeys(("AgentServer", "serve_agent"), "._server"),
    "Defaults": "._tables",
    "TerminalHandle": "._terminal",
    **dict.fromkeys(
        ("Stream", "asyncio_stream", "fd_stream", "remote_stream", "spawn_stream", "stdio_stream"), "._transport"
    ),
}
__getattr__, __dir__ = lazy_attributes(globals(), _WHERE)

__all__ = [
    "Agent",
    "AgentServer",
    "AgentSideConnection",
    "Client",
    "ClientSideConnection",
    "Connection",
    "Limits",
    "Defaults",
    "PROTOCOL_VERSION",
    "RequestError",
    "Side",
    "Stream",
    "TerminalHandle",
    "__version__",
    "asyncio_stream",
    "connect_agent",
    "fd_stream",
    "remote_stream",
    "run_agent",
    "schema",
    "serve_agent",
    "spawn_agent",
    "spawn_stream",
    "stdio_stream",
]
