"""The benchmark report: a Markdown page (headline ratios per language, setup
and memory, then every client × agent pair per scenario), the raw results as
JSON, and a chart (matplotlib, PNG)."""

import json
import os
import time

from impls import IMPLS, LANGUAGES

SCENARIO_UNITS = {
    "stream": "notifications/s",
    "rpc": "round trips/s",
    "perm": "permission round trips/s",
    "concurrent": "requests/s (all in flight)",
    "large": "16 MiB round trips/s",
    "setup": "ms (spawn + initialize + session/new)",
}


def summarize(record):
    """Median and spread of one pair's runs."""
    runs = record["runs"]
    if not runs:
        return None
    def median(values):
        values = sorted(values)
        middle = len(values) // 2
        return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
    n = record["n"]
    rates = [n / r["run_s"] for r in runs]
    rss_client = [r["rss_client_kb"] for r in runs if r.get("rss_client_kb")]
    rss_agent = [r["rss_agent_kb"] for r in runs if r.get("rss_agent_kb")]
    return {
        "rate": median(rates), "min": min(rates), "max": max(rates),
        "setup_ms": median([r["setup_s"] * 1000 for r in runs]),
        "cpu_us": median([r["cpu_s"] * 1e6 / n for r in runs]),
        "rss_client_mb": max(rss_client) / 1024 if rss_client else None,
        "rss_agent_mb": max(rss_agent) / 1024 if rss_agent else None,
        "late": max(r.get("late", 0) for r in runs),
        # Round-trip latencies, from the clients that report them (the floor).
        "p50_us": median([r["p50_us"] for r in runs]) if all("p50_us" in r for r in runs) else None,
        "p99_us": median([r["p99_us"] for r in runs]) if all("p99_us" in r for r in runs) else None,
    }


def value(record, scenario):
    """A pair's headline figure: the rate, or the setup time in ms."""
    summary = summarize(record)
    if summary is None:
        return None
    return summary["setup_ms"] if scenario == "setup" else summary["rate"]


def cell(record, scenario):
    summary = summarize(record)
    if summary is None:
        return f"FAIL ({record['error']})"
    if scenario == "setup":
        text = f"{summary['setup_ms']:.0f} ms"
    else:
        text = f"{summary['rate']:,.0f}"
        if summary["max"] > summary["min"]:
            text += f"<br><sub>{short(summary['min'])}–{short(summary['max'])}</sub>"
    if summary["late"]:
        text += " FAIL†"
    return text


def short(rate):
    """A rate in a few characters: 950, 12.3k, 456k, 1.2M."""
    if rate >= 1e6:
        return f"{rate / 1e6:.1f}M"
    if rate >= 1e5:
        return f"{rate / 1e3:.0f}k"
    if rate >= 1e3:
        return f"{rate / 1e3:.1f}k"
    return f"{rate:.0f}" if rate >= 10 else f"{rate:.1f}"


def markdown(records, meta):
    by_key = {(r["scenario"], r["client"], r["agent"]): r for r in records}
    scenarios = list(dict.fromkeys(r["scenario"] for r in records))
    present = set(r["client"] for r in records)
    # The SDKs' pairs; the floor has a section of its own.
    names = [name for name in IMPLS if name in present and not IMPLS[name].get("floor")]
    lines = [
        "# acp-engine benchmarks",
        "",
        f"Measured {meta['date']} on {meta['machine']}: {meta['mode']}. Every client spawns every agent "
        "over real pipes; each process's peak RSS comes from `/usr/bin/time`. Reproduce with `make bench` "
        "(`python3 bench/run.py`; the contract every program follows is in `bench/README.md`).",
        "",
        "Versions: " + "; ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".",
        "",
        "![rates of each SDK's own client/agent pair](chart.png)",
        "",
        "## Ours against the official SDK of the same language",
        "",
        "Each cell: our client and agent against the official SDK's client and agent, same run "
        "(C and Go are compared with the official Rust SDK: there is none in C or Go). Higher is better, "
        "except setup.",
        "",
        "| language | " + " | ".join(scenarios) + " |",
        "|---|" + "---:|" * len(scenarios),
    ]
    unmeasured = False
    for language, ours, official in LANGUAGES:
        if ours not in present:
            continue
        row = [language]
        for scenario in scenarios:
            mine = by_key.get((scenario, ours, ours))
            base = by_key.get((scenario, official, official))
            a = value(mine, scenario) if mine else None
            b = value(base, scenario) if base else None
            if mine is None and scenario not in IMPLS[ours].get("scenarios", (scenario,)):
                row.append("—")  # not a scenario of these programs (see bench/impls.py)
                unmeasured = True
            elif a is None or b is None:
                row.append("n/a (a pair failed)")
            elif scenario == "setup":
                row.append(f"{a:.0f} ms vs {b:.0f} ms")
            else:
                row.append(f"**{a / b:.1f}×** ({a:,.0f} vs {b:,.0f})")
        lines.append("| " + " | ".join(row) + " |")
    if unmeasured:
        lines += ["", "—: not a scenario of those programs (ACP v2 has no client file system: `bench/README.md`)."]
    lines += through_the_c_library(by_key, scenarios, present)
    lines += against_the_floor(by_key, present)
    lines += large_against_the_floor(by_key, present)
    lines += node_against_the_web_stream_floor(by_key, present)
    lines += setup_against_the_python_floor(by_key, present)
    lines += [
        "",
        "## Memory (peak RSS of each SDK's own pair, stream scenario)",
        "",
        "| implementation | client MiB | agent MiB | CPU µs per message (both) |",
        "|---|---:|---:|---:|",
    ]
    for name in names:
        record = by_key.get(("stream", name, name))
        summary = summarize(record) if record else None
        if summary:
            lines.append(f"| {name} | {summary['rss_client_mb']:.1f} | {summary['rss_agent_mb']:.1f} "
                         f"| {summary['cpu_us']:.1f} |")
    for scenario in scenarios:
        agents = [name for name in names if "agent" in IMPLS[name]]
        lines += [
            "",
            f"## {scenario}: {SCENARIO_UNITS.get(scenario, '')} (client ↓, agent →; median, min–max below)",
            "",
            "| client \\ agent | " + " | ".join(agents) + " |",
            "|---|" + "---:|" * len(agents),
        ]
        for client in (name for name in names if "client" in IMPLS[name]):
            row = [client] + [cell(by_key[(scenario, client, agent)], scenario)
                              if (scenario, client, agent) in by_key else "" for agent in agents]
            lines.append("| " + " | ".join(row) + " |")
    if any(summarize(r) and summarize(r)["late"] for r in records):
        lines += ["", "† The client saw the turn's response before all of its `session/update` "
                  "notifications were handled: an ordering failure (counted as FAIL), rate shown for comparison."]
    failed = [r for r in records if not r["runs"]]
    if failed:
        lines += ["", "## Failures", ""]
        lines += [f"- {r['scenario']}: {r['client']} → {r['agent']}: {r['error']}" for r in failed]
    return "\n".join(lines) + "\n"


def latency(summary):
    """A cell's round-trip latencies (p50, p99), as the pair's client measured them; empty when none did."""
    if summary["p50_us"] is None:
        return ""
    return f"<br><sub>p50 {summary['p50_us']:.0f} µs, p99 {summary['p99_us']:.0f} µs</sub>"


PIPE_FLOOR = "pipe floor (C)"


def against_the_floor(by_key, present):
    """Each language's own pair's round trips as a fraction of the pipe floor."""
    floor = PIPE_FLOOR
    scenarios = [s for s in ("rpc", "perm") if floor in present and (s, floor, floor) in by_key]
    if not scenarios:
        return []
    names = [name for name in IMPLS if not IMPLS[name].get("floor") and name in present
             # not the programs without round trips (the v2 ones)
             and set(scenarios) & set(IMPLS[name].get("scenarios", scenarios))]
    return [
        "",
        "## Round trips against the pipe floor",
        "",
        "The floor: two C processes bouncing the scenario's lines over pipes, both blocked in `read` "
        "between them, no SDK and no JSON parsing (`bench/floor/floor.c`), in the same run. Each cell: "
        "a language's own client/agent pair, round trips/s, the fraction of the floor's, and the round "
        "trips' p50 and p99 latency as its client saw them (from one request's arrival to the next's).",
        "",
    ] + floor_table(by_key, floor, scenarios, names, with_latency=True)


def large_against_the_floor(by_key, present):
    """Each pair's 16 MiB round trips as a fraction of the pipe floor's, and
    the most that floor lets any pair be against each official SDK."""
    floor = PIPE_FLOOR
    record = by_key.get(("large", floor, floor))
    base = summarize(record) if record else None
    if base is None:
        return []
    names = [name for name in IMPLS if not IMPLS[name].get("floor") and name in present
             and ("large", name, name) in by_key]
    lines = [
        "",
        "## Large messages against the pipe floor",
        "",
        "The floor: the same two C processes moving the `large` scenario's lines (16 MiB of content in "
        "an `fs/write_text_file` request and in an `fs/read_text_file` answer, each round), each line "
        "written from one prepared buffer and read into one, no SDK and no JSON parsing, over pipes of "
        "the kernel's default size as every pair's, in the same run. Each cell: a pair's rounds/s and "
        "the fraction of the floor's.",
        "",
        "| implementation | large |",
        "|---|---:|",
        f"| {floor} | {base['rate']:,.1f} |",
    ]
    for name in names:
        mine = summarize(by_key[("large", name, name)])
        lines.append(f"| {name} | " + ("FAIL" if mine is None else
                                       f"{mine['rate']:,.1f} ({mine['rate'] / base['rate']:.0%})") + " |")
    ceilings = []
    for official in dict.fromkeys(official for _, _, official in LANGUAGES):
        theirs = by_key.get(("large", official, official))
        rate = summarize(theirs)["rate"] if theirs and summarize(theirs) else None
        if rate:
            ceilings.append(f"{official} {base['rate'] / rate:.1f}×")
    if ceilings:
        lines += ["", "The floor against each official SDK, the most any pair can be against it in `large`: "
                  + ", ".join(ceilings) + "."]
    return lines


def floor_table(by_key, floor, scenarios, names, with_latency):
    """A table of `names`' own pairs in `scenarios`, each cell its rate and
    the fraction of `floor`'s (and, `with_latency`, its p50 and p99)."""
    base = {s: summarize(by_key[(s, floor, floor)]) for s in scenarios}
    lines = [
        "| implementation | " + " | ".join(scenarios) + " |",
        "|---|" + "---:|" * len(scenarios),
        "| " + " | ".join([floor] + ["FAIL" if base[s] is None else f"{base[s]['rate']:,.0f}{latency(base[s])}"
                                     for s in scenarios]) + " |",
    ]
    for name in names:
        row = [name]
        for scenario in scenarios:
            record = by_key.get((scenario, name, name))
            mine = summarize(record) if record else None
            if mine is None or base[scenario] is None:
                row.append("n/a")
            else:
                row.append(f"{mine['rate']:,.0f} ({mine['rate'] / base[scenario]['rate']:.0%})"
                           + (latency(mine) if with_latency else ""))
        if any(cell != "n/a" for cell in row[1:]):
            lines.append("| " + " | ".join(row) + " |")
    return lines


NODE_WEB_STREAM_FLOOR = "Node Web-stream floor (toWeb adapters)"


def node_against_the_web_stream_floor(by_key, present):
    """The Node pairs against the least a pair over Node's Web-stream adapters costs."""
    floor = NODE_WEB_STREAM_FLOOR
    scenarios = [s for s in IMPLS[floor]["scenarios"] if floor in present and (s, floor, floor) in by_key]
    if not scenarios:
        return []
    names = [name for name in dict.fromkeys(name for language, ours, official in LANGUAGES
                                            if language.startswith("Node") for name in (official, ours))
             if name in present]
    return [
        "",
        "## Node over Web-stream adapters against their floor",
        "",
        "The floor: two Node processes moving the scenario's lines through Node's Web-stream adapters "
        "(`Readable.toWeb`, `Writable.toWeb`: what the official TypeScript SDK's programs hand "
        "`ndJsonStream`), one awaited write per line, no SDK and no JSON parsing "
        "(`bench/floor/node_web_streams.mjs`), in the same run. Each cell: a Node pair, its rate and the "
        "fraction of the floor's. The pairs on the engine's own streams (`stdioStream()`, "
        "`spawnStream()`) do not go through the adapters, and pass the floor.",
        "",
    ] + floor_table(by_key, floor, scenarios, names, with_latency=False)


PYTHON_SETUP_FLOOR = "Python setup floor (asyncio + pydantic)"


def setup_against_the_python_floor(by_key, present):
    """The Python pairs' setup against the least a pydantic-based Python pair's costs."""
    record = by_key.get(("setup", PYTHON_SETUP_FLOOR, PYTHON_SETUP_FLOOR))
    floor = summarize(record) if record else None
    if floor is None:
        return []
    lines = [
        "",
        "## Python setup against its floor",
        "",
        "The floor: a Python client and agent with asyncio and pydantic and nothing else "
        "(`bench/floor/python_client.py`), timed as the official Python SDK's bench client is: from after "
        "its asyncio import, through importing pydantic and defining a model, spawning the agent (which "
        "imports both), `initialize` and `session/new`, in the same run. Each cell: a pair's setup, and "
        "what it costs beyond the floor (our own Python API imports no pydantic: it comes in under it).",
        "",
        "| implementation | setup | beyond the floor |",
        "|---|---:|---:|",
        f"| {PYTHON_SETUP_FLOOR} | {floor['setup_ms']:.0f} ms | |",
    ]
    python = dict.fromkeys(name for language, ours, official in LANGUAGES if language.startswith("Python")
                           for name in (ours, official))
    for name in python:
        record = by_key.get(("setup", name, name)) if name in present else None
        mine = summarize(record) if record else None
        if mine is not None:
            lines.append(f"| {name} | {mine['setup_ms']:.0f} ms | {mine['setup_ms'] - floor['setup_ms']:+.0f} ms |")
    return lines


def through_the_c_library(by_key, scenarios, present):
    """The pairs on the C library (C, and Go through it) against our Rust pair."""
    rust = "acp-engine (Rust)"
    rows = [(language, ours) for language, ours, _ in LANGUAGES if language in ("C", "Go") and ours in present]
    if rust not in present or not rows:
        return []
    lines = [
        "",
        "## Through the C library: against our Rust pair",
        "",
        "Each cell: the pair on `libacp_engine` against our Rust pair, same run.",
        "",
        "| language | " + " | ".join(s for s in scenarios if s != "setup") + " |",
        "|---|" + "---:|" * len([s for s in scenarios if s != "setup"]),
    ]
    for language, ours in rows:
        row = [language]
        for scenario in scenarios:
            if scenario == "setup":
                continue
            mine, base = by_key.get((scenario, ours, ours)), by_key.get((scenario, rust, rust))
            a = value(mine, scenario) if mine else None
            b = value(base, scenario) if base else None
            row.append("n/a" if a is None or not b else f"{a / b:.2f}× ({a:,.0f} vs {b:,.0f})")
        lines.append("| " + " | ".join(row) + " |")
    return lines


def chart(records, path):
    """Bar chart: each SDK's own pair, per scenario, log scale."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_key = {(r["scenario"], r["client"], r["agent"]): r for r in records}
    scenarios = [s for s in dict.fromkeys(r["scenario"] for r in records)]
    present = set(r["client"] for r in records)
    names = [name for name in IMPLS if name in present and "client" in IMPLS[name] and "agent" in IMPLS[name]
             and not IMPLS[name].get("floor")]
    figure, axes = plt.subplots(1, len(scenarios), figsize=(3.2 * len(scenarios), 5.6), squeeze=False)
    colors = {name: ("#1f77b4" if name.startswith("acp-engine") else "#b0b0b0") for name in names}
    for axis, scenario in zip(axes[0], scenarios):
        values = [value(by_key[(scenario, n, n)], scenario) if (scenario, n, n) in by_key else None for n in names]
        heights = [v or 0 for v in values]
        axis.bar(range(len(names)), heights, color=[colors[n] for n in names])
        axis.set_xticks(range(len(names)))
        axis.set_xticklabels([n.replace("acp-engine ", "ours ").replace(" SDK", "") for n in names],
                             rotation=60, ha="right", fontsize=7)
        axis.set_title(scenario, fontsize=10)
        axis.set_ylabel(SCENARIO_UNITS.get(scenario, ""), fontsize=7)
        if scenario not in ("setup", "large") and any(heights):
            axis.set_yscale("log")
        for index, v in enumerate(values):
            # No bar for a scenario the programs do not have (the v2 ones): not a failure.
            if v is None and scenario in IMPLS[names[index]].get("scenarios", (scenario,)):
                axis.text(index, 1, "FAIL", ha="center", fontsize=6, rotation=90)
    figure.suptitle("Each SDK's client against its own agent (blue: acp-engine; grey: official SDKs)", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def write(records, meta, directory):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "README.md"), "w") as f:
        f.write(markdown(records, meta))
    with open(os.path.join(directory, "results.json"), "w") as f:
        json.dump({"meta": meta, "records": records}, f, indent=1)
    chart(records, os.path.join(directory, "chart.png"))


def today():
    return time.strftime("%Y-%m-%d")
