"""The Python setup floor's agent (bench/floor/python_client.py): asyncio
and pydantic, as any Python ACP agent on pydantic has them, and nothing
else. It reads the client's JSON lines on stdin, checks each request's
params with a pydantic model, answers initialize and session/new (a prompt
too, so that it follows the contract), and exits at the end of its input."""

import asyncio
import json
import sys

from pydantic import BaseModel


class InitializeParams(BaseModel):
    protocolVersion: int


async def main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            InitializeParams.model_validate(message["params"])
            result: dict = {"protocolVersion": 1, "agentCapabilities": {}}
        elif method == "session/new":
            result = {"sessionId": "bench-session"}
        else:
            result = {"stopReason": "end_turn"}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()


asyncio.run(main())
