#!/usr/bin/env python3
"""Run every benchmark client against every benchmark agent (acp-engine in
Rust, C, Python and Node; the official Rust, Python and TypeScript SDKs),
several times, and print medians with ratios of each language's pair of ours
against its official SDK's pair, measured in the same run (absolute times on
a shared machine are noise; ratios hold).

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
# One venv for both Python SDKs: our wheel and the official `acp` (its pins
# are interop/python/requirements.txt).
VENV = os.path.join(ROOT, "bench", ".venv")
PY = os.path.join(VENV, "bin", "python")
BENCH = os.path.join(ROOT, "bench")

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
    "acp-engine (Python)": {
        "client": [PY, os.path.join(BENCH, "python", "client.py")],
        "agent": [PY, os.path.join(BENCH, "python", "agent.py")],
    },
    "official Python SDK": {
        "client": [PY, os.path.join(BENCH, "official-python", "client.py")],
        "agent": [PY, os.path.join(BENCH, "official-python", "agent.py")],
    },
    "acp-engine (Node)": {
        "client": ["node", os.path.join(BENCH, "node", "client.mjs")],
        "agent": ["node", os.path.join(BENCH, "node", "agent.mjs")],
    },
    "official TypeScript SDK": {
        "client": ["node", os.path.join(BENCH, "official-ts", "client.mjs")],
        "agent": ["node", os.path.join(BENCH, "official-ts", "agent.mjs")],
    },
}
# Each language's pair of ours against its official pair (the ratios).
LANGUAGES = [
    ("Rust", "acp-engine (Rust)", "official Rust SDK"),
    ("Python", "acp-engine (Python)", "official Python SDK"),
    ("Node", "acp-engine (Node)", "official TypeScript SDK"),
]
OURS = "acp-engine (Rust)"
BASELINE = "official Rust SDK"
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
    build_python()
    build_node()


def build_python():
    """bench/.venv with our wheel (built by maturin) and the official SDK."""
    if not os.path.exists(PY):
        run([sys.executable, "-m", "venv", VENV])
    run([PY, "-m", "pip", "install", "-q", "--disable-pip-version-check", "maturin==1.16.0",
         "-r", os.path.join(ROOT, "interop", "python", "requirements.txt")])
    wheels = os.path.join(VENV, "wheels")
    run([os.path.join(VENV, "bin", "maturin"), "build", "--release", "--quiet", "-o", wheels],
        cwd=os.path.join(ROOT, "python"))
    wheel = sorted(os.path.join(wheels, w) for w in os.listdir(wheels) if w.endswith(".whl"))[-1]
    run([PY, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--force-reinstall", "--no-deps", wheel])


def build_node():
    """The addon in node/ (the bench imports the package from the tree) and
    the official TypeScript SDK (interop/ts/node_modules)."""
    run(["bash", os.path.join(ROOT, "interop", "setup.sh")])
    node = os.path.join(ROOT, "node")
    if not os.path.isdir(os.path.join(node, "node_modules", "@napi-rs")):
        run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=node)
    run(["npm", "run", "--silent", "build"], cwd=node)


def run(cmd, cwd=ROOT):
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, cwd=cwd, check=True, stdout=sys.stderr)


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
    if not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"exit {done.returncode}: {tail[:160]}"
    result = json.loads(lines[-1])
    if not result.get("ok"):
        late = result.get("late") or 0
        if late and result.get("count", 0) + late == n:
            # Everything arrived, but some updates after the turn's answer:
            # measured, and flagged as an ordering failure in the table.
            result["late"] = late
        else:
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
    misordered.clear()
    failures = 0
    for scenario, (full_n, quick_n, unit) in SCENARIOS.items():
        n = quick_n if args.quick else full_n
        for client_name, client in IMPLS.items():
            if "client" not in client:
                continue
            for agent_name, agent in IMPLS.items():
                rates, setups, cpus, error, late = [], [], [], None, 0
                for _ in range(reps):
                    result, error = measure(client["client"], agent["agent"], scenario, n, timeout=300)
                    if error:
                        break
                    late = max(late, result.get("late", 0))
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
                    if late:
                        # Reported, not hidden: the turn ended before all its updates.
                        failures += 1
                        misordered[(scenario, client_name, agent_name)] = late
                        print(f"FAIL {scenario} {client_name} -> {agent_name}: {late} of {n} updates "
                              "arrived after the turn's response", file=sys.stderr)
    print_table(rows, reps, args.quick)
    print(f"{len(rows) - failures} passed, {failures} failed")
    return 1 if failures else 0


# (scenario, client, agent) -> most updates seen after the turn's response
misordered = {}


def print_table(rows, reps, quick):
    print(f"\n## acp-engine against the official SDKs ({'quick smoke run' if quick else f'median of {reps}'})\n")
    print(f"Machine: {os.cpu_count()} cores; {time.strftime('%Y-%m-%d')}; each client spawns each agent.\n")
    print("| scenario | client | agent | rate (median) | min - max | setup ms | CPU µs/msg (both processes) |")
    print("|---|---|---|---:|---:|---:|---:|")
    for scenario, client, agent, median, lo, hi, setup, cpu in rows:
        unit = SCENARIOS[scenario][2]
        if median is None:
            print(f"| {scenario} | {client} | {agent} | FAIL | {lo} | | |")
        else:
            flag = " (FAIL: order †)" if (scenario, client, agent) in misordered else ""
            print(f"| {scenario} | {client} | {agent} | {median:,.0f} {unit}{flag} | {lo:,.0f} - {hi:,.0f} "
                  f"| {setup:.1f} | {cpu:.1f} |")
    if misordered:
        print("\n† The client saw the turn's response before all of its `session/update` notifications "
              "(up to " + ", ".join(f"{late} in {c} -> {a}" for (_, c, a), late in misordered.items())
              + "): an ordering failure, reported as FAIL; the rate is shown for comparison.")
    print("\nRatios: each language's pair of ours against its official SDK's pair, same run:\n")
    rates = {(r[0], r[1], r[2]): r[3] for r in rows}
    cpus = {(r[0], r[1], r[2]): r[7] for r in rows}
    setups = {(r[0], r[1], r[2]): r[6] for r in rows}
    for language, ours, official in LANGUAGES:
        for scenario in SCENARIOS:
            mine = rates.get((scenario, ours, ours))
            base = rates.get((scenario, official, official))
            if mine and base:
                cpu = cpus[(scenario, official, official)] / cpus[(scenario, ours, ours)]
                note = " (the official pair failed on order †)" if (scenario, official, official) in misordered else ""
                print(f"- {language}, {scenario}: {mine / base:.1f}x the official SDK's rate "
                      f"({mine:,.0f} vs {base:,.0f}){note}, {cpu:.1f}x less CPU per message; "
                      f"setup {setups[(scenario, ours, ours)]:.0f} ms vs {setups[(scenario, official, official)]:.0f} ms")
            else:
                print(f"- {language}, {scenario}: n/a (a pair failed)")
    for scenario in SCENARIOS:
        c_agent = rates.get((scenario, OURS, C_AGENT))
        base = rates.get((scenario, BASELINE, BASELINE))
        if c_agent and base:
            print(f"- C agent (driven by our Rust client), {scenario}: {c_agent / base:.1f}x the official Rust pair's rate")


if __name__ == "__main__":
    sys.exit(main())
