"""Benchmark client on acp_engine's Client class:
``client.py --scenario <scenario> --n N -- <agent command...>`` (see bench/README.md), or
``-- <ws:// or http:// URL>`` for an agent serving remote clients (bench/remote.py)."""

import argparse
import asyncio
import json
import sys
import time

T0 = time.perf_counter()  # setup includes importing the SDK

from acp_engine import Client, connect_agent, spawn_agent  # noqa: E402

LARGE = 16 * 1024 * 1024


def latencies(arrivals: list) -> dict:
    """p50 and p99 of the round trips, from one request's arrival to the next's (as bench/floor)."""
    if len(arrivals) < 2:
        return {}
    trips = sorted(b - a for a, b in zip(arrivals, arrivals[1:]))
    return {"p50_us": trips[len(trips) // 2] * 1e6, "p99_us": trips[len(trips) * 99 // 100] * 1e6}


class BenchClient(Client):
    def __init__(self) -> None:
        self.count = 0
        self.large = "x" * LARGE
        # In `large`, every read is answered with 16 MiB.
        self.large_reads = False
        # In `rpc` and `perm`: when each request arrived.
        self.arrivals: list = []
        self.timed = False

    async def request_permission(self, params):  # type: ignore[no-untyped-def]
        if self.timed:
            self.arrivals.append(time.perf_counter())
        self.count += 1
        return {"outcome": {"outcome": "selected", "optionId": "allow"}}

    async def session_update(self, params):  # type: ignore[no-untyped-def]
        self.count += 1

    async def read_text_file(self, params):  # type: ignore[no-untyped-def]
        if self.large_reads:
            return {"content": self.large}
        if self.timed:
            self.arrivals.append(time.perf_counter())
        self.count += 1
        return {"content": "hello"}

    async def write_text_file(self, params):  # type: ignore[no-untyped-def]
        if len(params["content"]) == LARGE:
            self.count += 1
        return {}


async def main(scenario: str, n: int, agent_argv: list) -> bool:
    client = BenchClient()
    client.large_reads = scenario == "large"
    client.timed = scenario in ("rpc", "perm")
    # A URL: an agent serving remote clients (bench/remote.py).
    if "://" in agent_argv[0]:
        connecting = connect_agent(lambda _: client, agent_argv[0])
    else:
        connecting = spawn_agent(lambda _: client, agent_argv[0], *agent_argv[1:])
    async with connecting as agent:
        await agent.initialize(
            {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}}}
        )
        session = await agent.new_session({"cwd": "/tmp", "mcpServers": []})
        setup_s = time.perf_counter() - T0
        if scenario == "setup":
            run_s, stop_reason, client.count = setup_s, "end_turn", n
        else:
            t1 = time.perf_counter()
            turn = await agent.prompt(
                {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": f"{scenario} {n}"}]}
            )
            run_s = time.perf_counter() - t1
            stop_reason = turn["stopReason"]
    ok = client.count == n and stop_reason == "end_turn"
    print(json.dumps({"client": "acp-engine-python", "scenario": scenario, "n": n, "setup_s": setup_s,
                      "run_s": run_s, "count": client.count, "ok": ok, **latencies(client.arrivals)}))
    return ok


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("agent", nargs="+")
    args = parser.parse_args()
    sys.exit(0 if asyncio.run(main(args.scenario, args.n, args.agent)) else 1)
