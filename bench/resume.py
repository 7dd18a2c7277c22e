"""Resumes, measured (part of `make bench`; `--quick` in `make bench-quick`
runs it once, small, and checks only that it completes): over Streamable
HTTP and WebSocket on loopback, how long a client whose connection is cut
mid-stream waits before messages flow again (reconnect time), and how fast
a resume sends again what a client missed (replay rate), next to how fast
the same messages came live. The official SDKs have no resume, so the
comparison is with our own live stream. Writes docs/benchmarks/resume.md."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target", "release", "resume")
TRANSPORTS = {"http": "Streamable HTTP", "websocket": "WebSocket"}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="once, small (a smoke test)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "acp-engine-bench", "--bin", "resume"],
                       cwd=ROOT, check=True)
    cuts, n, reps = (2, 1_000, 1) if args.quick else (20, 20_000, args.reps)
    runs = []
    for _ in range(reps):
        done = subprocess.run([BINARY, "--cuts", str(cuts), "--n", str(n)], cwd=ROOT, capture_output=True,
                              text=True, timeout=600)
        if done.returncode != 0:
            print(f"FAIL resume: exit {done.returncode}: {done.stderr.strip()[-300:]}", file=sys.stderr)
            sys.exit(1)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    page = table(runs, cuts, n)
    print(page)
    if not args.quick:
        with open(os.path.join(ROOT, "docs", "benchmarks", "resume.md"), "w") as f:
            f.write(page)


def table(runs, cuts, n):
    lines = [
        "# Resumes",
        "",
        f"`python3 bench/resume.py` (part of `make bench`), runs: {len(runs)}, on loopback, "
        f"{time.strftime('%Y-%m-%d')} on a 2-core VM. **Reconnect time**: a client with a reconnect "
        f"timeout, its connection cut by a proxy {cuts} times per run while its agent streams a message a "
        "millisecond; the longest wait between two messages around each cut (median and 90th percentile "
        "of all cuts). **Replay**: a client that read "
        f"{n:,} messages live, dropped its stream (or socket) and came back saying it had none: the "
        "messages per second of the resume, against the same messages live (median of runs). The official "
        "SDKs cannot resume; the baseline is our own live stream.",
        "",
        "| transport | reconnect p50 | reconnect p90 | live msg/s | replay msg/s | replay vs live |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key, name in TRANSPORTS.items():
        waits = sorted(ms for run in runs for ms in run[key]["reconnect_ms"])
        p90 = waits[min(len(waits) - 1, int(len(waits) * 0.9))]
        live = statistics.median(run[key]["live_per_s"] for run in runs)
        replay = statistics.median(run[key]["replay_per_s"] for run in runs)
        lines.append(f"| {name} | {statistics.median(waits):.1f} ms | {p90:.1f} ms | {live:,.0f} | "
                     f"{replay:,.0f} | {replay / live:.1f}× |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
