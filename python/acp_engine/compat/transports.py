"""``acp.transports``: spawn a process with its stdio as asyncio streams."""

from __future__ import annotations

import asyncio
import asyncio.subprocess as aio_subprocess
import contextlib
import os
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator, Dict, Mapping, Optional, Tuple, Union

__all__ = ["DEFAULT_INHERITED_ENV_VARS", "default_environment", "spawn_stdio_transport"]

# What a spawned agent inherits by default (as MCP's SDKs do): no secrets by accident.
DEFAULT_INHERITED_ENV_VARS = (
    ["APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
     "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE"]
    if os.name == "nt"
    else ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"]
)


def default_environment() -> Dict[str, str]:
    """The inherited variables above that are set (shell functions left out)."""
    return {
        key: value
        for key in DEFAULT_INHERITED_ENV_VARS
        if (value := os.environ.get(key)) is not None and not value.startswith("()")
    }


@asynccontextmanager
async def spawn_stdio_transport(
    command: str,
    *args: str,
    env: Optional[Mapping[str, str]] = None,
    cwd: Union[str, Path, None] = None,
    stderr: Optional[int] = aio_subprocess.PIPE,
    limit: Optional[int] = None,
    shutdown_timeout: float = 2.0,
) -> AsyncIterator[Tuple[asyncio.StreamReader, asyncio.StreamWriter, aio_subprocess.Process]]:
    """Start ``command``; yields (its stdout, its stdin, the process). On exit:
    close its stdin, wait, then terminate, then kill."""
    merged_env = default_environment()
    if env:
        merged_env.update(env)
    extra = {} if limit is None else {"limit": limit}
    process = await asyncio.create_subprocess_exec(
        command,
        *args,
        stdin=aio_subprocess.PIPE,
        stdout=aio_subprocess.PIPE,
        stderr=stderr,
        env=merged_env,
        cwd=str(cwd) if cwd is not None else None,
        **extra,  # type: ignore[arg-type]
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        yield process.stdout, process.stdin, process
    finally:
        with contextlib.suppress(Exception):
            process.stdin.close()
            await asyncio.wait_for(process.stdin.wait_closed(), timeout=shutdown_timeout)
        try:
            await asyncio.wait_for(process.wait(), timeout=shutdown_timeout)
        except asyncio.TimeoutError:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), timeout=shutdown_timeout)
            except asyncio.TimeoutError:
                process.kill()
                await process.wait()
