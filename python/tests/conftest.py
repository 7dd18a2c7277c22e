import asyncio
import functools
import os
import sys
import time
from typing import Any, Callable, Coroutine, List

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.join(HERE, "peers")
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")


def peer(name: str) -> str:
    return os.path.join(PEERS, name)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie is gone for our purposes once reaped by its parent (init here).
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split()[2] == "Z"


def wait_gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.02)
    return False


def run_async(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test in a fresh event loop, with a 60 s ceiling so a
    hang fails the test instead of the run."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(asyncio.wait_for(test(*args, **kwargs), 60))

    return wrapper


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OFFICIAL_TS = os.path.join(ROOT, "interop", "ts")
OFFICIAL_PY_VENV = os.path.join(ROOT, "interop", "python", ".venv")


def official_ts(script: str) -> List[str]:
    """A program of interop/ts on the official TypeScript SDK (installed by interop/setup.sh)."""
    sdk = os.path.join(OFFICIAL_TS, "node_modules", "@agentclientprotocol", "sdk")
    assert os.path.isdir(sdk), f"the official TypeScript SDK is not installed: run interop/setup.sh ({sdk})"
    return ["node", os.path.join(OFFICIAL_TS, script)]


def official_py(script: str) -> List[str]:
    """A peer run in interop/python's venv, which has the official Python SDK (installed by interop/setup.sh)."""
    interpreter = os.path.join(OFFICIAL_PY_VENV, "bin", "python")
    assert os.path.exists(interpreter), f"the official Python SDK is not installed: run interop/setup.sh ({interpreter})"
    return [interpreter, peer(script)]


@pytest.fixture
def python() -> str:
    return sys.executable
