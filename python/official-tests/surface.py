#!/usr/bin/env python3
"""The public surface of the official Python SDK 1.0.0rc3 (module ``acp``)
against ``acp_engine.compat``'s, module by module: every public module of the
official package (its sdist's ``src/acp``, no name starting with ``_``) and
every name it exports (its ``__all__``, or else the public names it defines
itself), looked up on ours under the same module path through the ``acp``
alias. The same for signatures: each exported function, and each public method
of each exported class (not the schema's models), at the first module that
exports it, must take every call the official one takes, meaning the same
(positional parameters in its order, its keywords, nothing more required);
a method ours lacks, or one it takes differently, counts as a missing name
(``Class.method``). A name or module (``(module)``) ours lacks fails the run
unless ``surface.json`` lists it with the reason; a listed one ours has fails it
too (the list stays true).

    python surface.py --sdist FILE
    (last line: "N modules, M names, S signatures, K missing as listed, U unexpected")

Each side is read in a process of its own: the official package from the
unpacked sdist (with this Python's pydantic), ours through the alias.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from run import SDIST, SDIST_SHA256, sha256, unpack

HERE = Path(__file__).resolve().parent

# Run in a process whose `acp` is the official package: each public module's
# names, or why it does not import here.
OFFICIAL_NAMES = r"""
import ast, importlib, inspect, json, pkgutil, sys
sys.path.insert(0, sys.argv[1])

def exported(module):
    names = getattr(module, "__all__", None)
    if names is not None:
        return sorted(set(names))
    # No __all__: the public names its own source defines at the top level
    # (classes, functions, assignments), not what it imports.
    tree = ast.parse(inspect.getsource(module))
    defined = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
    return sorted(n for n in defined if not n.startswith("_") and hasattr(module, n))

from pydantic import BaseModel

def signature(function):
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    return [[p.name, p.kind.name, p.default is not inspect.Parameter.empty] for p in parameters]

seen = set()
def signatures(module, names):
    # Each callable once, at the first module that exports it.
    found = {}
    for name in names:
        value = getattr(module, name)
        if id(value) in seen:
            continue
        seen.add(id(value))
        if inspect.isclass(value) and not issubclass(value, BaseModel):
            # An exception's own methods (`RequestError.to_error_obj`), not BaseException's.
            inherited = set(dir(BaseException)) if issubclass(value, BaseException) else set()
            for member, function in inspect.getmembers(value):
                if member in inherited:
                    continue
                if (member == "__init__" or not member.startswith("_")) and inspect.isroutine(function):
                    found[f"{name}.{member}"] = signature(function)
        elif inspect.isfunction(value):
            found[name] = signature(value)
    return found

modules = {}
def walk(name):
    try:
        module = importlib.import_module(name)
    except ImportError as error:
        modules[name] = {"unavailable": str(error)}
        return
    names = exported(module)
    modules[name] = {"names": names, "signatures": signatures(module, names)}
    for info in pkgutil.iter_modules(getattr(module, "__path__", [])):
        if not info.name.startswith("_"):
            walk(name + "." + info.name)
walk("acp")
json.dump(modules, sys.stdout)
"""

# Run in a process whose `acp` is acp_engine.compat: which of the official
# names each module lacks (None: the module itself is missing).
OUR_GAPS = r"""
import importlib, inspect, json, sys
import acp_engine.compat.as_acp as alias
alias.install()
official = json.load(sys.stdin)

POSITIONAL = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")

def takes_what_it_takes(theirs, function):
    # Every call `theirs` takes, `function` takes, meaning the same.
    try:
        ours = [[p.name, p.kind.name, p.default is not inspect.Parameter.empty]
                for p in inspect.signature(function).parameters.values()]
    except (TypeError, ValueError):
        return theirs is None
    if theirs is None:
        return True
    their_positional = [p for p in theirs if p[1] in POSITIONAL]
    our_positional = [p for p in ours if p[1] in POSITIONAL]
    if [p[0] for p in our_positional[:len(their_positional)]] != [p[0] for p in their_positional]:
        return False
    kinds = {p[1] for p in ours}
    by_name = {p[0]: p for p in ours}
    for name, kind, has_default in theirs:
        if kind in ("VAR_POSITIONAL", "VAR_KEYWORD"):
            if kind not in kinds:
                return False
            continue
        mine = by_name.get(name)
        if mine is None and (kind == "POSITIONAL_ONLY" or "VAR_KEYWORD" not in kinds):
            return False
        if mine is not None and has_default and not mine[2]:
            return False
    their_names = {p[0] for p in theirs}
    # Nothing more required: our extra parameters have defaults.
    return all(p[2] or p[0] in their_names or p[1] in ("VAR_POSITIONAL", "VAR_KEYWORD") for p in ours)

def member(module, path):
    value = module
    for part in path.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return value

gaps = {}
for name, entry in official.items():
    if "names" not in entry:
        continue
    try:
        module = importlib.import_module(name)
    except ImportError:
        gaps[name] = None
        continue
    missing = [n for n in entry["names"] if not hasattr(module, n)]
    for path, theirs in entry["signatures"].items():
        function = member(module, path)
        if path.split(".")[0] in missing:
            continue
        if function is None or not takes_what_it_takes(theirs, function):
            missing.append(path)
    if missing:
        gaps[name] = missing
json.dump(gaps, sys.stdout)
"""


def python_json(code: str, *args: str, stdin: str = "") -> dict:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], input=stdin, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"surface.py: a probe failed:\n{done.stderr}")
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sdist", type=Path, required=True, help="agent_client_protocol-1.0.0rc3.tar.gz")
    args = parser.parse_args()
    if sha256(args.sdist) != SDIST_SHA256:
        print(f"{args.sdist}: checksum mismatch", file=sys.stderr)
        return 1
    listed = json.loads((HERE / "surface.json").read_text())
    with tempfile.TemporaryDirectory() as work:
        unpack(args.sdist, Path(work))
        official = python_json(OFFICIAL_NAMES, str(Path(work) / SDIST.removesuffix(".tar.gz") / "src"))
    gaps = python_json(OUR_GAPS, stdin=json.dumps(official))

    bad = 0
    missing_as_listed = 0
    for module, entry in official.items():
        if "unavailable" in entry:
            # Only an optional extra this Python lacks may keep a module out.
            print(f"NOT COMPARED {module}: {entry['unavailable']}")
            bad += 1
            continue
        expected = {name for group in listed.get(module, []) for name in group["names"]}
        if module in gaps and gaps[module] is None:  # the module itself is missing
            missing = {"(module)", *entry["names"]}
        else:
            missing = set(gaps.get(module) or [])
        for name in sorted(missing - expected):
            print(f"MISSING {module}: {name}")
            bad += 1
        for name in sorted(expected - missing):
            print(f"LISTED BUT PRESENT (remove from surface.json) {module}: {name}")
            bad += 1
        missing_as_listed += len(missing & expected)
    for module in sorted(set(listed) - set(official)):
        print(f"LISTED MODULE THE OFFICIAL PACKAGE DOES NOT HAVE (remove from surface.json) {module}")
        bad += 1
    names = sum(len(entry.get("names", [])) for entry in official.values())
    signatures = sum(len(entry.get("signatures", {})) for entry in official.values())
    print(f"{len(official)} modules, {names} names, {signatures} signatures, {missing_as_listed} missing as listed,"
          f" {bad} unexpected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
