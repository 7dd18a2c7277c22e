"""Check an `acp-engine trace` file from a whole interop session: at least
MIN messages, every verdict ok, every request answered. Prints a one-line
summary; exit status 1 (with the first problems) otherwise.

usage: trace_clean.py TRACE.jsonl [MIN]
"""
import json
import sys

path = sys.argv[1]
minimum = int(sys.argv[2]) if len(sys.argv) > 2 else 20
with open(path) as f:
    records = [json.loads(line) for line in f if line.strip()]
violations = [r for r in records if r["verdict"] != "ok"]
requests = sum(1 for r in records if r["kind"] == "request")
answered = sum(1 for r in records if "latency_us" in r)
methods = sorted({r["method"] for r in records if "method" in r})
problems = []
if len(records) < minimum:
    problems.append(f"only {len(records)} messages (expected at least {minimum})")
if violations:
    problems.append(f"{len(violations)} violations, first: {json.dumps(violations[0])[:600]}")
if answered != requests:
    problems.append(f"{requests} requests, {answered} answered")
if problems:
    print("; ".join(problems))
    sys.exit(1)
print(f"{len(records)} messages, all ok, {requests} requests answered; methods: {', '.join(methods)}")
