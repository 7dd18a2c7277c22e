#!/usr/bin/env python3
"""Run every benchmark client against every benchmark agent (acp-engine in
Rust, C, Python and Node; the official Rust, Python and TypeScript SDKs) in
every scenario, several times, and report medians with min-max, setup time,
CPU per message and peak RSS, and each language's ratio against its official
SDK measured in the same run (absolute times on a shared machine are noise;
ratios hold).

`make bench` writes docs/benchmarks/ (README.md, results.json, chart.png);
`--quick` (`make bench-quick`, part of `make test`) is a smoke test: every
implementation's client against its own agent, once, with a small N, in
every scenario (every program runs; the cross pairs are the full run's), and
writes bench/results/ instead. A failing pair
is reported as FAIL, never dropped. The contract every program follows is in
bench/README.md.
"""
import argparse
import json
import os
import sys
import time

import report
from impls import IMPLS, PY, ROOT, build, machine, paired, versions
from measure import measure

# scenario -> (N for a full run, N for --quick)
SCENARIOS = {
    "stream": (50_000, 500),
    "rpc": (5_000, 50),
    "perm": (5_000, 50),
    "concurrent": (5_000, 50),
    "large": (2, 1),
    "setup": (1, 1),
}


# Repetitions per pair. Round trips swing most from run to run here, so
# their scenarios take more (medians of 5, interleaved).
DEFAULT_REPS = 3
ROUND_TRIP_REPS = 5
ROUND_TRIP_SCENARIOS = ("rpc", "perm")


def mode_of(reps):
    if reps:
        return f"median of {reps} runs per pair"
    return (f"median of {DEFAULT_REPS} runs per pair "
            f"({ROUND_TRIP_REPS} in {' and '.join(ROUND_TRIP_SCENARIOS)}), interleaved")


def official(name):
    return not name.startswith("acp-engine") and not IMPLS[name].get("floor")


def excused(record):
    """Failures that are the official SDKs' own, not ours: a pair of two
    official SDKs, or an official client that ended the turn before handling
    all of its updates (reported all the same)."""
    if official(record["client"]) and official(record["agent"]):
        return True
    return official(record["client"]) and record.get("late_only", False)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="small N, one repetition, each implementation with itself: a smoke test of every program")
    parser.add_argument("--reps", type=int,
                        help=f"repetitions per pair in every scenario (default {DEFAULT_REPS}, "
                             f"and {ROUND_TRIP_REPS} in {' and '.join(ROUND_TRIP_SCENARIOS)})")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated subset")
    parser.add_argument("--impls", help="comma-separated subset of the implementations (names as in the table)")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other scenarios' results from the report directory's results.json")
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--out", help="report directory (default docs/benchmarks, or bench/results with --quick)")
    args = parser.parse_args()
    def reps_of(scenario):
        if args.quick:
            return 1
        if args.reps:
            return args.reps
        return ROUND_TRIP_REPS if scenario in ROUND_TRIP_SCENARIOS else DEFAULT_REPS
    default_out = os.path.join(ROOT, "bench", "results") if args.quick else os.path.join(ROOT, "docs", "benchmarks")
    out = args.out or default_out
    if not args.no_build:
        build()
    if sys.executable != PY and os.path.exists(PY):
        # Go on in bench/.venv, which has matplotlib for the chart.
        os.execv(PY, [PY, os.path.abspath(__file__), *sys.argv[1:], "--no-build"])

    chosen = {name: impl for name, impl in IMPLS.items() if not args.impls or name in args.impls.split(",")}
    records = []
    started = time.monotonic()
    for scenario in args.scenarios.split(","):
        full_n, quick_n = SCENARIOS[scenario]
        n = quick_n if args.quick else full_n
        pairs = [(client_name, client, agent_name, agent)
                 for client_name, client in chosen.items() for agent_name, agent in chosen.items()
                 if paired(client_name, agent_name) and (client_name == agent_name or not args.quick)
                 and scenario in client.get("scenarios", SCENARIOS)]
        scenario_records = [{"scenario": scenario, "client": client_name, "agent": agent_name, "n": n,
                             "runs": [], "error": None} for client_name, _, agent_name, _ in pairs]
        # Each repetition goes through every pair before the next one starts:
        # a pair's runs are spread over the scenario's minutes, so a spell of
        # load on this shared machine does not fall on one pair's runs only.
        for _ in range(reps_of(scenario)):
            for (_, client, _, agent), record in zip(pairs, scenario_records):
                if record["error"]:
                    continue
                result, error = measure(client["client"], agent["agent"], scenario, n, timeout=300)
                if error:
                    record.update(runs=[], error=error)
                else:
                    record["runs"].append(result)
        for record in scenario_records:
            pair = f"{scenario} {record['client']} -> {record['agent']}"
            if any(run.get("late") for run in record["runs"]):
                record["late_only"] = True
                print(f"FAIL {pair}: updates after the turn's response (ordering)", file=sys.stderr)
            elif record["error"]:
                print(f"FAIL {pair}: {record['error']}", file=sys.stderr)
            records.append(record)

    earlier_mode = None
    if args.merge and os.path.exists(os.path.join(out, "results.json")):
        with open(os.path.join(out, "results.json")) as f:
            kept = json.load(f)
        earlier, earlier_mode = kept["records"], kept.get("meta", {}).get("mode")
        fresh = {(r["scenario"], r["client"], r["agent"]) for r in records}
        records = [r for r in earlier if (r["scenario"], r["client"], r["agent"]) not in fresh] + records
        order = list(SCENARIOS)
        records.sort(key=lambda r: order.index(r["scenario"]) if r["scenario"] in order else len(order))
    mode = "quick smoke run (one repetition, small N)" if args.quick else mode_of(args.reps)
    if args.merge:
        # Say so: the kept records are from an earlier run (which may say so itself).
        merged = (f"the pairs among {args.impls or 'all implementations'} in "
                  f"{args.scenarios.replace(',', ', ')} measured again later and merged into an earlier run")
        mode = f"{earlier_mode or mode}; {merged}"
    meta = {
        "date": report.today(),
        "machine": machine(),
        "mode": mode,
        "versions": versions(),
        "minutes": round((time.monotonic() - started) / 60, 1),
    }
    report.write(records, meta, out)
    with open(os.path.join(out, "README.md")) as f:
        print(f.read())
    failed = [r for r in records if r["error"] or r.get("late_only")]
    ours = [r for r in failed if not excused(r)]
    print(f"{len(records) - len(failed)} passed, {len(failed)} failed "
          f"({len(failed) - len(ours)} of them the official SDKs' own); report in {os.path.relpath(out, ROOT)}")
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main())
