#!/usr/bin/env python3
"""Feed the malformed-input corpus (reliability/corpus/) to agents over a real
pipe and check each answer.

    python3 reliability/corpus_agents.py [--huge-bytes N] [--protocol-version 2] NAME=COMMAND [NAME=COMMAND ...]

For every agent and every case: write the case's bytes to the agent's stdin,
then a normal `initialize` request (the probe); the lines the agent writes
before the probe's answer must be exactly the case's expected responses (id
and error code, or a result), and the probe must be answered: the connection
still works. At the end the agent's peak RSS (VmHWM) must stay under a bound
(a 1 GiB line must not be buffered), and the agent must exit on EOF.
Prints PASS/FAIL per agent and case; the last line is "N passed, M failed".

With --protocol-version 2 the agents speak ACP v2 (alone, or v1 and v2): a
v2 `initialize` comes first (a v2 connection admits nothing before it),
and every `initialize` of the corpus and the probe ask for version 2 in
v2's shape; the expected answers are the same.
"""

import argparse
import json
import os
import queue
import shlex
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
RSS_LIMIT_MB = 256
CHUNK = 1 << 20


def load_cases(huge_bytes):
    with open(os.path.join(CORPUS, "cases.json")) as f:
        cases = json.load(f)["cases"]
    for case in cases:
        generate = case.get("generate")
        if generate and generate["kind"] == "huge_line":
            generate["bytes"] = min(generate["bytes"], huge_bytes)
    return cases


# `initialize` params by protocol version, without their closing brace.
INITIALIZE_PARAMS = {
    1: b'{"protocolVersion":1',
    2: b'{"protocolVersion":2,"info":{"name":"corpus","version":"1"}',
}


def chunks_of(case, version=1):
    """The case's bytes, in chunks (a generated 1 GiB line never sits in memory),
    with its `initialize` params for `version`."""
    generate = case.get("generate")
    params = INITIALIZE_PARAMS[version]
    if generate is None:
        with open(os.path.join(CORPUS, case["file"]), "rb") as f:
            yield f.read().replace(b'"params":{"protocolVersion":1}', b'"params":' + params + b"}")
    elif generate["kind"] == "deep_nesting":
        levels = generate["levels"]
        yield b'{"jsonrpc":"2.0","id":90,"method":"initialize","params":' + params + b',"x":'
        yield b"[" * levels + b"]" * levels + b"}}\n"
    elif generate["kind"] == "huge_line":
        left = generate["bytes"]
        yield b'{"jsonrpc":"2.0","id":91,"method":"initialize","params":' + params + b',"x":"'
        block = b"x" * CHUNK
        while left > 0:
            yield block[: min(left, CHUNK)]
            left -= CHUNK
        yield b'"}}\n'


class Agent:
    def __init__(self, command):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, data):
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def until(self, probe_id, timeout, expected):
        """Every message but the answer to `probe_id`, read until that answer
        came and at least `expected` others did (requests run concurrently:
        an answer may overtake the answers to earlier lines)."""
        seen = []
        answered = False
        deadline = time.monotonic() + timeout
        while not answered or len(seen) < expected:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no answer to the probe within {timeout} s; got {seen}")
            if line is None:
                raise AssertionError(f"the agent closed its stdout; got {seen}")
            message = json.loads(line)
            if message.get("id") == probe_id:
                if "result" not in message:
                    raise AssertionError(f"the probe failed: {message}")
                answered = True
            else:
                seen.append(message)
        return seen

    def peak_rss_mb(self):
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return 0.0


def matches(expected, got):
    """Same answers, in any order (by id, then code)."""
    if len(expected) != len(got):
        return False
    order = lambda m: json.dumps([m.get("id"), (m.get("error") or {}).get("code", m.get("code"))])  # noqa: E731
    for want, message in zip(sorted(expected, key=order), sorted(got, key=order)):
        if message.get("id") != want["id"]:
            return False
        if "code" in want and (message.get("error") or {}).get("code") != want["code"]:
            return False
        if want.get("result") and "result" not in message:
            return False
    return True


def initialize(id, version):
    """An `initialize` request line asking for `version`."""
    return b'{"jsonrpc":"2.0","id":' + json.dumps(id).encode() + b',"method":"initialize","params":' \
        + INITIALIZE_PARAMS[version] + b"}}\n"


def check_agent(name, command, cases, version):
    passed = failed = 0
    agent = Agent(command)

    def report(ok, what, detail=""):
        nonlocal passed, failed
        print(f"{'PASS' if ok else 'FAIL'} {name}: {what}{'' if ok or not detail else ': ' + detail}", flush=True)
        passed, failed = passed + ok, failed + (not ok)

    if version == 2:
        try:
            agent.send(initialize("handshake", version))
            agent.until("handshake", 10, 0)
            report(True, "v2 initialize")
        except (AssertionError, BrokenPipeError, OSError) as error:
            report(False, "v2 initialize", str(error))
    for number, case in enumerate(cases):
        probe = f"probe-{number}"
        try:
            for chunk in chunks_of(case, version):
                agent.send(chunk)
            agent.send(initialize(probe, version))
            got = agent.until(probe, 120 if case.get("generate") else 10, len(case["expect"]))
            ok = matches(case["expect"], got)
            report(ok, case["name"], f"expected {case['expect']}, got {got}")
        except (AssertionError, BrokenPipeError, OSError) as error:
            report(False, case["name"], str(error))
            break
    rss = agent.peak_rss_mb()
    report(rss < RSS_LIMIT_MB, f"peak RSS {rss:.0f} MiB (bound {RSS_LIMIT_MB} MiB)")
    try:
        agent.process.stdin.close()
        code = agent.process.wait(timeout=10)
        report(code == 0, f"exits on EOF (status {code})")
    except subprocess.TimeoutExpired:
        agent.process.kill()
        report(False, "exits on EOF", "still running 10 s after EOF")
    return passed, failed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--huge-bytes", type=int, default=1 << 30, help="size of the huge-line case (default 1 GiB)")
    parser.add_argument("--protocol-version", type=int, choices=(1, 2), default=1,
                        help="the ACP version the agents are initialized in (default 1)")
    parser.add_argument("agents", nargs="+", metavar="NAME=COMMAND")
    args = parser.parse_args()
    cases = load_cases(args.huge_bytes)
    passed = failed = 0
    for spec in args.agents:
        name, _, command = spec.partition("=")
        p, f = check_agent(name, shlex.split(command), cases, args.protocol_version)
        passed, failed = passed + p, failed + f
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
