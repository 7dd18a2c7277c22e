"""Three `acp-engine serve` backends behind HAProxy (deploy/haproxy.cfg,
unchanged), reached by acp_engine's Python client over Streamable HTTP and
WebSocket (what `make test-balancer` runs). The agent is the durable example
agent (core/examples/durable_agent.rs): its sessions live in a directory the
backends share, as a deployment shares a volume.

- spread: 100 connections, 10 sessions each (1,000 sessions), one turn each,
  spread over the three backends by round robin; every reply is whole and
  comes from an agent of the backend the cookie pinned the connection to.
  Reports connections, memory per session and CPU per message per backend.
- official clients: the official TypeScript SDK's Streamable HTTP and
  WebSocket clients (interop/ts/durable-client.mjs): two turns on one
  connection, then `session/load` on another.
- observers: the backends run with `--attach`; two official TypeScript
  clients share one session (interop/ts/attach-clients.mjs) through the
  balancer, the controller's affinity cookie leading the observer to its
  backend: on each backend, over each transport.
- balancer restarted: HAProxy killed and started again with a slow turn in
  flight on every connection: each client resumes its broken event stream
  or socket on the backend its cookie names, and every turn completes on
  the agent it started on.
- backend killed: a slow turn in flight on every connection, one backend
  gets SIGKILL. Its clients' turns fail with a clear error (within the
  reconnect budget), every other turn completes; its agents exit; its
  clients reconnect through the balancer and `session/load` each session on
  another backend, getting its finished turns back (the cut turn is not
  history), and carry on.
- rolling restart: each backend in turn gets SIGTERM with a slow turn in
  flight on every connection; HAProxy takes it out of rotation (its /readyz
  says 503) and new connections go to the others; every turn completes (no
  turn lost), the draining backend's own ones after asking their client's
  permission, answered only once the backend is out of rotation (the
  answer must still reach it); it exits 0, its clients reload their
  sessions elsewhere, and it comes back.

Expects target/debug/acp-engine, target/debug/examples/durable_agent,
`haproxy` (Debian's package) and interop/setup.sh run (the official SDK). Last line: "N passed, M failed".

    python interop/balancer.py
"""

from __future__ import annotations

import asyncio
import csv
import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence, Tuple

from acp_engine import Client, ClientSideConnection, connect_agent

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "target/debug/acp-engine"
AGENT = ROOT / "target/debug/examples/durable_agent"
HAPROXY_CONFIG = ROOT / "deploy/haproxy.cfg"
CONNECTIONS = 100
SESSIONS_PER_CONNECTION = 10
# Seconds a Streamable HTTP client keeps trying to reopen a broken stream.
RECONNECT_TIMEOUT = 3.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def http_get(url: str) -> Tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def proc_stat(pid: int) -> Optional[List[str]]:
    """/proc/PID/stat's fields after the command name, or None if gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def parent_of(pid: int) -> Optional[int]:
    fields = proc_stat(pid)
    return int(fields[1]) if fields else None


def is_alive(pid: int) -> bool:
    fields = proc_stat(pid)
    return fields is not None and fields[0] != "Z"


def children_of(pid: int) -> List[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and parent_of(int(entry.name)) == pid:
            found.append(int(entry.name))
    return found


def cpu_seconds(pid: int) -> float:
    fields = proc_stat(pid)
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS if fields else 0.0


def rss_bytes(pid: int) -> int:
    fields = proc_stat(pid)
    return int(fields[21]) * PAGE_SIZE if fields else 0


def metric(text: str, name: str) -> float:
    """The sum of a Prometheus metric's samples (over its labels)."""
    total = 0.0
    for line in text.splitlines():
        match = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$", line)
        if match and match.group(1) == name:
            total += float(match.group(3))
    return total


async def until(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        await asyncio.sleep(0.05)


class Backend:
    """One `acp-engine serve` of the durable agent, on a port of its own."""

    def __init__(self, number: int, sessions: Path, logs: Path) -> None:
        self.name = f"backend-{number}"
        self.port = free_port()
        self.sessions = sessions
        self.log = logs / f"{self.name}.log"
        self.process: Optional[subprocess.Popen[bytes]] = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> None:
        command = [str(TOOL), "serve", "--listen", self.address, "--drain-timeout-ms", "10000", "--attach"]
        command += ["--", str(AGENT), "--sessions", str(self.sessions)]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)

    def signal(self, number: int) -> None:
        assert self.process is not None
        self.process.send_signal(number)

    def agents(self) -> List[int]:
        return children_of(self.pid)

    def metrics(self) -> str:
        status, text = http_get(f"http://{self.address}/metrics")
        assert status == 200, f"{self.name} /metrics: {status}"
        return text

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class Balancer:
    """HAProxy with deploy/haproxy.cfg in front of the backends."""

    def __init__(self, backends: List[Backend], logs: Path) -> None:
        self.port = free_port()
        self.stats = f"127.0.0.1:{free_port()}"
        self.env = dict(os.environ, ACP_FRONTEND=f"127.0.0.1:{self.port}", ACP_STATS=self.stats)
        for number, backend in enumerate(backends, 1):
            self.env[f"ACP_BACKEND_{number}"] = backend.address
        self.log = logs / "haproxy.log"
        self.start()

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(["haproxy", "-db", "-f", str(HAPROXY_CONFIG)], env=self.env, stderr=log)

    def restart(self) -> None:
        """Killed (every connection through it cut, its stick table lost), and started again."""
        self.process.kill()
        self.process.wait()
        self.start()

    def url(self, scheme: str) -> str:
        return f"{scheme}://127.0.0.1:{self.port}/acp"

    def status(self) -> Dict[str, str]:
        """Each backend server's status as HAProxy sees it (UP, DOWN, ...)."""
        try:
            status, text = http_get(f"http://{self.stats}/stats;csv")
        except OSError:
            return {}
        rows = csv.DictReader(io.StringIO(text.lstrip("# ")))
        return {row["svname"]: row["status"] for row in rows if row["pxname"] == "serve"}

    async def until_status(self, backend: Backend, wanted: str) -> None:
        await until(
            lambda: self.status().get(backend.name, "").startswith(wanted), f"HAProxy sees {backend.name} {wanted}"
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait()


class Recorder(Client):
    """Every session update, by session: (kind, text)."""

    def __init__(self) -> None:
        self.updates: Dict[str, List[Tuple[str, str]]] = defaultdict(list)
        # Permission is granted once this is set (the rolling restart holds it).
        self.permission_gate = asyncio.Event()
        self.permission_gate.set()

    async def session_update(self, params: Any) -> None:
        update = params["update"]
        text = update.get("content", {}).get("text", "")
        self.updates[params["sessionId"]].append((update["sessionUpdate"], text))

    async def request_permission(self, params: Any) -> Any:
        await self.permission_gate.wait()
        return {"outcome": {"outcome": "selected", "optionId": "allow"}}


class User:
    """One client connection through the balancer and its sessions, each
    with the turns it finished (user text, agent reply, alternately)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.sessions: Dict[str, List[str]] = {}
        self.agent_pid = 0
        # Every agent process that answered this user.
        self.agents: set[int] = set()
        self._opened: Optional[AbstractAsyncContextManager[ClientSideConnection]] = None

    async def connect(self) -> None:
        self.recorder = Recorder()
        self._opened = connect_agent(lambda _conn: self.recorder, self.url, reconnect_timeout=RECONNECT_TIMEOUT)
        self.agent = await self._opened.__aenter__()
        await self.agent.initialize({"protocolVersion": 1, "clientCapabilities": {}})

    async def close(self) -> None:
        if self._opened is not None:
            await self._opened.__aexit__(None, None, None)
            self._opened = None

    async def new_session(self) -> str:
        session = await self.agent.new_session({"cwd": "/", "mcpServers": []})
        self.sessions[session["sessionId"]] = []
        return session["sessionId"]

    async def turn(self, session_id: str, text: str) -> str:
        """One prompt; checks the reply whole and in order, and records it."""
        seen = len(self.recorder.updates[session_id])
        response = await self.agent.prompt({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]})
        assert response["stopReason"] == "end_turn", response
        updates = self.recorder.updates[session_id][seen:]
        assert all(kind == "agent_message_chunk" for kind, _ in updates), updates
        reply = "".join(chunk for _, chunk in updates)
        history = self.sessions[session_id]
        # A prompt starting with "ask" asks permission first (granted: "allow").
        chosen = "allow, " if text.startswith("ask") else ""
        expected = rf"{re.escape(text)} \({chosen}turn {len(history) // 2 + 1}, agent (\d+)\)"
        match = re.fullmatch(expected, reply)
        assert match, f"{reply!r} is not {expected!r}"
        self.agent_pid = int(match.group(1))
        self.agents.add(self.agent_pid)
        history += [text, reply]
        return reply

    async def reload(self) -> None:
        """A new connection through the balancer, loading every session:
        each replays exactly its finished turns; then one more turn."""
        await self.close()
        await self.connect()
        for session_id, history in self.sessions.items():
            await self.agent.load_session({"sessionId": session_id, "cwd": "/", "mcpServers": []})
            replayed = self.recorder.updates[session_id]
            kinds = ["user_message_chunk", "agent_message_chunk"] * (len(history) // 2)
            assert replayed == list(zip(kinds, history)), f"{session_id} replayed {replayed}, not {history}"
        # Learns which agent serves it now.
        await self.turn(next(iter(self.sessions)), "reloaded")


class Farm:
    def __init__(self, work: Path) -> None:
        sessions = work / "sessions"
        sessions.mkdir()
        self.logs = work
        self.backends = [Backend(number, sessions, work) for number in (1, 2, 3)]
        for backend in self.backends:
            backend.start()
        self.balancer = Balancer(self.backends, work)
        self.users: List[User] = []

    async def until_up(self) -> None:
        for backend in self.backends:
            await self.balancer.until_status(backend, "UP")

    def backend_of(self, user: User) -> Backend:
        parent = parent_of(user.agent_pid)
        for backend in self.backends:
            if backend.process and backend.process.poll() is None and backend.pid == parent:
                return backend
        raise AssertionError(f"agent {user.agent_pid} belongs to no live backend (parent {parent})")

    async def join(self, scheme: str, sessions: int) -> User:
        user = User(self.balancer.url(scheme))
        await user.connect()
        for _ in range(sessions):
            await user.new_session()
        return user

    def stop(self) -> None:
        self.balancer.stop()
        for backend in self.backends:
            backend.stop()


async def all_of(calls: Sequence[Awaitable[Any]], timeout: float = 60.0) -> List[Any]:
    return list(await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), timeout))


def first_error(results: List[Any]) -> None:
    for result in results:
        if isinstance(result, BaseException):
            raise AssertionError(f"{type(result).__name__}: {result}")


async def spread(farm: Farm) -> None:
    schemes = ["http", "ws"]
    joined = await all_of([farm.join(schemes[n % 2], SESSIONS_PER_CONNECTION) for n in range(CONNECTIONS)])
    first_error(joined)
    farm.users = joined
    turns = [user.turn(session, f"hello {n}") for n, user in enumerate(farm.users) for session in user.sessions]
    first_error(await all_of(turns))
    by_backend: Dict[str, List[User]] = defaultdict(list)
    for user in farm.users:
        # Every session of a connection is answered by the connection's one agent.
        replies = [history[1] for history in user.sessions.values()]
        assert len({re.search(r"agent (\d+)", reply).group(1) for reply in replies}) == 1, replies  # type: ignore[union-attr]
        by_backend[farm.backend_of(user).name].append(user)
    print("  backend     connections  sessions  messages  MiB/session  CPU us/message")
    for backend in farm.backends:
        users = by_backend[backend.name]
        assert len(users) >= CONNECTIONS // 6, f"{backend.name} got {len(users)} of {CONNECTIONS} connections"
        text = backend.metrics()
        opened = metric(text, "acp_connections_opened_total")
        assert opened == len(users), f"{backend.name} counted {opened} connections, the test made {len(users)} there"
        sessions = len(users) * SESSIONS_PER_CONNECTION
        messages = metric(text, "acp_messages_total")
        processes = [backend.pid] + backend.agents()
        memory = sum(rss_bytes(pid) for pid in processes) / sessions / 2**20
        cpu = sum(cpu_seconds(pid) for pid in processes) / max(messages, 1) * 1e6
        print(f"  {backend.name:10} {len(users):12} {sessions:9} {messages:9.0f} {memory:12.2f} {cpu:15.1f}")


async def official_clients(farm: Farm) -> None:
    """The official TypeScript SDK's clients through the balancer:
    interop/ts/durable-client.mjs, three over each transport."""
    script = ROOT / "interop/ts/durable-client.mjs"
    runs = []
    for scheme in ("http", "ws") * 3:
        runs.append(
            await asyncio.create_subprocess_exec(
                "node", str(script), farm.balancer.url(scheme), stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        )
    outputs = await all_of([run.communicate() for run in runs])
    first_error(outputs)
    for run, (out, err) in zip(runs, outputs):
        assert run.returncode == 0 and out.decode().strip() == "durable ok", err.decode()[-2000:]


async def observers(farm: Farm) -> None:
    """Two official TypeScript clients on one session through the balancer
    (interop/ts/attach-clients.mjs): the controller's affinity cookie,
    sent by the observer too, leads both to one backend, where the
    observer's session/load attaches it; on each backend, over each
    transport."""
    script = ROOT / "interop/ts/attach-clients.mjs"
    runs = []
    for backend in farm.backends:
        for scheme in ("http", "ws"):
            cookie = f"ACP_BACKEND={backend.name}"
            runs.append(
                await asyncio.create_subprocess_exec(
                    "node", str(script), farm.balancer.url(scheme), cookie, stdout=subprocess.PIPE, stderr=subprocess.PIPE
                )
            )
    outputs = await all_of([run.communicate() for run in runs])
    first_error(outputs)
    for run, (out, err) in zip(runs, outputs):
        assert run.returncode == 0 and out.decode().strip() == "attach ok", err.decode()[-2000:]

    def observed() -> List[float]:
        return [metric(backend.metrics(), "acp_session_observers") for backend in farm.backends]

    await until(lambda: observed() == [0, 0, 0], "every observer detached when its client left")
    print(f"  {len(runs)} controller and observer pairs, each on the backend their cookie named")


async def balancer_restarted(farm: Farm) -> None:
    """HAProxy killed and started again mid-turn: every event stream and
    socket through it breaks; each client comes back (its cookie leads it
    to its backend) and resumes, and every turn completes on the agent it
    started on."""
    agents = [user.agent_pid for user in farm.users]
    turns = [user.turn(next(iter(user.sessions)), "slow 1000") for user in farm.users]
    started = asyncio.ensure_future(all_of(turns))
    await asyncio.sleep(0.3)
    farm.balancer.restart()
    first_error(await started)
    moved = [user for user, agent in zip(farm.users, agents) if user.agent_pid != agent]
    assert not moved, f"{len(moved)} turns finished on another agent"
    await farm.until_up()
    print(f"  {len(farm.users)} turns in flight through a restarted HAProxy all completed, each on its agent")


async def backend_killed(farm: Farm) -> None:
    victim = farm.backends[1]
    doomed = [user for user in farm.users if farm.backend_of(user) is victim]
    agents = victim.agents()
    assert doomed and agents, "the victim serves nobody"
    turns = [user.turn(next(iter(user.sessions)), "slow 1500") for user in farm.users]
    started = asyncio.ensure_future(all_of(turns))
    await asyncio.sleep(0.5)
    victim.signal(signal.SIGKILL)
    killed_at = time.monotonic()
    results = await started
    waited = time.monotonic() - killed_at
    for user, result in zip(farm.users, results):
        if user in doomed:
            assert isinstance(result, Exception), f"a turn on the killed backend gave {result!r}"
            assert "closed" in str(result).lower() or "connection" in str(result).lower(), result
        elif isinstance(result, BaseException):
            raise AssertionError(f"a turn on a live backend failed: {result}")
    print(
        f"  {len(doomed)} connections on {victim.name} failed their turns, {len(farm.users) - len(doomed)} completed ({waited:.1f} s)"
    )
    await until(lambda: not any(is_alive(pid) for pid in agents), f"{victim.name}'s agents exit")
    await farm.balancer.until_status(victim, "DOWN")
    first_error(await all_of([user.reload() for user in doomed]))
    first_error(await all_of([user.turn(session, "again") for user in doomed for session in user.sessions]))
    for user in doomed:
        assert farm.backend_of(user) is not victim
    print(f"  their {len(doomed) * SESSIONS_PER_CONNECTION} sessions loaded on the other backends and carried on")
    victim.start()
    await farm.balancer.until_status(victim, "UP")


async def rolling_restart(farm: Farm) -> None:
    for backend in farm.backends:
        draining = [user for user in farm.users if farm.backend_of(user) is backend]
        # The draining backend's turns ask permission; the answers wait until
        # HAProxy took it out of rotation, and must reach it all the same.
        permission_gate = asyncio.Event()
        for user in draining:
            user.recorder.permission_gate = permission_gate
        turns = [
            user.turn(next(iter(user.sessions)), "ask slow 1000" if user in draining else "slow 1000")
            for user in farm.users
        ]
        started = asyncio.ensure_future(all_of(turns))
        await asyncio.sleep(0.3)
        backend.signal(signal.SIGTERM)
        await farm.balancer.until_status(backend, "DOWN")
        permission_gate.set()
        newcomers = await all_of([farm.join(scheme, 1) for scheme in ("http", "ws") * 3])
        first_error(newcomers)
        first_error(await all_of([user.turn(next(iter(user.sessions)), "hi") for user in newcomers]))
        assert all(
            farm.backend_of(user) is not backend for user in newcomers
        ), "a newcomer reached the draining backend"
        first_error(await started)
        assert backend.process is not None
        code = await asyncio.get_running_loop().run_in_executor(None, backend.process.wait, 15)
        assert code == 0, f"{backend.name} exited {code}"
        first_error(await all_of([user.reload() for user in draining]))
        farm.users += newcomers
        print(
            f"  {backend.name}: {len(draining)} connections drained, every turn finished, their sessions reloaded elsewhere"
        )
        backend.start()
        await farm.balancer.until_status(backend, "UP")


async def main() -> int:
    missing = [str(path) for path in (TOOL, AGENT) if not path.exists()]
    if shutil.which("haproxy") is None:
        missing.append("haproxy (apt-get install haproxy)")
    if missing:
        print(f"FAIL setup: missing {', '.join(missing)}\n0 passed, 1 failed")
        return 1
    work = Path(tempfile.mkdtemp(prefix="acp-balancer."))
    farm = Farm(work)
    passed = failed = 0
    try:
        await farm.until_up()
        checks = (spread, official_clients, observers, balancer_restarted, backend_killed, rolling_restart)
        for check in checks:
            name = check.__name__.replace("_", " ")
            try:
                await check(farm)
            except (AssertionError, asyncio.TimeoutError) as error:
                print(f"FAIL {name}: {error or type(error).__name__}")
                failed += 1
                break
            print(f"PASS {name}")
            passed += 1
        failed += len(checks) - passed - failed
    finally:
        await all_of([user.close() for user in farm.users], timeout=30)
        farm.stop()
        if failed:
            for log in sorted(work.glob("*.log")):
                print(f"--- {log.name}")
                print("\n".join(log.read_text(errors="replace").splitlines()[-15:]))
        shutil.rmtree(work, ignore_errors=True)
    leftover = [pid for user in farm.users for pid in user.agents if is_alive(pid)]
    if leftover:
        print(f"FAIL agents outlived their connections: {leftover}")
        failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
