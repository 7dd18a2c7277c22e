import asyncio
import functools
import os
import sys
from typing import Any, Callable, Coroutine

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.join(HERE, "peers")
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")


def peer(name: str) -> str:
    return os.path.join(PEERS, name)


def run_async(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test in a fresh event loop, with a 60 s ceiling so a
    hang fails the test instead of the run."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(asyncio.wait_for(test(*args, **kwargs), 60))

    return wrapper


@pytest.fixture
def python() -> str:
    return sys.executable
