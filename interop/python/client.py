#!/usr/bin/env python3
"""ACP interop test client built on the official Python SDK (agent-client-protocol, module ``acp``).

Usage: python client.py <agent command> [agent args...]

Follows the interop contract in ../README.md: initialize, session/new, a
"Say hello" turn that exercises permission, fs and terminal methods for real,
then a "cancel me" turn that is cancelled while the agent waits for a
permission answer. Prints "interop ok" and exits 0 on success; prints the
reason to stderr and exits 1 otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import acp
from acp.connection import StreamEvent
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    ClientCapabilities,
    ClientSessionCapabilities,
    CompactionCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    FileSystemCapabilities,
    Implementation,
    KillTerminalResponse,
    NoticeCapabilities,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    TextContentBlock,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

IMPL = "python"
HELLO_CONTENT = "Hello from the client's file\n"
HERE = os.path.dirname(os.path.abspath(__file__))
# The notice and compaction updates an agent sends a client that advertises
# session.notices and session.compaction (../README.md); checked when
# ACP_INTEROP_NEWS=1, as run.sh sets it.
with open(os.path.join(HERE, "..", "news.json")) as news_file:
    NEWS = json.load(news_file)
NEWS_KINDS = {update["sessionUpdate"] for update in NEWS}


def log(*args: Any) -> None:
    # One write per line so that the two peers' stderr lines do not interleave.
    sys.stderr.write(" ".join([f"[{IMPL}-client]", *map(str, args)]) + "\n")
    sys.stderr.flush()


class CheckFailed(Exception):
    pass


def check(cond: bool, message: str) -> None:
    if not cond:
        raise CheckFailed(message)


def describe_error(exc: BaseException) -> str:
    if isinstance(exc, acp.RequestError):
        data = getattr(exc, "data", None)
        suffix = f" data={json.dumps(data)}" if data is not None else ""
        return f"JSON-RPC error {exc.code}: {exc}{suffix}"
    return f"{type(exc).__name__}: {exc}"


def slice_lines(text: str, line: int | None, limit: int | None) -> str:
    if line is None and limit is None:
        return text
    lines = text.splitlines(keepends=True)
    start = max((line or 1) - 1, 0)
    end = len(lines) if limit is None else start + limit
    return "".join(lines[start:end])


class Terminal:
    """A really running command whose stdout+stderr are captured."""

    def __init__(self, proc: asyncio.subprocess.Process, limit: int | None) -> None:
        self.proc = proc
        self.limit = limit
        self.output = bytearray()
        self.truncated = False
        self.exit_status: TerminalExitStatus | None = None
        self._reader = asyncio.ensure_future(self._pump())

    @classmethod
    async def start(
        cls, command: str, args: list[str], cwd: str, env: list[EnvVariable] | None, limit: int | None
    ) -> Terminal:
        full_env = dict(os.environ)
        for var in env or []:
            full_env[var.name] = var.value
        proc = await asyncio.create_subprocess_exec(
            command,
            *args,
            cwd=cwd,
            env=full_env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        return cls(proc, limit)

    async def _pump(self) -> None:
        assert self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(65536):
            self.output.extend(chunk)
            if self.limit is not None and len(self.output) > self.limit:
                start = len(self.output) - self.limit
                while start < len(self.output) and (self.output[start] & 0xC0) == 0x80:
                    start += 1
                del self.output[:start]
                self.truncated = True
        code = await self.proc.wait()
        if code < 0:
            import signal as _signal

            self.exit_status = TerminalExitStatus(exit_code=None, signal=_signal.Signals(-code).name)
        else:
            self.exit_status = TerminalExitStatus(exit_code=code, signal=None)

    async def wait(self) -> TerminalExitStatus:
        await asyncio.shield(self._reader)
        assert self.exit_status is not None
        return self.exit_status

    def kill(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()


class InteropClient:
    """Implements the ``acp.Client`` protocol for real."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.conn: Any = None
        self.phase = "hello"
        self.permission_requests = 0
        self.cancel_sent = False
        self.text: list[str] = []
        self.news: list[dict[str, Any]] = []
        self.terminals: dict[str, Terminal] = {}
        self._next_terminal = 0

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permission_requests += 1
        log(f"session/request_permission ({self.phase}) toolCall={tool_call.tool_call_id}")
        if self.phase == "cancel":
            # Cancel the turn, then answer the pending permission request as
            # cancelled, as the protocol requires of a client after session/cancel.
            await self.conn.cancel(session_id=session_id)
            self.cancel_sent = True
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        for option in options:
            if option.kind == "allow_once":
                return RequestPermissionResponse(
                    outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
                )
        log("no allow_once option offered; answering cancelled")
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
            self.text.append(update.content.text)
        elif update.session_update in NEWS_KINDS:
            self.news.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        log(f"fs/read_text_file {path}")
        text = Path(path).read_text(encoding="utf-8")
        return ReadTextFileResponse(content=slice_lines(text, line, limit))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        log(f"fs/write_text_file {path}")
        Path(path).write_text(content, encoding="utf-8")
        # Return the model explicitly: returning None would put `"result": null`
        # on the wire (the SDK does not normalise this method's result to {}).
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        self._next_terminal += 1
        terminal_id = f"term-{self._next_terminal}"
        log(f"terminal/create {terminal_id}: {command} {json.dumps(args or [])}")
        try:
            term = await Terminal.start(command, args or [], cwd or self.cwd, env, output_byte_limit)
        except OSError as exc:
            raise acp.RequestError.internal_error({"details": f"failed to start {command}: {exc}"}) from exc
        self.terminals[terminal_id] = term
        return CreateTerminalResponse(terminal_id=terminal_id)

    def _terminal(self, terminal_id: str) -> Terminal:
        term = self.terminals.get(terminal_id)
        if term is None:
            raise acp.RequestError.resource_not_found(f"terminal {terminal_id}")
        return term

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        term = self._terminal(terminal_id)
        return TerminalOutputResponse(
            output=term.output.decode("utf-8", errors="replace"),
            truncated=term.truncated,
            exit_status=term.exit_status,
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        status = await self._terminal(terminal_id).wait()
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse:
        self._terminal(terminal_id).kill()
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> ReleaseTerminalResponse:
        self._terminal(terminal_id).kill()
        del self.terminals[terminal_id]
        return ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


def tracer(event: StreamEvent) -> None:
    arrow = "<-" if event.direction.value == "incoming" else "->"
    text = json.dumps(event.message, separators=(",", ":"))
    log(arrow, text if len(text) <= 600 else text[:600] + "...")


async def step(name: str, coro: Any) -> Any:
    try:
        return await coro
    except CheckFailed:
        raise
    except Exception as exc:
        raise CheckFailed(f"{name} failed: {describe_error(exc)}") from exc


async def scenario(conn: Any, client: InteropClient, cwd: str) -> None:
    # 2. initialize
    init = await step(
        "initialize",
        conn.initialize(
            protocol_version=1,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                terminal=True,
                session=ClientSessionCapabilities(notices=NoticeCapabilities(), compaction=CompactionCapabilities()),
            ),
            client_info=Implementation(name=f"{IMPL}-interop-client", version="1.0.0"),
        ),
    )
    check(init.protocol_version == 1, f"initialize: expected protocolVersion 1, got {init.protocol_version!r}")

    # 3. session/new
    session = await step("session/new", conn.new_session(cwd=cwd, mcp_servers=[]))
    session_id = session.session_id
    log("sessionId", session_id)

    # 4. "Say hello"
    resp = await step(
        'session/prompt "Say hello"', conn.prompt(session_id=session_id, prompt=[TextContentBlock(type="text", text="Say hello")])
    )
    text = "".join(client.text)
    log(f'"Say hello" -> {resp.stop_reason}, text={json.dumps(text)}')
    check(resp.stop_reason == "end_turn", f'"Say hello": expected stopReason end_turn, got {resp.stop_reason}')
    if os.environ.get("ACP_INTEROP_NEWS") == "1":
        check(client.news == NEWS, f'"Say hello": expected the notice and compaction updates {NEWS}, got {client.news}')
    check("Hello from the client's file" in text, f'"Say hello": agent text lacks the file content: {json.dumps(text)}')
    check("terminal said: hi" in text, f'"Say hello": agent text lacks "terminal said: hi": {json.dumps(text)}')
    written = Path(cwd, "written.txt")
    check(written.exists(), f'"Say hello": {written} was not written')
    content = written.read_text(encoding="utf-8")
    check(content == "written by agent", f'"Say hello": written.txt contains {json.dumps(content)}')
    check(
        client.permission_requests == 1,
        f'"Say hello": expected 1 permission request, got {client.permission_requests}',
    )

    # 5. cancellation
    client.phase = "cancel"
    resp = await step(
        'session/prompt "cancel me"', conn.prompt(session_id=session_id, prompt=[TextContentBlock(type="text", text="cancel me")])
    )
    log(f'"cancel me" -> {resp.stop_reason}')
    check(client.cancel_sent, '"cancel me": the agent never asked for permission, so nothing was cancelled')
    check(resp.stop_reason == "cancelled", f'"cancel me": expected stopReason cancelled, got {resp.stop_reason}')


async def run(argv: list[str], cwd: str) -> None:
    client = InteropClient(cwd)
    observers = [tracer] if os.environ.get("ACP_INTEROP_TRACE") else None
    failure: str | None = None
    proc = None
    try:
        async with acp.spawn_agent_process(
            client,
            argv[0],
            *argv[1:],
            env=dict(os.environ),  # the SDK otherwise passes only a trimmed environment
            transport_kwargs={"stderr": None},  # inherit: the agent's stderr goes to ours
            observers=observers,
        ) as (conn, proc):
            try:
                await scenario(conn, client, cwd)
            except CheckFailed as exc:
                failure = str(exc)
            except Exception as exc:
                failure = f"unexpected error: {describe_error(exc)}"
            finally:
                for term in client.terminals.values():
                    term.kill()
            # 6. Leaving the context closes the connection and the agent's stdin,
            # waits 2 s for the agent to exit, then terminates / kills it.
    except Exception as exc:
        if failure is None:
            failure = f"shutting down the connection failed: {describe_error(exc)}"
    exit_status = proc.returncode if proc is not None else None
    if failure is not None:
        raise CheckFailed(f"{failure} (agent exit status: {exit_status})")
    log("agent exited with", exit_status)


def main() -> int:
    argv = sys.argv[1:]
    if not argv:
        print("usage: client.py <agent command> [agent args...]", file=sys.stderr)
        return 2
    cwd = os.path.realpath(tempfile.mkdtemp(prefix=f"acp-interop-{IMPL}-"))
    Path(cwd, "hello.txt").write_text(HELLO_CONTENT, encoding="utf-8")
    log("session cwd", cwd)
    try:
        asyncio.run(run(argv, cwd))
    except CheckFailed as exc:
        print(f"FAIL: {exc}", file=sys.stderr, flush=True)
        return 1
    except Exception as exc:
        print(f"FAIL: unexpected error: {describe_error(exc)}", file=sys.stderr, flush=True)
        return 1
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
    print("interop ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
