#!/usr/bin/env python3
"""Feed the malformed-input corpus to clients, then check they still work.

    python3 reliability/corpus_clients.py --agent "<real agent command>" NAME=CLIENT_COMMAND ...

Each client (an interop-contract client: `<client> <agent command...>`, see
interop/README.md) is run against reliability/hostile_agent.py, which sends
it every corpus case and checks its answers, then relays to the real agent:
the client must still complete its whole scenario and print `interop ok`.
Prints PASS/FAIL per client and case; the last line is "N passed, M failed".
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", required=True, help="the real agent the hostile agent relays to")
    parser.add_argument("--huge-bytes", type=int, default=1 << 30, help="size of the huge-line case (default 1 GiB)")
    parser.add_argument("clients", nargs="+", metavar="NAME=COMMAND")
    args = parser.parse_args()
    passed = failed = 0
    for spec in args.clients:
        name, _, command = spec.partition("=")
        with tempfile.TemporaryDirectory() as tmp:
            report = os.path.join(tmp, "report.jsonl")
            hostile = [sys.executable, os.path.join(HERE, "hostile_agent.py"), "--report", report,
                       "--huge-bytes", str(args.huge_bytes), "--", *shlex.split(args.agent)]
            try:
                done = subprocess.run(shlex.split(command) + hostile, capture_output=True, text=True, timeout=300)
                outcome = done.returncode == 0 and "interop ok" in done.stdout.splitlines()
                detail = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
            except subprocess.TimeoutExpired:
                outcome, detail = False, "timed out"
            verdicts = []
            if os.path.exists(report):
                with open(report) as f:
                    verdicts = [json.loads(line) for line in f if line.strip()]
        for verdict in verdicts:
            ok = verdict["ok"]
            print(f"{'PASS' if ok else 'FAIL'} {name}: {verdict['case']}{'' if ok else ': ' + verdict['detail']}")
            passed, failed = passed + ok, failed + (not ok)
        if not verdicts:
            print(f"FAIL {name}: no verdicts (the client never sent initialize?)")
            failed += 1
        print(f"{'PASS' if outcome else 'FAIL'} {name}: its whole scenario after the corpus"
              f"{'' if outcome else ': ' + detail}")
        passed, failed = passed + outcome, failed + (not outcome)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
