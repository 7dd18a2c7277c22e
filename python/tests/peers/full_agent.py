"""A test agent implementing every Agent method. Each request method echoes
its method name and params; the prompt text picks a behaviour:

- ``call client``: call every client method once and report the results
- ``burst N``: send N numbered agent_message_chunk updates, then end the turn
- ``hang``: wait forever (until the request is cancelled); ``_test/notes``
  lists the hanging handlers under ``started`` (a test cancels once it runs)
- ``boom``: raise a plain exception (answers -32603)
- ``refuse``: raise RequestError(-32042, "refused", {"why": "test"})
- ``terminal``: create a terminal inside ``async with`` and leave the block
- ``news``: send the updates of the current schema (``NEWS``), unknown fields included
"""

import asyncio
import os
import sys
from typing import Any, Dict, List

from acp_engine import Agent, AgentSideConnection, RequestError, run_agent

CANCELLED: List[str] = []
STARTED: List[str] = []

#: Session updates new in schema 2.4.0 (stable), each with a field no schema knows.
NEWS: List[Dict[str, Any]] = [
    {"sessionUpdate": "notice", "severity": "warning", "title": "Rate limited", "description": "retrying", "x-future": 1},
    {"sessionUpdate": "compaction_update", "compactionId": "c-1", "status": "in_progress", "x-future": [2]},
    {
        "sessionUpdate": "compaction_summary_chunk",
        "compactionId": "c-1",
        "content": {"type": "text", "text": "summary so far"},
        "x-future": {"three": 3},
    },
    {"sessionUpdate": "compaction_update", "compactionId": "c-1", "status": "completed", "summary": None},
]


class FullAgent(Agent):
    def __init__(self, client: AgentSideConnection) -> None:
        self.client = client
        self.notes: List[Any] = []

    def echo(self, method: str, params: Any) -> Dict[str, Any]:
        return {"_meta": {"method": method, "params": params}}

    async def initialize(self, params):  # type: ignore[no-untyped-def]
        return {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}, "_meta": {"params": params}}

    async def authenticate(self, params):  # type: ignore[no-untyped-def]
        return self.echo("authenticate", params)

    async def logout(self, params):  # type: ignore[no-untyped-def]
        return self.echo("logout", params)

    async def new_session(self, params):  # type: ignore[no-untyped-def]
        return {"sessionId": "s-1", **self.echo("session/new", params)}

    async def load_session(self, params):  # type: ignore[no-untyped-def]
        return self.echo("session/load", params)

    async def list_sessions(self, params):  # type: ignore[no-untyped-def]
        return {"sessions": [], **self.echo("session/list", params)}

    async def delete_session(self, params):  # type: ignore[no-untyped-def]
        return self.echo("session/delete", params)

    async def resume_session(self, params):  # type: ignore[no-untyped-def]
        return self.echo("session/resume", params)

    async def close_session(self, params):  # type: ignore[no-untyped-def]
        return self.echo("session/close", params)

    async def set_session_mode(self, params):  # type: ignore[no-untyped-def]
        return self.echo("session/set_mode", params)

    async def set_session_config_option(self, params):  # type: ignore[no-untyped-def]
        return {"configOptions": [], **self.echo("session/set_config_option", params)}

    async def cancel(self, params):  # type: ignore[no-untyped-def]
        self.notes.append(("cancel", params))

    async def ext_method(self, method, params):  # type: ignore[no-untyped-def]
        if method == "_test/echo_later":
            await asyncio.sleep(0.05)
            return {"echo": params["i"]}
        if method == "_test/notes":
            return {"notes": self.notes, "cancelled": CANCELLED, "started": STARTED}
        return {"ext": method, "params": params}

    async def ext_notification(self, method, params):  # type: ignore[no-untyped-def]
        self.notes.append((method, params))

    async def prompt(self, params):  # type: ignore[no-untyped-def]
        text = params["prompt"][0]["text"]
        session_id = params["sessionId"]
        if text == "call client":
            return {"stopReason": "end_turn", "_meta": await self.call_client(session_id)}
        if text.startswith("burst "):
            for i in range(int(text.split()[1])):
                await self.client.session_update(
                    {
                        "sessionId": session_id,
                        "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": str(i)}},
                    }
                )
            return {"stopReason": "end_turn"}
        if text.startswith("concurrent "):
            n = int(text.split()[1])
            reads = [
                self.client.read_text_file({"sessionId": session_id, "path": f"/file-{i}"}) for i in range(n)
            ]
            results = await asyncio.gather(*reads)
            wrong = [i for i, result in enumerate(results) if result["content"] != f"/file-{i}:None:None"]
            return {"stopReason": "end_turn", "_meta": {"wrong": wrong[:10], "count": len(results)}}
        if text == "hang":
            STARTED.append("prompt")
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                CANCELLED.append("prompt")
                raise
        if text == "boom":
            raise ValueError("secret detail that must not leak")
        if text == "refuse":
            raise RequestError(-32042, "refused", {"why": "test"})
        if text == "terminal":
            async with await self.client.create_terminal({"sessionId": session_id, "command": "true"}) as terminal:
                await terminal.wait_for_exit()
            return {"stopReason": "end_turn", "_meta": {"released": terminal.released}}
        if text == "news":
            for update in NEWS:
                await self.client.session_update({"sessionId": session_id, "update": update})
            return {"stopReason": "end_turn"}
        if text == "exit":
            os._exit(3)
        return {"stopReason": "end_turn"}

    async def call_client(self, session_id: str) -> Dict[str, Any]:
        c = self.client
        s = {"sessionId": session_id}
        results: Dict[str, Any] = {}
        await c.session_update(
            {**s, "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}}
        )
        results["session/request_permission"] = await c.request_permission(
            {
                **s,
                "toolCall": {"toolCallId": "t1"},
                "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
            }
        )
        results["fs/read_text_file"] = await c.read_text_file({**s, "path": "/x", "line": 2, "limit": 3})
        results["fs/write_text_file"] = await c.write_text_file({**s, "path": "/y", "content": "data"})
        terminal = await c.create_terminal({**s, "command": "echo", "args": ["a"]})
        results["terminal/create"] = terminal.id
        results["terminal/output"] = await terminal.current_output()
        results["terminal/wait_for_exit"] = await terminal.wait_for_exit()
        results["terminal/kill"] = await terminal.kill()
        await terminal.release()
        await terminal.release()  # once only
        results["terminal/output direct"] = await c.terminal_output({**s, "terminalId": "direct"})
        results["elicitation/create"] = await c.create_elicitation(
            {**s, "mode": "form", "message": "name?", "requestedSchema": {"type": "object", "properties": {}}}
        )
        await c.complete_elicitation({"elicitationId": "e1"})
        results["_ext/method"] = await c.ext_method("_ext/method", {"a": 1})
        await c.ext_notification("_ext/note", {"b": 2})
        try:
            await c.session_update({**s, "update": {"sessionUpdate": "agent_message_chunk"}})  # type: ignore[typeddict-item]
            results["bad outbound"] = "sent"
        except RequestError as error:
            results["bad outbound"] = error.code
        return results


if __name__ == "__main__":
    print("full_agent: started", file=sys.stderr)
    # `--unchecked METHOD...`: methods outside the schema it takes as they are.
    unchecked = sys.argv[sys.argv.index("--unchecked") + 1 :] if "--unchecked" in sys.argv else []
    asyncio.run(run_agent(FullAgent, unchecked_methods=unchecked))
