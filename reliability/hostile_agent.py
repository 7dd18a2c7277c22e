#!/usr/bin/env python3
"""An agent that greets its client with the malformed-input corpus.

    hostile_agent.py --report FILE [--huge-bytes N] -- <real agent command...>

A client under test spawns this as its agent. When the client's first
message (its `initialize` request) arrives, this sends the client every
corpus case (reliability/corpus/), each followed by a probe request
(`_probe/ping`, which the client must answer, with a result or an error),
and checks the client's answers against the case's `client_expect` (or
`expect`). Then it starts the real agent and relays everything both ways, so
the client's own scenario must still pass on the same connection. The
verdict per case goes to FILE as JSON lines.
"""

import argparse
import json
import subprocess
import sys
import threading
import time

from corpus_agents import load_cases, chunks_of, matches


def read_message(stream):
    while True:
        line = stream.readline()
        if not line:
            return None
        if line.strip():
            return json.loads(line)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--report", required=True)
    parser.add_argument("--huge-bytes", type=int, default=1 << 30)
    parser.add_argument("agent", nargs="+")
    args = parser.parse_args()
    client_in = sys.stdin.buffer
    client_out = sys.stdout.buffer

    first = client_in.readline()
    verdicts = []
    for number, case in enumerate(load_cases(args.huge_bytes)):
        expected = case.get("client_expect", case["expect"])
        probe = f"probe-{number}"
        started = time.monotonic()
        for chunk in chunks_of(case):
            client_out.write(chunk)
        client_out.write(json.dumps({"jsonrpc": "2.0", "id": probe, "method": "_probe/ping", "params": {}}).encode()
                         + b"\n")
        client_out.flush()
        got, answered = [], False
        while not answered or len(got) < len(expected):
            message = read_message(client_in)
            if message is None:
                verdicts.append({"case": case["name"], "ok": False, "detail": "the client hung up"})
                break
            if message.get("id") == probe:
                answered = True
            else:
                got.append(message)
        else:
            ok = matches(expected, got)
            verdicts.append({"case": case["name"], "ok": ok, "ms": round((time.monotonic() - started) * 1000),
                             "detail": "" if ok else f"expected {expected}, got {got}"})
            continue
        break
    with open(args.report, "w") as f:
        for verdict in verdicts:
            f.write(json.dumps(verdict) + "\n")

    # The real agent, relayed both ways, starting with the held first message.
    agent = subprocess.Popen(args.agent, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def to_client():
        for line in agent.stdout:
            client_out.write(line)
            client_out.flush()

    relay = threading.Thread(target=to_client, daemon=True)
    relay.start()
    agent.stdin.write(first)
    agent.stdin.flush()
    for line in client_in:
        agent.stdin.write(line)
        agent.stdin.flush()
    agent.stdin.close()
    agent.wait()
    relay.join(timeout=5)


if __name__ == "__main__":
    main()
