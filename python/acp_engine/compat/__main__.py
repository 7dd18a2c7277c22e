"""``python -m acp_engine.compat SCRIPT [ARGS...]`` / ``-m MODULE [ARGS...]``:
run a program written for the official SDK (``import acp``) on the engine,
unmodified."""

from __future__ import annotations

import os
import runpy
import sys

from .as_acp import install

USAGE = "usage: python -m acp_engine.compat (SCRIPT | -m MODULE) [ARGS...]\n"


def main(argv: list[str]) -> int:
    if not argv:
        sys.stderr.write(USAGE)
        return 2
    if argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE + "Runs a program written for the official `acp` package with `acp` being acp_engine.compat.\n")
        return 0
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            sys.stderr.write(USAGE)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))  # as `python SCRIPT` does
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
