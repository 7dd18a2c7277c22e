#!/usr/bin/env python3
"""Runs the official Python SDK's own tests (``tests/`` of the PyPI sdist of
``agent-client-protocol``) against ``acp_engine.compat``, unmodified: not one byte
of a test file is edited. The tests say ``import acp`` / ``from acp.schema import``;
an alias package puts ``acp_engine.compat`` (and each of its submodules) under the
name ``acp``, which is exactly what a user's one-line switch does (for the run, a
``.pth`` file in this Python's site-packages makes it importable, by the processes
the tests spawn too).

The sdist is checked against the sha256 pinned below before anything runs. Every
test that fails must be listed in ``expected.json`` with the reason (the official
package's private internals, deliberate differences, work not done yet); the run
fails when an unlisted test fails or a listed one passes (the list must stay true);
a test listed with a reason starting "timing:" depends on how busy the machine is
and may go either way (the run says which).

    python run.py --sdist FILE [--official] [--json FILE]
    (last line: "N passed, M expected failures, K unexpected")

``--official``: run the same tests against the official package installed in this
Python instead (what they do on this machine).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
SDIST = "agent_client_protocol-1.0.0rc3.tar.gz"
SDIST_SHA256 = "a5bdaab0a0bc7e5a0a660c82f5acf7804d60aa8c65a373acc743dd88c7a72cf5"
# What the tests read besides themselves: the examples they run.
COPIED = ("tests", "examples")
# The official generator's own tests (its scripts/ are not part of the package).
NOT_RUN = {"tests/test_gen_all.py": "tests the official SDK's code generator scripts, not the package"}

# `acp` is acp_engine.compat (the module and every submodule, one object each),
# in this Python and in the processes the tests spawn.
ALIAS_PTH = "import acp_engine.compat.as_acp as alias; alias.install()\n"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def unpack(sdist: Path, work: Path) -> Path:
    with tarfile.open(sdist) as archive:
        archive.extractall(work, filter="data")
    root = work / SDIST.removesuffix(".tar.gz")
    tree = work / "tree"
    tree.mkdir()
    for name in COPIED:
        shutil.copytree(root / name, tree / name)
    return tree


def outcomes(junit: Path) -> dict[str, str]:
    """test id -> passed / failed / skipped (collection errors count as failed)."""
    return {test: state for test, (state, _why) in reports(junit).items()}


def reports(junit: Path) -> dict[str, tuple[str, str]]:
    """test id -> (state, the failure's message)."""
    result: dict[str, tuple[str, str]] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.get("classname"):  # a test: tests.test_rpc + test_name
            test_id = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
        else:  # a file that failed to collect: tests.test_rpc
            test_id = f"{case.get('name', '').replace('.', '/')}.py"
        states = {child.tag: child.get("message", "") for child in case}
        failure = states.get("failure", states.get("error"))
        if failure is not None:
            result[test_id] = ("failed", failure.splitlines()[0][:200] if failure else "")
        elif "skipped" in states:
            result[test_id] = ("skipped", "")
        else:
            result[test_id] = ("passed", "")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdist", type=Path, required=True, help=f"the downloaded {SDIST}")
    parser.add_argument("--official", action="store_true", help="run against the official package instead")
    parser.add_argument("--json", type=Path, help="write every test's outcome here")
    args = parser.parse_args()
    if args.sdist.name != SDIST or sha256(args.sdist) != SDIST_SHA256:
        print(f"refusing: {args.sdist} is not the pinned {SDIST} (sha256 {SDIST_SHA256})", file=sys.stderr)
        return 2
    expected: dict[str, str] = json.loads((HERE / "expected.json").read_text())
    with tempfile.TemporaryDirectory(prefix="acp-official-tests.") as scratch:
        work = Path(scratch)
        tree = unpack(args.sdist, work)
        env = dict(os.environ)
        pth = Path(sysconfig.get_paths()["purelib"]) / "_acp_official_tests_alias.pth"
        if not args.official:
            # Importable as `acp` in this Python, also by the processes the tests
            # spawn (which get a trimmed environment: no PYTHONPATH), for this run.
            pth.write_text(ALIAS_PTH)
        junit = work / "junit.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=native", f"--junitxml={junit}",
                   "-o", "asyncio_default_fixture_loop_scope=function", "--continue-on-collection-errors", "tests"]
        command += [f"--ignore={path}" for path in NOT_RUN]
        try:
            subprocess.run(command, cwd=tree, env=env, stdout=sys.stderr)
        finally:
            pth.unlink(missing_ok=True)
        if not junit.exists():
            print("pytest wrote no report", file=sys.stderr)
            return 1
        seen = outcomes(junit)
        if args.json:
            args.json.write_text(json.dumps(reports(junit), indent=1, sort_keys=True) + "\n")
    failed = {test for test, state in seen.items() if state == "failed"}
    passed = [test for test, state in seen.items() if state == "passed"]
    if args.official:
        print(f"official package: {len(passed)} passed, {len(failed)} failed", *sorted(failed), sep="\n")
        print(f"{len(passed)} passed, {len(failed)} failed")
        return 0
    # A test whose outcome depends on how busy the machine is may go either way.
    timing = {test for test, why in expected.items() if why.startswith("timing:")}
    unexpected = sorted(failed - expected.keys())
    stale = sorted(test for test in expected.keys() - timing if seen.get(test) == "passed")
    missing = sorted(test for test in expected if test not in seen)
    for test in unexpected:
        print(f"UNEXPECTED FAILURE {test}")
    for test in stale:
        print(f"UNEXPECTED PASS (remove from expected.json) {test}")
    for test in missing:
        print(f"NOT RUN (remove from expected.json) {test}")
    bad = len(unexpected) + len(stale) + len(missing)
    for test in sorted(timing):
        print(f"timing-dependent, {seen.get(test, 'not run')} this time: {test}")
    print(f"{len(passed)} passed, {len(failed & expected.keys())} expected failures, {bad} unexpected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
