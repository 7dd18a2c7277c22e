"""An ACP client built on acp_engine's Client class: spawns the agent given
on the command line and runs two turns against it, "Say hello" (serving
permission, file and terminal requests for real, printing the streamed
reply) and "cancel me" (it cancels the turn while the agent waits for
permission). It shows notices and context compactions (and says so in its
capabilities). Prints ``interop ok`` when every check passed; with
``ACP_INTEROP_NEWS=1`` it also expects the notice and compaction updates of
interop/news.json.

    python examples/client.py python examples/agent.py
    python examples/client.py http://127.0.0.1:8080/acp   # a remote agent (ws://, wss://, http://,
                                                          # https://; token: ACP_ENGINE_TOKEN)
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
import tempfile
from typing import Any, Dict, List, Optional

from acp_engine import Client, RequestError, connect_agent, spawn_agent
from acp_engine.schema import (
    CreateTerminalRequest,
    CreateTerminalResponse,
    KillTerminalRequest,
    KillTerminalResponse,
    PromptRequest,
    ReadTextFileRequest,
    ReadTextFileResponse,
    ReleaseTerminalRequest,
    ReleaseTerminalResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
    SessionUpdate,
    TerminalExitStatus,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)


class Terminal:
    """A command the agent runs through us, with its output collected."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.output = ""
        self.exit_status: Optional[TerminalExitStatus] = None
        self.done = asyncio.ensure_future(self._collect())

    async def _collect(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(65536):
            self.output += chunk.decode(errors="replace")
        code = await self.process.wait()
        self.exit_status = {"exitCode": code, "signal": None} if code >= 0 else {"exitCode": None, "signal": str(-code)}


class ExampleClient(Client):
    def __init__(self) -> None:
        self.reply: List[str] = []
        self.news: List[SessionUpdate] = []  # notices and compactions, in order
        self.answer_permissions = True
        self.permission_asked: "asyncio.Queue[str]" = asyncio.Queue()
        self.terminals: Dict[str, Terminal] = {}
        self.next_terminal = itertools.count(1)

    async def request_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        self.permission_asked.put_nowait(params["sessionId"])
        if not self.answer_permissions:
            # Left open: the turn gets cancelled, which answers it for us.
            await asyncio.Event().wait()
        allow = next(option for option in params["options"] if option["kind"] == "allow_once")
        return {"outcome": {"outcome": "selected", "optionId": allow["optionId"]}}

    async def session_update(self, params: SessionNotification) -> None:
        update = params["update"]
        if update["sessionUpdate"] == "agent_message_chunk" and update["content"]["type"] == "text":
            text = update["content"]["text"]
            self.reply.append(text)
            print(text, end="", flush=True)
        elif update["sessionUpdate"] == "notice":
            print(f"[{update['severity']} notice: {update['title']}]")
            self.news.append(update)
        elif update["sessionUpdate"] == "compaction_update":
            print(f"[compaction {update['compactionId']}: {update['status']}]")
            self.news.append(update)
        elif update["sessionUpdate"] == "compaction_summary_chunk":
            self.news.append(update)

    async def read_text_file(self, params: ReadTextFileRequest) -> ReadTextFileResponse:
        try:
            with open(params["path"], encoding="utf-8") as file:
                lines = file.read().splitlines(keepends=True)
        except OSError:
            raise RequestError.resource_not_found(params["path"]) from None
        start = max((params.get("line") or 1) - 1, 0)
        limit = params.get("limit")
        return {"content": "".join(lines[start : None if limit is None else start + limit])}

    async def write_text_file(self, params: WriteTextFileRequest) -> WriteTextFileResponse:
        with open(params["path"], "w", encoding="utf-8") as file:
            file.write(params["content"])
        return {}

    async def create_terminal(self, params: CreateTerminalRequest) -> CreateTerminalResponse:
        process = await asyncio.create_subprocess_exec(
            params["command"],
            *params.get("args", []),
            cwd=params.get("cwd"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        terminal_id = f"term-{next(self.next_terminal)}"
        self.terminals[terminal_id] = Terminal(process)
        return {"terminalId": terminal_id}

    def terminal(self, terminal_id: str) -> Terminal:
        terminal = self.terminals.get(terminal_id)
        if terminal is None:
            raise RequestError.resource_not_found(terminal_id)
        return terminal

    async def terminal_output(self, params: TerminalOutputRequest) -> TerminalOutputResponse:
        terminal = self.terminal(params["terminalId"])
        response: TerminalOutputResponse = {"output": terminal.output, "truncated": False}
        if terminal.exit_status is not None:
            response["exitStatus"] = terminal.exit_status
        return response

    async def wait_for_terminal_exit(self, params: WaitForTerminalExitRequest) -> WaitForTerminalExitResponse:
        terminal = self.terminal(params["terminalId"])
        await terminal.done
        assert terminal.exit_status is not None
        return {"exitCode": terminal.exit_status.get("exitCode"), "signal": terminal.exit_status.get("signal")}

    async def kill_terminal(self, params: KillTerminalRequest) -> KillTerminalResponse:
        terminal = self.terminal(params["terminalId"])
        if terminal.process.returncode is None:
            terminal.process.kill()
        return {}

    async def release_terminal(self, params: ReleaseTerminalRequest) -> ReleaseTerminalResponse:
        terminal = self.terminals.pop(params["terminalId"], None)
        if terminal is not None and terminal.process.returncode is None:
            terminal.process.kill()
        return {}


def prompt(session_id: str, text: str) -> PromptRequest:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


#: The updates of interop/news.json, as an agent sends them to a client that
#: shows notices and compactions.
EXPECTED_NEWS: List[Dict[str, Any]] = [
    {
        "sessionUpdate": "notice",
        "severity": "info",
        "title": "Context compacted",
        "description": "Older messages were summarized.",
    },
    {"sessionUpdate": "compaction_update", "compactionId": "compaction-1", "status": "in_progress"},
    {
        "sessionUpdate": "compaction_summary_chunk",
        "compactionId": "compaction-1",
        "content": {"type": "text", "text": "The user asked for a greeting."},
    },
    {"sessionUpdate": "compaction_update", "compactionId": "compaction-1", "status": "completed"},
]


def check(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"client: check failed: {what}")


async def main(command: str, *args: str) -> None:
    with tempfile.TemporaryDirectory(prefix="acp-engine-python-client-") as cwd:
        await talk(cwd, command, *args)
    print("interop ok")


async def talk(cwd: str, command: str, *args: str) -> None:
    """Two turns with the agent, in a session whose working directory is `cwd`."""
    with open(os.path.join(cwd, "hello.txt"), "w", encoding="utf-8") as file:
        file.write("Hello from the client's file\n")
    client = ExampleClient()
    if "://" in command:
        opened = connect_agent(lambda _agent: client, command, token=os.environ.get("ACP_ENGINE_TOKEN"))
    else:
        opened = spawn_agent(lambda _agent: client, command, *args)
    async with opened as agent:
        initialized = await agent.initialize(
            {
                "protocolVersion": 1,
                "clientCapabilities": {
                    "fs": {"readTextFile": True, "writeTextFile": True},
                    "terminal": True,
                    "session": {"notices": {}, "compaction": {}},  # we show them
                },
                "clientInfo": {"name": "acp-engine-python-interop-client", "version": "1.0.0"},
            }
        )
        check(initialized["protocolVersion"] == 1, "the agent speaks protocol version 1")
        info = initialized.get("agentInfo")
        print(f"connected to {info['name'] if info else 'an agent'}")
        session = await agent.new_session({"cwd": cwd, "mcpServers": []})
        session_id = session["sessionId"]

        print("> Say hello")
        turn = await agent.prompt(prompt(session_id, "Say hello"))
        print(f"\n< stop reason: {turn['stopReason']}")
        check(turn["stopReason"] == "end_turn", "the first turn ends with end_turn")
        text = "".join(client.reply)
        check("Hello from the client's file" in text, "the agent read hello.txt through us")
        check("terminal said: hi" in text, "the agent ran `echo hi` in our terminal")
        with open(os.path.join(cwd, "written.txt"), encoding="utf-8") as file:
            check(file.read() == "written by agent", "the agent wrote written.txt through us")
        if os.environ.get("ACP_INTEROP_NEWS") == "1":
            check(client.news == EXPECTED_NEWS, f"the updates of interop/news.json arrived (got {client.news})")

        print("> cancel me")
        client.answer_permissions = False
        while not client.permission_asked.empty():
            client.permission_asked.get_nowait()
        cancelled_turn = asyncio.ensure_future(agent.prompt(prompt(session_id, "cancel me")))
        # The agent asks permission and waits; we cancel instead of answering.
        await client.permission_asked.get()
        await agent.cancel({"sessionId": session_id})
        turn = await cancelled_turn
        print(f"< stop reason: {turn['stopReason']}")
        check(turn["stopReason"] == "cancelled", "the cancelled turn ends with cancelled")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit("usage: client.py <agent command> [args...] | URL")
    asyncio.run(main(*sys.argv[1:]))
