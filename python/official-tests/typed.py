"""Programs typed against the official Python SDK (``acp`` 1.0.0rc3), checked by ``mypy --strict``
on the official package and on ``acp_engine.compat``: the sdist's own ``examples/`` and the
programs in ``programs/`` here.

Each program is checked as it is against the official package (``--official-python``: an
interpreter that has it, ``interop/python/.venv``'s by default), then with only its import
lines rewritten (``import acp`` -> ``import acp_engine.compat as acp``, ``from acp.x`` ->
``from acp_engine.compat.x``; any other difference is refused) against ours (this
interpreter's). Ours must report nothing the official package does not: an error is
identified by the function it is in and its code (mypy words the same mismatch differently
when the supertype has more parameters), and each of ours must be one of the official
package's. The official examples are not all strict-clean on the official package itself;
the programs in ``programs/`` are, and must stay so on both.

    python typed.py --sdist FILE [--official-python PYTHON]

Last line: ``N programs: ours reports no error the official package does not``.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from run import SDIST, SDIST_SHA256, sha256

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
ERROR = re.compile(r"^(?P<file>[^:]+\.py):(?P<line>\d+): error: (?P<message>.*?)  \[(?P<code>[a-z-]+)\]$")
IMPORTS = [
    (
        re.compile(r"^(\s*)import acp(\s+as\s+\w+)?(\s*(#.*)?)$"),
        lambda m: f"{m[1]}import acp_engine.compat{m[2] or ' as acp'}{m[3]}",
    ),
    (re.compile(r"^(\s*)from acp(\.[\w.]+)? import "), lambda m: f"{m[1]}from acp_engine.compat{m[2] or ''} import "),
]


def rewrite(text: str) -> str:
    """The program on ours: its import lines changed, nothing else."""
    lines = text.split("\n")
    out = []
    for line in lines:
        for pattern, replace in IMPORTS:
            line = pattern.sub(replace, line, count=1)
        out.append(line)
    changed = [new for old, new in zip(lines, out) if old != new]
    if any(not re.match(r"\s*(import|from) acp_engine\.compat\b", line) for line in changed):
        raise SystemExit(f"refusing: the rewrite changed more than import lines: {changed}")
    if re.search(r"^\s*(import|from) acp\b", "\n".join(out), re.M):
        raise SystemExit("refusing: an import of acp was left as it was")
    return "\n".join(out)


def scopes(source: str) -> list[tuple[int, int, str]]:
    """Each function's and class's lines and qualified name."""
    found: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                found.append((child.lineno, child.end_lineno or child.lineno, name))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def mypy(directory: Path, programs: list[str], python: str | None) -> dict[str, set[tuple[str, str]]]:
    """mypy --strict's errors in each program: (the innermost function or class they are in, code)."""
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--strict",
        "--no-incremental",
        "--show-error-codes",
        "--no-error-summary",
        "--hide-error-context",
        "--no-pretty",
    ]
    if python is not None:
        command += ["--python-executable", python]
    done = subprocess.run(command + programs, cwd=directory, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"mypy failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    errors: dict[str, set[tuple[str, str]]] = {program: set() for program in programs}
    lines_of = {program: scopes((directory / program).read_text()) for program in programs}
    for line in done.stdout.splitlines():
        match = ERROR.match(line)
        if match is None:
            continue
        program, number = match["file"], int(match["line"])
        inside = [name for first, last, name in lines_of[program] if first <= number <= last]
        errors[program].add((inside[-1] if inside else "<module>", match["code"]))
    return errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdist", type=Path, required=True, help=f"the downloaded {SDIST}")
    parser.add_argument("--official-python", default=str(ROOT / "interop" / "python" / ".venv" / "bin" / "python"))
    args = parser.parse_args()
    if not Path(args.official_python).exists():
        print(
            f"refusing: no {args.official_python} (the official package's venv: run interop/setup.sh)", file=sys.stderr
        )
        return 2
    if args.sdist.name != SDIST or sha256(args.sdist) != SDIST_SHA256:
        print(f"refusing: {args.sdist} is not the pinned {SDIST} (sha256 {SDIST_SHA256})", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        sources: dict[str, str] = {}
        with tarfile.open(args.sdist) as archive:
            for member in archive.getmembers():
                parts = Path(member.name).parts
                if len(parts) == 3 and parts[1] == "examples" and member.name.endswith(".py"):
                    data = archive.extractfile(member)
                    assert data is not None
                    sources[f"example_{parts[2]}"] = data.read().decode()
        strict = sorted(path.name for path in (HERE / "programs").glob("*.py"))
        for name in strict:
            sources[name] = (HERE / "programs" / name).read_text()
        (work / "official").mkdir()
        (work / "ours").mkdir()
        for name, text in sources.items():
            (work / "official" / name).write_text(text)
            (work / "ours" / name).write_text(rewrite(text))
        programs = sorted(sources)
        official = mypy(work / "official", programs, args.official_python)
        ours = mypy(work / "ours", programs, None)
    failed = 0
    for program in programs:
        new = sorted(ours[program] - official[program])
        unclean = program in strict and (official[program] or ours[program])
        if new or unclean:
            failed += 1
            print(f"FAILED {program}: official {sorted(official[program])}, ours {sorted(ours[program])}")
        else:
            print(
                f"PASSED {program}: {len(official[program])} errors on the official package, {len(ours[program])} on ours"
            )
    if failed:
        print(f"{failed} of {len(programs)} programs: ours reports errors the official package does not")
        return 1
    print(
        f"{len(programs)} programs: ours reports no error the official package does not "
        f"({len(strict)} strict-clean on both)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
