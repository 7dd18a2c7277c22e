"""A client that stops reading: floods an agent with requests without
reading its answers, then reads them all.

    python3 flood.py [--mode handler|engine] [--max-requests N]
                     [--max-growth-mib M] [--rss-of PID] -- AGENT COMMAND...

Writes requests until the agent stops taking them (no progress for a
second: it stopped reading, its stdin pipe is full) or N were written,
sampling the agent's RSS (/proc) throughout; then reads every answer and
checks that none is lost or duplicated, sends a final request, closes
stdin and waits for the agent to exit. `handler` sends `initialize`
(answered by the agent's handler); `engine` sends a method no agent has
(answered -32601 by the engine itself). With --rss-of, the memory measured
is that process's and its children's (a server, reached through an agent
command such as `acp-engine connect URL`). Prints one JSON line; exit
status 1 when a check fails, including growth over --max-growth-mib.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import time

# The request each mode sends: the first method of ACP, and a method that
# no agent has.
HANDLER_METHOD = "initialize"
ENGINE_METHOD = "flood/unknown"
CHUNK = 512


def own_rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(children.get(current, []))
    return found


# Whose memory counts: the agent, or (--rss-of) a server and its children.
WATCHED: list = []


def rss_kib(pid: int) -> int:
    if WATCHED:
        return sum(own_rss_kib(each) for each in descendants(WATCHED[0]))
    return own_rss_kib(pid)


def request(request_id: int, method: str) -> bytes:
    params = {"protocolVersion": 1, "clientCapabilities": {}}
    return (json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n").encode()


class Answers:
    """Reads the agent's stdout, counting answers by id."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""
        self.ids: dict[object, int] = {}
        self.duplicates = 0
        self.errors: dict[int, int] = {}

    def read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        data = os.read(self.fd, 1 << 20)
        if not data:
            return False
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            if not line.strip():
                continue
            message = json.loads(line)
            if "id" not in message or "method" in message:
                continue
            key = message["id"]
            if key in self.ids:
                self.duplicates += 1
            self.ids[key] = self.ids.get(key, 0) + 1
            if "error" in message:
                code = message["error"]["code"]
                self.errors[code] = self.errors.get(code, 0) + 1
        return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("handler", "engine"), default="handler")
    parser.add_argument("--max-requests", type=int, default=400_000)
    parser.add_argument("--max-growth-mib", type=float, default=0, help="0: report only")
    parser.add_argument("--stalled-after", type=float, default=1.0, help="seconds without progress")
    parser.add_argument("--rss-of", type=int, help="measure this process and its children instead (a server)")
    parser.add_argument("agent", nargs="+")
    args = parser.parse_args()
    if args.rss_of:
        WATCHED.append(args.rss_of)
    method = HANDLER_METHOD if args.mode == "handler" else ENGINE_METHOD

    agent = subprocess.Popen(args.agent, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert agent.stdin is not None and agent.stdout is not None
    stdin, stdout = agent.stdin.fileno(), agent.stdout.fileno()
    answers = Answers(stdout)
    failures: list[str] = []

    # Warm up with one exchange, then take the baseline.
    os.write(stdin, request(0, HANDLER_METHOD))
    deadline = time.monotonic() + 30
    while 0 not in answers.ids and time.monotonic() < deadline:
        if not answers.read(0.5):
            break
    if 0 not in answers.ids:
        agent.kill()
        print(json.dumps({"error": "no answer to the first initialize"}))
        return 1
    time.sleep(0.2)
    baseline = peak = rss_kib(agent.pid)

    os.set_blocking(stdin, False)
    sent, pending = 0, b""
    last_progress = time.monotonic()
    while sent < args.max_requests or pending:
        if not pending:
            count = min(CHUNK, args.max_requests - sent)
            pending = b"".join(request(sent + 1 + i, method) for i in range(count))
            sent += count
        try:
            written = os.write(stdin, pending)
        except BlockingIOError:
            written = 0
        if written:
            pending = pending[written:]
            last_progress = time.monotonic()
            peak = max(peak, rss_kib(agent.pid))
            continue
        if time.monotonic() - last_progress > args.stalled_after:
            break
        select.select([], [stdin], [], 0.05)
        peak = max(peak, rss_kib(agent.pid))
    # What is left of the current chunk: finish its first line (it may be
    # partly written), reading answers meanwhile so neither side blocks;
    # the rest is never sent.
    took_all = not pending
    peak = max(peak, rss_kib(agent.pid))
    written_requests = sent - pending.count(b"\n")
    if pending:
        rest = pending[: pending.index(b"\n") + 1]
        while rest:
            try:
                rest = rest[os.write(stdin, rest) :]
            except BlockingIOError:
                answers.read(0.05)
        written_requests += 1
    os.set_blocking(stdin, True)
    flood_peak = peak

    deadline = time.monotonic() + 300
    expected = written_requests + 1
    while len(answers.ids) < expected and time.monotonic() < deadline:
        if not answers.read(1.0):
            break
        peak = max(peak, rss_kib(agent.pid))
    missing = expected - len(answers.ids)
    if missing:
        failures.append(f"{missing} answers missing")
    if answers.duplicates:
        failures.append(f"{answers.duplicates} answers duplicated")
    if args.mode == "engine" and answers.errors.get(-32601, 0) != written_requests:
        failures.append(f"expected {written_requests} -32601 answers, got {answers.errors}")

    os.write(stdin, request(-1, HANDLER_METHOD))
    deadline = time.monotonic() + 30
    while -1 not in answers.ids and time.monotonic() < deadline:
        if not answers.read(0.5):
            break
    if -1 not in answers.ids:
        failures.append("no answer to the final request")
    agent.stdin.close()
    try:
        agent.wait(timeout=15)
    except subprocess.TimeoutExpired:
        agent.kill()
        failures.append("the agent did not exit when its stdin closed")

    growth = (flood_peak - baseline) / 1024
    if args.max_growth_mib and growth > args.max_growth_mib:
        failures.append(f"grew {growth:.1f} MiB while flooded (bound {args.max_growth_mib} MiB)")
    print(
        json.dumps(
            {
                "mode": args.mode,
                "requests": written_requests,
                "took_all": took_all,
                "baseline_mib": round(baseline / 1024, 1),
                "growth_mib": round(growth, 1),
                "peak_mib_while_reading": round(peak / 1024, 1),
                "failures": failures,
            }
        )
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
