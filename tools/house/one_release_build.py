#!/usr/bin/env python3
"""Fail when two release consumers of the engine would compile it differently.

Cargo resolves features per invocation, so `cargo build --release -p X` for each
consumer (the C library, maturin, napi, uniffi, the bench) compiles the engine once
per distinct feature set among its dependencies: a few minutes of both cores each in
a fresh `make test`. tools/workspace-hack asks for the union; this check compares what
`cargo tree` resolves for every consumer (no build) and names each dependency whose
features differ, with the features to add to tools/workspace-hack/Cargo.toml.

    python3 tools/house/one_release_build.py   # exit 1 and list the differences, if any
"""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict

from sources import ROOT, report

ENGINE = "acp-engine"
# Each crate some script builds on its own with `cargo build --release -p` (or maturin,
# napi): make install and abi-check (the C library), python/test.sh and the bench
# (maturin), node/build-native.mjs, kotlin/build.sh (uniffi), bench/impls.py.
CONSUMERS = ["acp-engine-c", "acp-engine-python", "acp-engine-node", "acp-engine-uniffi", "acp-engine-bench"]
LINE = re.compile(r"^(?P<depth>\d+)(?P<name>\S+) v(?P<version>\S+).*?\[(?P<features>[^\]]*)\]")


def engine_build(consumer: str) -> dict[str, set[str]]:
    """Every crate of the engine's build (its whole tree, host side included) with the
    features `consumer`'s release build resolves for it (a crate built for the host
    and the target may have two sets)."""
    done = subprocess.run(["cargo", "tree", "-q", "--locked", "-p", ENGINE, "-p", consumer, "-e", "normal,build",
                           "--prefix", "depth", "--no-dedupe", "-f", "{p} [{f}]"], cwd=ROOT, capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise SystemExit(f"cargo tree -p {consumer} failed:\n{done.stderr}")
    found: dict[str, set[str]] = defaultdict(set)
    inside = False
    for line in done.stdout.splitlines():
        match = LINE.match(line)
        if not match:
            continue
        if match["depth"] == "0":
            inside = match["name"] == ENGINE
        elif inside:
            found[f"{match['name']} v{match['version']}"].add(match["features"])
    return found


def main() -> int:
    resolved = {consumer: engine_build(consumer) for consumer in CONSUMERS}
    crates = {name for features in resolved.values() for name in features}
    found = []
    for dependency in sorted(crates):
        sets = {consumer: frozenset(resolved[consumer].get(dependency, ())) for consumer in CONSUMERS}
        if len(set(sets.values())) > 1:
            union = sorted({f for variants in sets.values() for v in variants for f in v.split(",") if f})
            found.append(f"  {dependency}: " + "; ".join(f"{c} [{' | '.join(sorted(v))}]" for c, v in sets.items()))
            found.append(f"    union: {', '.join(union)}")
    return report(found,
                  "make codegen-check: the release consumers resolve different features for the engine's "
                  "dependencies, so each compiles the engine again; ask for the union in "
                  "tools/workspace-hack/Cargo.toml:",
                  f"one release build of the engine for {len(CONSUMERS)} consumers ({len(crates)} crates alike)")


if __name__ == "__main__":
    raise SystemExit(main())
