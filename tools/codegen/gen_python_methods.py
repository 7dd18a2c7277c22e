"""The Python method table: ``_generated/methods.py`` of ``acp_engine`` (stable) and of
``acp_engine.unstable``, from the schema's ``x-method`` / ``x-side`` (via the IR of
``acp_schema``).  Used by ``gen_python.py``, which writes and checks the files.

Each module holds:

* ``Agent`` and ``Client``: the handler base classes users subclass.  The protocol's
  baseline methods are abstract (a subclass that lacks one cannot be instantiated);
  every other request answers -32601 until overridden, notifications are ignored.
* ``_ClientMethods`` / ``_AgentMethods``: the peer methods of ``AgentSideConnection``
  (the client's methods) and ``ClientSideConnection`` (the agent's), as mixins over
  ``_request`` / ``_notify`` / ``_terminal``, which the connections provide.
* ``AGENT_HANDLERS`` / ``CLIENT_HANDLERS`` (wire method -> handler method name) and
  ``AGENT_NOTIFICATIONS`` / ``CLIENT_NOTIFICATIONS`` (the notifications among them).
* ``AgentSideConnection`` / ``ClientSideConnection``: the public classes, the peer
  methods over the hand-written bases of ``_typed.py``.
"""

from __future__ import annotations

import json
import textwrap

import acp_schema as ir
from text import baseline_list, docstring

# Peer requests whose result the connection wraps in a handle.
HANDLE_RESULTS = {"CreateTerminalResponse": ("TerminalHandle", "_terminal")}

SIDE_DOCS = {
    "agent": "What an agent implements: subclass it. {baseline} are abstract (the protocol's "
    "baseline: a subclass must implement them); every other request method answers -32601 "
    "(method not found) until overridden, and other notifications are ignored. Params that do "
    "not fit the schema never reach these methods (the client gets -32602). Requests run "
    "concurrently, each in its own task; notifications in arrival order, one at a time.",
    "client": "What a client implements: subclass it and advertise only what you override in "
    "your capabilities. {baseline} are abstract (the protocol's baseline); every other request "
    "method answers -32601 until overridden, and other notifications are ignored. Notifications "
    "(``session_update`` among them) are handled one at a time, in arrival order.",
}
CLASS_DOCS = {
    "agent": "An agent's connection to its client: ``AgentSideConnection(lambda conn: MyAgent(conn), "
    "stdio_stream())``. The agent gets this connection to call its client back.",
    "client": "A client's connection to its agent: ``ClientSideConnection(lambda agent: MyClient(), "
    "spawn_stream(\"my-agent\"))``. Its ``cancel`` also answers the session's open permission requests "
    "``cancelled`` (the engine does, as the protocol requires) and cancels their handlers.",
}
PEER_DOCS = {
    "client": "The client's methods, as an agent calls them (``AgentSideConnection``).",
    "agent": "The agent's methods, as a client calls them (``ClientSideConnection``).",
}


def generate(schema: ir.Schema, schema_rel: str, generator: str, package_prefix: str,
             protocol_versions: Optional[tuple[int, ...]] = None) -> str:
    """``package_prefix``: how the module reaches the package root (``.`` or ``..``);
    ``protocol_versions``: the ACP versions the connections speak, if not v1 alone."""
    used_types: set[str] = set()
    body: list[str] = []

    def t(name: str) -> str:
        used_types.add(name)
        return name

    for side, peer in (("agent", "client"), ("client", "agent")):
        cls = side.capitalize()
        handled = [m for m in schema.methods if m.side == side]
        baseline = baseline_list(handled, lambda m: f"`{m.snake}`")
        body += ["", "", f"class {cls}(metaclass=ABCMeta):"]
        body += docstring(textwrap.fill(SIDE_DOCS[side].format(baseline=baseline), 88), "    ")
        for m in handled:
            body.append("")
            if m.baseline:
                body.append("    @abstractmethod")
            result = "None" if m.notification else t(m.result)
            body.append(f"    async def {m.snake}(self, params: {t(m.params)}) -> {result}:")
            kind = "notification" if m.notification else "request"
            tail = "" if m.baseline else (
                "; ignored until overridden." if m.notification else "; until overridden, -32601."
            )
            body += docstring(f"{m.doc}\n\nHandles the ``{m.name}`` {kind}{tail}".strip(), "        ")
            if m.baseline:
                continue
            if m.notification:
                body.append("        return None")
            else:
                body.append(f"        raise RequestError.method_not_found({json.dumps(m.name)})")
        body += [
            "",
            "    async def ext_method(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:",
            '        """An extension request (a method starting with ``_``); until overridden, -32601."""',
            "        raise RequestError.method_not_found(method)",
            "",
            "    async def ext_notification(self, method: str, params: Dict[str, Any]) -> None:",
            '        """An extension notification (a method starting with ``_``); ignored until overridden."""',
            "        return None",
        ]
        body += ["", "", f"{side.upper()}_HANDLERS: Dict[str, str] = {{"]
        body += [f"    {json.dumps(m.name)}: {json.dumps(m.snake)}," for m in handled]
        body += ["}", f'"""Each {side} method (wire name) and the ``{cls}`` method that handles it."""']
        notifications = ", ".join(json.dumps(m.name) for m in handled if m.notification)
        body += [
            f"{side.upper()}_NOTIFICATIONS: FrozenSet[str] = frozenset({{{notifications}}})",
            f'"""The notifications among ``{side.upper()}_HANDLERS``."""',
        ]

    for peer, mixin in (("client", "_ClientMethods"), ("agent", "_AgentMethods")):
        called = [m for m in schema.methods if m.side == peer]
        body += ["", "", f"class {mixin}:"]
        body += docstring(PEER_DOCS[peer], "    ")
        body += [
            "",
            "    def _request(self, method: str, params: Any) -> Awaitable[Any]:",
            "        raise NotImplementedError",
            "",
            "    def _notify(self, method: str, params: Any) -> Awaitable[None]:",
            "        raise NotImplementedError",
        ]
        if any(m.result in HANDLE_RESULTS for m in called):
            body += [
                "",
                "    def _terminal(self, method: str, params: Any) -> Awaitable[TerminalHandle]:",
                "        raise NotImplementedError",
            ]
        for m in called:
            body.append("")
            kind = "notification" if m.notification else "request"
            if m.notification:
                body.append(f"    def {m.snake}(self, params: {t(m.params)}) -> Awaitable[None]:")
                call = f"self._notify({json.dumps(m.name)}, params)"
            elif m.result in HANDLE_RESULTS:
                handle, wrapper = HANDLE_RESULTS[m.result]
                body.append(f"    def {m.snake}(self, params: {t(m.params)}) -> Awaitable[{handle}]:")
                call = f"self.{wrapper}({json.dumps(m.name)}, params)"
            else:
                body.append(f"    def {m.snake}(self, params: {t(m.params)}) -> Awaitable[{t(m.result)}]:")
                call = f"self._request({json.dumps(m.name)}, params)"
            body += docstring(f"{m.doc}\n\nSends the ``{m.name}`` {kind}.".strip(), "        ")
            body.append(f"        return {call}")

    unstable = "True" if schema.stable is not None else "False"
    for side, peer_mixin, base, factory in (
        ("agent", "_ClientMethods", "_AgentSide", "to_agent"),
        ("client", "_AgentMethods", "_ClientSide", "to_client"),
    ):
        cls = f"{side.capitalize()}SideConnection"
        handler = side.capitalize()
        body += ["", "", f"class {cls}({base}, {peer_mixin}):"]
        body += docstring(textwrap.fill(CLASS_DOCS[side], 88), "    ")
        body += [
            "",
            f"    _handlers = {side.upper()}_HANDLERS",
            f"    _notifications = {side.upper()}_NOTIFICATIONS",
            f"    _unstable = {unstable}",
            *([f"    _protocol_versions = {protocol_versions!r}"] if protocol_versions else []),
            f"    {side}: {handler}",
            "",
            "    if TYPE_CHECKING:",
            "",
            "        def __init__(",
            "            self,",
            f"            {factory}: Callable[[{cls}], {handler}],",
            "            stream: Stream,",
            "            *,",
            "            max_message_size: Optional[int] = None,",
            "            limits: Optional[Limits] = None,",
            "            unchecked_methods: Sequence[str] = (),",
            "        ) -> None: ...",
        ]

    header = [
        '"""The ACP method table: the ``Agent`` and ``Client`` handler base classes, the peer',
        "methods of the typed connections, and the table from each wire method to its handler.",
        "",
        f"Generated by {generator} from {schema_rel}.",
        "Do not edit: change the schema or the generator, then run `make codegen`.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from abc import ABCMeta, abstractmethod",
        "from typing import TYPE_CHECKING, Any, Awaitable, Callable, Dict, FrozenSet, Optional, Sequence",
        "",
        f"from {package_prefix}_errors import RequestError",
        f"from {package_prefix}_typed import _AgentSide, _ClientSide",
        "",
        "if TYPE_CHECKING:  # the schema module is for type checkers: not imported at run time",
        f"    from {package_prefix}_limits import Limits",
        *([f"    from {package_prefix}_terminal import TerminalHandle"]
          if any(m.result in HANDLE_RESULTS for m in schema.methods) else []),
        f"    from {package_prefix}_transport import Stream",
        "    from ..schema import (",
        *[f"        {name}," for name in sorted(used_types)],
        "    )",
    ]
    return "\n".join(header + body) + "\n"
