"""An agent that plays its part of a scripted conversation.

usage: scripted_agent.py SCRIPT.jsonl

Each script line is {"from": "client"|"agent", "line": <message or raw
text>, ...}. For a client line it reads one line from stdin and checks it
is the one expected (a message in any key order); for an agent line it writes it. Then it waits for EOF.
"""
import json
import sys


def wire(step):
    line = step["line"]
    text = line if isinstance(line, str) else json.dumps(line, separators=(",", ":"))
    return text + "\n"


def same(line, got):
    """A message matches whatever its key order; raw text exactly."""
    if isinstance(line, str):
        return got == line + "\n"
    try:
        return got.endswith("\n") and json.loads(got) == line
    except ValueError:
        return False


def main():
    with open(sys.argv[1]) as f:
        steps = [json.loads(line) for line in f if line.strip()]
    for number, step in enumerate(steps, 1):
        expected = wire(step)
        if step["from"] == "agent":
            sys.stdout.write(expected)
            sys.stdout.flush()
            continue
        got = sys.stdin.readline()
        if not same(step["line"], got):
            sys.stderr.write(f"step {number}: expected {expected!r}, got {got!r}\n")
            sys.exit(1)
    sys.stdin.read()


main()
