"""Benchmark client on the official Python SDK (agent-client-protocol, module
``acp``): ``client.py --scenario <scenario> --n N -- <agent command...>``."""

import argparse
import asyncio
import json
import os
import sys
import time

T0 = time.perf_counter()  # setup includes importing the SDK

import acp  # noqa: E402
from acp.schema import (  # noqa: E402
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TextContentBlock,
    WriteTextFileResponse,
)

LARGE = 16 * 1024 * 1024


def latencies(arrivals: list) -> dict:
    """p50 and p99 of the round trips, from one request's arrival to the next's (as bench/floor)."""
    if len(arrivals) < 2:
        return {}
    trips = sorted(b - a for a, b in zip(arrivals, arrivals[1:]))
    return {"p50_us": trips[len(trips) // 2] * 1e6, "p99_us": trips[len(trips) * 99 // 100] * 1e6}


class BenchClient:
    def __init__(self) -> None:
        self.count = 0
        self.large = "x" * LARGE
        # In `large`, every read is answered with 16 MiB.
        self.large_reads = False
        # In `rpc` and `perm`: when each request arrived.
        self.arrivals: list = []
        self.timed = False

    def on_connect(self, conn):  # type: ignore[no-untyped-def]
        pass

    async def request_permission(self, **kwargs):  # type: ignore[no-untyped-def]
        if self.timed:
            self.arrivals.append(time.perf_counter())
        self.count += 1
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow"))

    async def session_update(self, session_id, update, **kwargs):  # type: ignore[no-untyped-def]
        self.count += 1

    async def read_text_file(self, path, **kwargs):  # type: ignore[no-untyped-def]
        if self.large_reads:
            return ReadTextFileResponse(content=self.large)
        if self.timed:
            self.arrivals.append(time.perf_counter())
        self.count += 1
        return ReadTextFileResponse(content="hello")

    async def write_text_file(self, content, **kwargs):  # type: ignore[no-untyped-def]
        if len(content) == LARGE:
            self.count += 1
        return WriteTextFileResponse()


async def main(scenario: str, n: int, agent_argv: list) -> bool:
    client = BenchClient()
    client.large_reads = scenario == "large"
    client.timed = scenario in ("rpc", "perm")
    async with acp.spawn_agent_process(
        client, agent_argv[0], *agent_argv[1:], env=dict(os.environ), transport_kwargs={"stderr": None}
    ) as (conn, _proc):
        await conn.initialize(
            protocol_version=1,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
            ),
        )
        session = await conn.new_session(cwd="/tmp", mcp_servers=[])
        setup_s = time.perf_counter() - T0
        if scenario == "setup":
            run_s, stop_reason, client.count = setup_s, "end_turn", n
        else:
            t1 = time.perf_counter()
            turn = await conn.prompt(
                session_id=session.session_id, prompt=[TextContentBlock(type="text", text=f"{scenario} {n}")]
            )
            run_s = time.perf_counter() - t1
            stop_reason = turn.stop_reason
    ok = client.count == n and stop_reason == "end_turn"
    print(json.dumps({"client": "official-python", "scenario": scenario, "n": n, "setup_s": setup_s,
                      "run_s": run_s, "count": client.count, "ok": ok, **latencies(client.arrivals)}))
    return ok


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("agent", nargs="+")
    args = parser.parse_args()
    sys.exit(0 if asyncio.run(main(args.scenario, args.n, args.agent)) else 1)
