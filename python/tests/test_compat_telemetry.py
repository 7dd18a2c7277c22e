"""``acp.telemetry`` with the real OpenTelemetry SDK: a compat client driving
the official TypeScript SDK's agent (interop/ts/agent.mjs) over a pipe
handles each of the agent's requests in an ``acp.request`` span and each
notification in an ``acp.notification`` span, with the ``method``
attribute, and the handler runs inside it (its current span). Without
OpenTelemetry or logfire importable, the same turn runs with no span."""

import asyncio
import subprocess
import sys
from typing import Any, List

from conftest import official_ts, run_async
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from acp_engine.compat import connect_to_agent, telemetry
from acp_engine.compat.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TextContentBlock,
    WriteTextFileResponse,
)

EXPORTER = InMemorySpanExporter()


def _provider() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
    trace.set_tracer_provider(provider)


class _Client:
    """Records the span each handler ran in."""

    def __init__(self) -> None:
        self.current: List[str] = []

    def _note(self) -> None:
        self.current.append(getattr(trace.get_current_span(), "name", "none"))

    async def request_permission(self, options: Any, **kwargs: Any) -> RequestPermissionResponse:
        self._note()
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow"))

    async def read_text_file(self, path: str, **kwargs: Any) -> ReadTextFileResponse:
        self._note()
        return ReadTextFileResponse(content="hello from the client\n")

    async def write_text_file(self, **kwargs: Any) -> WriteTextFileResponse:
        self._note()
        return WriteTextFileResponse()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self._note()


@run_async
async def test_handlers_run_in_request_and_notification_spans() -> None:
    _provider()
    assert telemetry.tracing()
    process = await asyncio.create_subprocess_exec(
        *official_ts("agent.mjs"), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    client = _Client()
    async with connect_to_agent(client, process.stdin, process.stdout) as agent:
        capabilities = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
        await agent.initialize(protocol_version=1, client_capabilities=capabilities)
        session = await agent.new_session(cwd="/tmp")
        answer = await agent.prompt(session_id=session.session_id, prompt=[TextContentBlock(type="text", text="Say hello")])
        assert answer.stop_reason == "end_turn"
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), 10) == 0

    spans = [(span.name, dict(span.attributes or {}).get("method")) for span in EXPORTER.get_finished_spans()]
    requests = [method for name, method in spans if name == "acp.request"]
    notifications = [method for name, method in spans if name == "acp.notification"]
    assert requests == ["session/request_permission", "fs/read_text_file", "fs/write_text_file"]
    assert notifications and set(notifications) == {"session/update"}
    # One span per handled message, and every handler ran inside its span.
    assert len(client.current) == len(requests) + len(notifications)
    assert set(client.current) == {"acp.request", "acp.notification"}


_WITHOUT_TELEMETRY = """
import asyncio, sys
sys.modules["opentelemetry"] = None  # as if not installed: importing it fails
sys.modules["logfire"] = None
from acp_engine.compat import connect_to_agent, telemetry
from acp_engine.compat.schema import TextContentBlock

class Client:
    def __init__(self):
        self.updates = []

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update.session_update)

async def main():
    assert not telemetry.installed() and not telemetry.tracing()
    process = await asyncio.create_subprocess_exec(
        *sys.argv[1:], stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    client = Client()
    async with connect_to_agent(client, process.stdin, process.stdout) as agent:
        await agent.initialize(protocol_version=1)
        session = await agent.new_session(cwd="/tmp")
        prompt = [TextContentBlock(type="text", text="Say hello")]
        answer = await agent.prompt(session_id=session.session_id, prompt=prompt)
    process.stdin.close()
    await process.wait()
    print(answer.stop_reason, ",".join(client.updates))

asyncio.run(main())
"""


def test_without_telemetry_notifications_reach_the_handler_unwrapped() -> None:
    # A process where neither OpenTelemetry nor logfire can be imported: the
    # router's notification routes go to the engine as they are.
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_TELEMETRY, *official_ts("agent.mjs")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    stop_reason, updates = done.stdout.split()
    assert stop_reason == "end_turn"
    assert updates.split(",")[0] == "agent_message_chunk"


_PROVIDER_SET_LATER = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from acp_engine.compat import telemetry

before = telemetry.tracing()
trace.set_tracer_provider(TracerProvider())
print(before, telemetry.tracing(), telemetry.tracing())
"""


def test_a_provider_set_after_import_turns_tracing_on() -> None:
    # tracing() reads the API's global provider instead of asking the API on
    # every message: a provider set later must still be seen.
    done = subprocess.run([sys.executable, "-c", _PROVIDER_SET_LATER], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True"]
