"""A v2 client on the official Python SDK (``acp.experimental.v2``; run it in a
Python that has agent-client-protocol installed): spawns the agent given on its
command line, asks it for next edit suggestions (``nes/start``,
``document/didOpen``, ``nes/suggest``) and prints one JSON line: each suggestion's
official model class and wire JSON."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from acp.experimental import v2
from acp.experimental.v2 import schema


class Client:
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        pass


async def main(argv: list[str]) -> None:
    process = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    agent = v2.connect_to_agent(Client(), process.stdin, process.stdout)
    await agent.initialize(protocol_version=v2.PROTOCOL_VERSION, info=schema.Implementation(name="official", version="1"))
    session = await agent.start_nes(workspace_uri="file:///w")
    await agent.did_open(session_id=session.session_id, uri="file:///w/a.py", language_id="python", version=1,
                         text="def f():\n    return 1")
    answer = await agent.suggest_nes(session_id=session.session_id, uri="file:///w/a.py", version=1,
                                     position=schema.Position(line=0, character=0), trigger_kind="manual")
    print(json.dumps([[type(s).__name__, s.model_dump(mode="json", by_alias=True, exclude_none=True)]
                      for s in answer.suggestions]))
    await agent.close()
    assert process.stdin is not None
    process.stdin.close()
    await process.wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
