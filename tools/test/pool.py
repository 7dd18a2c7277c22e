#!/usr/bin/env python3
"""Run `make test`'s suites on two workers, each suite as soon as what it
drives has been built by the suites before it.

    pool.py [--workers N] [--plan]

Each suite runs through tools/test/lane.sh --log (its output in
target/test-logs/<suite>.log, one line to the terminal when it starts and
ends). Among the suites whose needs have passed, a free worker takes the one
with the longest chain of work behind it (its own minutes plus the longest
chain of the suites that need it), so the long chains start first and the
two cores stay busy to the end. Once a suite fails no other starts; the
running ones finish and the pool exits 1.

--plan prints the schedule the estimates give, without running anything.
"""

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LANE = os.path.join(ROOT, "tools", "test", "lane.sh")

# The language suites build the peers the process suites drive: the wheel and
# target/python-venv (test-python; test-node's interop rows run its agent),
# the npm tarball and target/node-app (test-node), target/go-prefix and
# target/go-bin (test-go), kotlin/target (test-kotlin). The bench smoke runs
# last, alone: it builds the Go pair into target/go-prefix and kotlin/target
# again, under the suites that run programs from them, and its programs take
# both cores at full speed.
# Minutes are what each took on the 2-core machine with another suite beside
# it; they only order the work.
LANGUAGES = ["test-python", "test-node", "test-go", "test-kotlin"]
# What every suite drives: the workspace's debug build and the official SDKs
# (interop/setup.sh). They run first, beside the C ABI check: its release
# build of the engine and the debug build fill each other's idle core
# (cargo locks each profile's directory on its own, so neither waits).
PREPARED = ["build", "test-setup"]
# The suites that need nothing prepared.
FIRST = PREPARED + ["abi-check"]
# Suites that compile a crate in release (maturin, the napi addon, the uniffi library, the
# bench): cargo builds one profile at a time, so two of them side by side take turns, each
# waiting out the other's build. One at a time, beside a suite that does not.
RELEASE_BUILDS = {"abi-check", "test-python", "test-node", "test-kotlin", "bench-quick"}
SUITES = {
    # suite: (minutes, needs; every suite but FIRST also needs PREPARED)
    "build": (3.0, []),
    "test-setup": (0.5, []),
    "abi-check": (3.0, []),
    "test-rust": (5.8, []),
    "test-python": (3.0, []),
    "test-node": (5.4, ["test-python"]),
    "test-go": (0.9, []),
    "test-c": (2.7, []),
    "test-kotlin": (4.3, []),
    "test-reliability": (2.7, LANGUAGES),
    "test-interop": (4.6, LANGUAGES),
    "test-remote": (2.7, LANGUAGES),
    "test-check": (1.5, ["test-python", "test-node", "test-go"]),
    "test-real": (5.2, ["test-python", "test-node", "test-go"]),
    "test-readme": (1.9, ["test-python", "test-node"]),
    "test-balancer": (0.7, ["test-python"]),
    "test-trace": (0.1, []),
    "test-view": (0.6, []),
    "bench-quick": (3.5, ["*"]),
}


def needs(name):
    """What a suite waits for (`*`: every other suite)."""
    listed = SUITES[name][1]
    if listed == ["*"]:
        return [other for other in SUITES if other != name]
    return listed if name in FIRST else PREPARED + listed


def chain_minutes():
    """Each suite's minutes plus the longest chain of suites that need it."""
    needed_by = {name: [other for other in SUITES if name in needs(other)] for name in SUITES}
    memo = {}

    def chain(name):
        if name not in memo:
            memo[name] = SUITES[name][0] + max((chain(after) for after in needed_by[name]), default=0)
        return memo[name]

    return {name: chain(name) for name in SUITES}


CHAINS = chain_minutes()


def next_suite(waiting, passed, running):
    """The ready suite with the longest chain behind it, or None."""
    building = any(name in RELEASE_BUILDS for name in running)
    ready = [
        name
        for name in waiting
        if all(need in passed for need in needs(name)) and not (building and name in RELEASE_BUILDS)
    ]
    return max(ready, key=CHAINS.__getitem__, default=None)


def plan(workers):
    """The schedule the estimates give: (start, suite, end) in minutes."""
    waiting, passed, running, rows, now = set(SUITES), set(), {}, [], 0.0
    while waiting or running:
        while len(running) < workers and (name := next_suite(waiting, passed, running)):
            waiting.discard(name)
            running[name] = now + SUITES[name][0]
            rows.append((now, name, running[name]))
        name = min(running, key=running.get)
        now = running.pop(name)
        passed.add(name)
    return rows


def run(workers):
    failed = os.path.join(ROOT, "target", "test-logs", "failed")
    waiting, passed, running = set(SUITES), set(), {}
    with ThreadPoolExecutor(workers) as pool:
        while waiting or running:
            while len(running) < workers and not os.path.exists(failed):
                name = next_suite(waiting, passed, running.values())
                if name is None:
                    break
                waiting.discard(name)
                running[pool.submit(subprocess.run, ["bash", LANE, "--log", name])] = name
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                name = running.pop(future)
                if future.result().returncode == 0:
                    passed.add(name)
    left = sorted(waiting)
    if left:
        print("pool: not run: " + ", ".join(left), flush=True)
    return 0 if not left and len(passed) == len(SUITES) else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="suites at once (default 2, the cores)")
    parser.add_argument("--plan", action="store_true", help="print the estimated schedule and exit")
    args = parser.parse_args()
    if args.plan:
        rows = plan(args.workers)
        for start, name, end in rows:
            print(f"{start:5.1f} - {end:5.1f} min  {name}")
        print(f"estimated: {max(end for _, _, end in rows):.1f} min of suites")
        return 0
    started = time.monotonic()
    status = run(args.workers)
    took = int(time.monotonic() - started)
    print(f"pool: {'passed' if status == 0 else 'FAILED'}: suites took {took // 60} min {took % 60} s", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
