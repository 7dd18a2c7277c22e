"""The Python setup floor: what spawning a Python agent and the handshake
cost at the least with asyncio and pydantic, the two any pydantic-based
Python SDK's client and agent import, and no SDK (bench/README.md):

    python_client.py --scenario setup --n 1 -- python python_agent.py

times, as the official Python SDK's bench client does (from after its
asyncio import), importing pydantic and defining a model, spawning the
agent, `initialize` (its result checked by a model) and `session/new`.
Prints the contract's JSON line."""

import argparse
import asyncio
import json
import sys
import time

T0 = time.perf_counter()  # as bench/official-python/client.py: the SDK's import counts

from pydantic import BaseModel  # noqa: E402


class InitializeResult(BaseModel):
    protocolVersion: int


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("agent", nargs="+")
    args = parser.parse_args()
    agent = await asyncio.create_subprocess_exec(*args.agent, stdin=asyncio.subprocess.PIPE,
                                                 stdout=asyncio.subprocess.PIPE)
    assert agent.stdin is not None and agent.stdout is not None
    requests = [("initialize", {"protocolVersion": 1, "clientCapabilities": {}}),
                ("session/new", {"cwd": "/tmp", "mcpServers": []})]
    for number, (method, params) in enumerate(requests):
        line = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        agent.stdin.write((json.dumps(line) + "\n").encode())
        await agent.stdin.drain()
        answer = json.loads(await agent.stdout.readline())
        if method == "initialize":
            InitializeResult.model_validate(answer["result"])
    setup_s = time.perf_counter() - T0
    agent.stdin.close()
    await agent.wait()
    ok = args.scenario == "setup"
    print(json.dumps({"client": "python-setup-floor", "scenario": args.scenario, "n": args.n, "setup_s": setup_s,
                      "run_s": setup_s, "count": args.n if ok else 0, "ok": ok}))
    return 0 if ok else 1


sys.exit(asyncio.run(main()))
