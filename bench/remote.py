"""Remote transports, measured: our Rust, Node and Python pairs and the
official TypeScript SDK's, each agent serving remote clients itself
(`--serve`: our `remote::Server` / `serveAgent` / `serve_agent`, the SDK's
`AcpServer`) and each client reaching it over WebSocket (and Streamable
HTTP), next to the same pair over stdio; same run, alternating, medians.
Ratios are against the official TypeScript pair over the same transport.
`make bench` writes the table to docs/benchmarks/remote.md; `--quick` (in
`make bench-quick`) runs each case once with a small N and checks only that
it completes."""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from impls import IMPLS, ROOT, build_node, build_python, run
from measure import ENV, TIME, measure, read_kb

PAIRS = ["acp-engine (Rust)", "acp-engine (Node)", "acp-engine (Python)", "official TypeScript SDK"]
BASELINE = "official TypeScript SDK"
TRANSPORTS = ["stdio", "websocket", "http"]
SCENARIOS = {"stream": 100_000, "rpc": 5_000}
QUICK_N = {"stream": 1_000, "rpc": 100}


def serve(agent, rss_file):
    """Start `agent --serve` on a free loopback port: (process, ws URL, http URL)."""
    # A session of its own: `stop` reaches the agent under `time` too.
    # %U %S: the serving process's CPU seconds (user, system); %M last, as read_kb reads it.
    server = subprocess.Popen([TIME, "-f", "%U %S %M", "-o", rss_file] + agent + ["--serve", "127.0.0.1:0"],
                              cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              start_new_session=True)
    urls = [server.stdout.readline().strip(), server.stdout.readline().strip()]
    if not (urls[0].startswith("ws://") and urls[1].startswith("http://")):
        stop(server)
        raise RuntimeError(f"{agent[-1]} --serve printed {urls}")
    return server, urls[0], urls[1]


def stop(server):
    """Stop the agent (`time`'s child: terminating `time` alone left it running),
    so `time` writes its peak RSS and exits; then kill whatever is left."""
    try:
        with open(f"/proc/{server.pid}/task/{server.pid}/children") as children:
            agents = [int(pid) for pid in children.read().split()]
    except OSError:
        agents = []
    for pid in agents:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    try:
        server.wait(10)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(server.pid, signal.SIGKILL)
    except OSError:
        pass
    server.wait()


def measure_remote(pair, transport, scenario, n, timeout):
    """One client run against a fresh server: (result, error)."""
    impl = IMPLS[pair]
    with tempfile.TemporaryDirectory() as tmp:
        rss_file = os.path.join(tmp, "server")
        server, ws_url, http_url = serve(impl["agent"], rss_file)
        url = ws_url if transport == "websocket" else http_url
        try:
            done = subprocess.run(impl["client"] + ["--scenario", scenario, "--n", str(n), "--", url],
                                  cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, "timeout"
        finally:
            stop(server)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if not lines:
            return None, f"exit {done.returncode}: {(done.stderr.strip().splitlines() or ['no output'])[-1][:160]}"
        result = json.loads(lines[-1])
        late = result.get("late") or 0
        if not result.get("ok") and not (late and result.get("count", 0) + late == n):
            return None, f"count {result.get('count')} of {n}"
        result["rss_agent_kb"] = read_kb(rss_file)
        result["server_cpu_s"] = read_cpu_s(rss_file)
        return result, None


def read_cpu_s(path):
    """User plus system CPU seconds from `time -f "%U %S %M"`, or None."""
    try:
        with open(path) as f:
            user, system = f.read().split()[-3:-1]
        return float(user) + float(system)
    except (OSError, ValueError):
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="each case once, small N (a smoke test)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--transports", default=",".join(TRANSPORTS))
    args = parser.parse_args()
    if not args.no_build:
        run(["cargo", "build", "--release", "-q", "-p", "acp-engine-bench"])
        build_node()
        build_python()
    transports = args.transports.split(",")
    sizes = QUICK_N if args.quick else SCENARIOS
    reps = 1 if args.quick else args.reps
    rates = {}  # (pair, transport, scenario) -> [messages per second]
    per_cpu = {}  # (pair, transport, scenario) -> [messages per serving-process CPU second]
    failed = False
    for scenario, n in sizes.items():
        for _ in range(reps):
            for transport in transports:
                for pair in PAIRS:
                    if transport == "stdio":
                        impl = IMPLS[pair]
                        result, error = measure(impl["client"], impl["agent"], scenario, n, timeout=600)
                    else:
                        result, error = measure_remote(pair, transport, scenario, n, timeout=600)
                    if error:
                        print(f"FAIL {pair} {transport} {scenario}: {error}", file=sys.stderr)
                        failed = True
                        continue
                    rates.setdefault((pair, transport, scenario), []).append(n / result["run_s"])
                    if result.get("server_cpu_s"):
                        per_cpu.setdefault((pair, transport, scenario), []).append(n / result["server_cpu_s"])
    page = table(rates, transports, sizes, reps) + cpu_table(per_cpu, transports, sizes)
    print(page)
    if not args.quick and not failed:
        with open(os.path.join(ROOT, "docs", "benchmarks", "remote.md"), "w") as f:
            f.write(page)
    sys.exit(1 if failed else 0)


def table(rates, transports, sizes, reps):
    lines = [
        "# Remote transports",
        "",
        "Each pair's agent serves remote clients itself (ours: `remote::Server` in Rust, `serveAgent` in "
        "Node, `serve_agent` in Python; the official SDK: `AcpServer` with its Node adapter and `ws`), and "
        "its client connects over WebSocket or Streamable HTTP; stdio is the same pair spawned as usual. Medians of "
        f"{reps} alternating runs, messages per second (`python3 bench/remote.py`, part of `make bench`); "
        f"× is against the official TypeScript pair over the same transport, same run. "
        f"Run {time.strftime('%Y-%m-%d')} on a 2-core VM.",
        "",
    ]
    return "\n".join(lines + rows(rates, transports, sizes, "failed")) + "\n"


def cpu_table(per_cpu, transports, sizes):
    """Messages per CPU second of the serving process (the agent that serves,
    with its server): what one core carries, against the official pair."""
    lines = [
        "",
        "## Messages per CPU second of the serving process",
        "",
        "The same runs: messages divided by the user and system CPU time of the process that serves "
        "(`/usr/bin/time`), so what one core of the server carries; × against the official TypeScript "
        "pair (its `AcpServer`).",
        "",
    ]
    remote = [transport for transport in transports if transport != "stdio"]
    return "\n".join(lines + rows(per_cpu, remote, sizes, "n/a")) + "\n"


def rows(rates, transports, sizes, missing):
    """A table of the pairs' medians by scenario and transport, with × against
    the official pair; `missing` where a pair has none."""
    lines = ["| scenario | transport | " + " | ".join(PAIRS) + " |", "|---|---|" + "---|" * len(PAIRS)]
    for scenario, n in sizes.items():
        for transport in transports:
            base = rates.get((BASELINE, transport, scenario))
            cells = []
            for pair in PAIRS:
                runs = rates.get((pair, transport, scenario))
                if not runs:
                    cells.append(missing)
                    continue
                rate = statistics.median(runs)
                ratio = f" ({rate / statistics.median(base):.1f}×)" if base and pair != BASELINE else ""
                cells.append(f"{rate:,.0f}{ratio}")
            lines.append(f"| {scenario} (N={n:,}) | {transport} | " + " | ".join(cells) + " |")
    return lines


if __name__ == "__main__":
    main()
