"""A peer that stops reading, for the language suites' limit tests: it
writes COUNT requests to its stdout without reading its stdin, until its
writes make no progress for a second (the other side stopped reading);
then, with --read, it reads every answer and reports what it saw in a
`flood/report` notification ({sent, answered, duplicates, stalled}) and
waits for EOF; without it, it never reads and sleeps.

    python3 flood_peer.py COUNT [--read]
"""

import json
import os
import select
import sys
import time

REQUEST_METHOD = "flood/work"
REPORT_METHOD = "flood/report"


def main() -> None:
    count = int(sys.argv[1])
    read = "--read" in sys.argv[2:]
    out, inp = sys.stdout.fileno(), sys.stdin.fileno()
    os.set_blocking(out, False)
    # One line per write: a pipe write of at most PIPE_BUF bytes is all or
    # nothing, so the stream never ends in half a request.
    sent, last = 0, time.monotonic()
    while sent < count:
        line = json.dumps({"jsonrpc": "2.0", "id": sent, "method": REQUEST_METHOD, "params": {}}) + "\n"
        try:
            os.write(out, line.encode())
            sent, last = sent + 1, time.monotonic()
        except BlockingIOError:
            if time.monotonic() - last > 1.0:
                break
            select.select([], [out], [], 0.05)
        except BrokenPipeError:
            return
    if not read:
        time.sleep(60)
        return
    os.set_blocking(out, True)
    seen: dict = {}
    buffer = b""
    while len(seen) < sent:
        data = os.read(inp, 1 << 20)
        if not data:
            break
        buffer += data
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            message = json.loads(line)
            if "id" in message and "method" not in message:
                seen[message["id"]] = seen.get(message["id"], 0) + 1
    report = {
        "sent": sent,
        "answered": len(seen),
        "duplicates": sum(n - 1 for n in seen.values()),
        "stalled": sent < count,
    }
    os.write(out, (json.dumps({"jsonrpc": "2.0", "method": REPORT_METHOD, "params": report}) + "\n").encode())
    sys.stdin.read()


if __name__ == "__main__":
    main()
