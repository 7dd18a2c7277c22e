#!/usr/bin/env python3
"""Run every benchmark client against every benchmark agent, several times,
and print medians with ratios against the official SDK measured in the same
run (absolute times on a shared machine are noise; ratios hold).

The contract every implementation follows is in bench/README.md.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINE_BIN = os.path.join(ROOT, "target", "release")
OFFICIAL_DIR = os.path.join(ROOT, "bench", "official-rust")
OFFICIAL_BIN = os.path.join(OFFICIAL_DIR, "target", "release")

IMPLS = {
    "acp-engine (Rust)": {
        "client": [os.path.join(ENGINE_BIN, "engine-client")],
        "agent": [os.path.join(ENGINE_BIN, "engine-agent")],
    },
    "official Rust SDK": {
        "client": [os.path.join(OFFICIAL_BIN, "official-client")],
        "agent": [os.path.join(OFFICIAL_BIN, "official-agent")],
    },
    # The C ABI (libacp_engine) has a benchmark agent only: every client drives it.
    "acp-engine (C)": {
        "agent": [os.path.join(ENGINE_BIN, "c-bench-agent")],
    },
}
BASELINE = "official Rust SDK"
OURS = "acp-engine (Rust)"
C_AGENT = "acp-engine (C)"

# scenario -> (N for a full run, N for --quick, unit label)
SCENARIOS = {
    "stream": (100_000, 1_000, "notifications/s"),
    "rpc": (10_000, 100, "round trips/s"),
}


def build():
    run(["cargo", "build", "--release", "-q", "-p", "acp-engine-bench", "-p", "acp-engine-ffi"])
    run(["cargo", "build", "--release", "-q", "--manifest-path", os.path.join(OFFICIAL_DIR, "Cargo.toml")])
    run(["cc", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", "include", "bench/c/agent.c",
         "-L", ENGINE_BIN, "-lacp_engine", f"-Wl,-rpath,{ENGINE_BIN}", "-o", os.path.join(ENGINE_BIN, "c-bench-agent")])


def run(cmd):
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True)


def measure(client, agent, scenario, n, timeout):
    """One run of one pair: the client's JSON line, or an error string."""
    cmd = client + ["--scenario", scenario, "--n", str(n), "--"] + agent
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"exit {done.returncode}: {tail[:160]}"
    result = json.loads(lines[-1])
    if not result.get("ok"):
        return None, f"count {result.get('count')} != {n}"
    # CPU time of the client and the agent it spawned and reaped, for the
    # whole run (setup included): what the SDKs cost, whatever the clock.
    result["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result, None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small N, one repetition: a smoke test of every pair")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    reps = 1 if args.quick else args.reps
    if not args.no_build:
        build()

    rows = []  # (scenario, client, agent, median rate, min, max, median setup ms, median CPU us/msg)
    failures = 0
    for scenario, (full_n, quick_n, unit) in SCENARIOS.items():
        n = quick_n if args.quick else full_n
        for client_name, client in IMPLS.items():
            if "client" not in client:
                continue
            for agent_name, agent in IMPLS.items():
                rates, setups, cpus, error = [], [], [], None
                for _ in range(reps):
                    result, error = measure(client["client"], agent["agent"], scenario, n, timeout=300)
                    if error:
                        break
                    rates.append(n / result["run_s"])
                    setups.append(result["setup_s"] * 1000)
                    cpus.append(result["cpu_s"] * 1e6 / n)
                if error:
                    failures += 1
                    rows.append((scenario, client_name, agent_name, None, error, None, None, None))
                    print(f"FAIL {scenario} {client_name} -> {agent_name}: {error}", file=sys.stderr)
                else:
                    rows.append((scenario, client_name, agent_name, statistics.median(rates), min(rates),
                                 max(rates), statistics.median(setups), statistics.median(cpus)))
    print_table(rows, reps, args.quick)
    print(f"{len(rows) - failures} passed, {failures} failed")
    return 1 if failures else 0


def print_table(rows, reps, quick):
    print(f"\n## acp-engine (Rust, C) vs the official Rust SDK ({'quick smoke run' if quick else f'median of {reps}'})\n")
    print(f"Machine: {os.cpu_count()} cores; {time.strftime('%Y-%m-%d')}; each client spawns each agent.\n")
    print("| scenario | client | agent | rate (median) | min - max | setup ms | CPU µs/msg (both processes) |")
    print("|---|---|---|---:|---:|---:|---:|")
    for scenario, client, agent, median, lo, hi, setup, cpu in rows:
        unit = SCENARIOS[scenario][2]
        if median is None:
            print(f"| {scenario} | {client} | {agent} | FAIL | {lo} | | |")
        else:
            print(f"| {scenario} | {client} | {agent} | {median:,.0f} {unit} | {lo:,.0f} - {hi:,.0f} "
                  f"| {setup:.1f} | {cpu:.1f} |")
    print("\nRatios (ours/ours against official/official, same run):\n")
    rates = {(r[0], r[1], r[2]): r[3] for r in rows}
    cpus = {(r[0], r[1], r[2]): r[7] for r in rows}
    for scenario in SCENARIOS:
        ours = rates.get((scenario, OURS, OURS))
        base = rates.get((scenario, BASELINE, BASELINE))
        if ours and base:
            cpu = cpus[(scenario, BASELINE, BASELINE)] / cpus[(scenario, OURS, OURS)]
            print(f"- {scenario}: {ours / base:.1f}x the official Rust SDK's rate, {cpu:.1f}x less CPU per message")
        else:
            print(f"- {scenario}: n/a (a pair failed)")
        c_agent = rates.get((scenario, OURS, C_AGENT))
        if c_agent and base:
            print(f"- {scenario}, the C agent (driven by our Rust client): {c_agent / base:.1f}x the official pair's rate")


if __name__ == "__main__":
    sys.exit(main())
