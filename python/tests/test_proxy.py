"""Proxies on ``acp_engine.proxy`` in real chains: our conductor
(``acp-engine conduct``, built in target/debug) runs a Python proxy in
front of the Rust example agent, driven by the Rust example client
through a whole session (prompt, permission, file read, terminal,
cancellation). The official Rust conductor runs the same proxy in
interop/conductor.sh."""

import os
import subprocess
import sys
from pathlib import Path

from conftest import peer

TARGET = os.path.join(os.path.dirname(__file__), "..", "..", "target", "debug")


def conduct(tmp_path: Path, *proxies: str) -> str:
    log = tmp_path / "proxies.log"
    chain = [f"{sys.executable} {peer('proxy.py')} --log {log} {proxy}" for proxy in proxies]
    argv = [
        os.path.join(TARGET, "examples", "client"),
        os.path.join(TARGET, "acp-engine"),
        "conduct",
        *chain,
        os.path.join(TARGET, "examples", "agent"),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and "interop ok" in done.stdout.splitlines(), done.stderr[-3000:]
    return log.read_text()


def test_a_python_proxy_passes_a_whole_session_through_our_conductor(tmp_path: Path) -> None:
    log = conduct(tmp_path, "--name one --prefix one", "--name two")
    for name in ("one", "two"):
        assert f"[py-proxy {name}] -> initialize" in log, log
        assert f"[py-proxy {name}] -> session/prompt" in log, log
        assert f"[py-proxy {name}] <- session/request_permission" in log, log
        assert f"[py-proxy {name}] <- fs/read_text_file" in log, log
