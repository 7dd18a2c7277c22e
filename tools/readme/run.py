#!/usr/bin/env python3
"""Run every program shown in the repository's Markdown files against the official
TypeScript SDK (make test-readme; part of make test).

Programs are found by blocks.py, built outside the tree from the installed artifacts by
builds.py, then run: an agent under interop/ts/readme-client.mjs (a prompt turn, then the
agent must exit when its client hangs up), a client against interop/ts/readme-agent.mjs (it
must answer the permission request and print what the agent said). The contract is in
interop/README.md. Prints PASS/FAIL per program and "N passed, M failed"; exits non-zero on
any failure. Needs target/wheels/*.whl, target/npm/*.tgz and target/python-venv (built by
make test-python and make test-node) and interop/ts/node_modules (interop/setup.sh).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Sequence

import blocks as markdown
import builds
from blocks import ROOT, Block

PEERS = ROOT / "interop" / "ts"
AGENT_SAYS = "Hello from the official agent!"
TIMEOUT_SECONDS = 60


def check_program(block: Block, command: Sequence[str]) -> str:
    """Run one built program against its official peer; why it failed, or ""."""
    if block.role == "agent":
        argv = ["node", str(PEERS / "readme-client.mjs"), *command]
    else:
        argv = [*command, "node", str(PEERS / "readme-agent.mjs")]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired as timeout:
        return f"no result within {TIMEOUT_SECONDS} s\n{timeout.stderr or ''}"
    expected = "readme ok" if block.role == "agent" else AGENT_SAYS
    if done.returncode == 0 and expected in done.stdout:
        return ""
    return f"exit status {done.returncode}, {expected!r} not printed\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="list the programs found, build nothing")
    parser.add_argument("--language", action="append", help="only this language (rust, python, ts, c, go, kotlin); repeatable")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory (its path is printed)")
    args = parser.parse_args()

    found, cargo_blocks, errors = markdown.programs()
    for error in errors:
        print(f"FAIL {error}")
    if args.language:
        found = [block for block in found if block.language in args.language]
    if args.list:
        for block in found:
            print(f"{block.where}: {block.language} {block.role}")
        return 1 if errors else 0

    by_language: Dict[str, List[Block]] = {}
    for block in found:
        by_language.setdefault(block.language, []).append(block)
    work = Path(tempfile.mkdtemp(prefix="acp-readme-"))
    if args.keep:
        print(f"scratch directory: {work}")
    built: builds.Built = {}
    for language, group in by_language.items():
        if language == "rust":
            built.update(builds.build_rust(group, cargo_blocks, work))
        elif language == "python":
            built.update(builds.build_python(group, work))
        elif language == "ts":
            built.update(builds.build_ts(group, work))
        elif language == "c":
            built.update(builds.build_c(group, work))
        elif language == "go":
            built.update(builds.build_go(group, work))
        elif language == "kotlin":
            built.update(builds.build_kotlin(group, work))
        else:
            built.update({block: f"no builder for {language} yet" for block in group})

    passed, failed = 0, len(errors)
    for block in found:
        outcome = built[block]
        problem = outcome if isinstance(outcome, str) else check_program(block, outcome)
        if problem:
            failed += 1
            print(f"FAIL {block.where} ({block.language} {block.role})\n{problem.rstrip()}")
        else:
            passed += 1
            print(f"PASS {block.where} ({block.language} {block.role})")
    if not args.keep:
        subprocess.run(["rm", "-rf", str(work)])
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
