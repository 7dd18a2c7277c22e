"""A proxy for ACP proxy chains on ``acp_engine.proxy``: the contract of
core/examples/proxy.rs (interop/conductor.sh). It passes every message on
unchanged, except that with ``--prefix TEXT`` it puts a text block of its
own before every prompt; it says what crossed it on stderr (and with
``--log FILE`` in FILE) as ``[py-proxy NAME] -> method`` (from the client
side) and ``<- method`` (from the agent side).

Usage: proxy.py [--name NAME] [--prefix TEXT] [--log FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import IO, Any, Optional

from acp_engine import Connection
from acp_engine.proxy import Proxy, run_proxy


class Prefixer(Proxy):
    def __init__(self, name: str, prefix: Optional[str], log: Optional[IO[str]]) -> None:
        self.name = name
        self.prefix = prefix
        self.log = log

    def say(self, line: str) -> None:
        line = f"[py-proxy {self.name}] {line}"
        print(line, file=sys.stderr, flush=True)
        if self.log is not None:
            self.log.write(line + "\n")
            self.log.flush()

    async def client_request(self, method: str, params: Any, successor: Connection) -> Any:
        self.say(f"-> {method}")
        if self.prefix is not None and method == "session/prompt":
            params["prompt"].insert(0, {"type": "text", "text": self.prefix})
        return await successor.send_request(method, params)

    async def agent_request(self, method: str, params: Any, predecessor: Connection) -> Any:
        self.say(f"<- {method}")
        return await predecessor.send_request(method, params)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", default=None)
    parser.add_argument("--prefix", default=None)
    parser.add_argument("--log", default=None)
    args = parser.parse_args()
    log = open(args.log, "a", encoding="utf-8") if args.log else None
    name = args.name or args.prefix or "proxy"
    reason = asyncio.run(run_proxy(Prefixer(name, args.prefix, log)))
    print(f"[py-proxy {name}] closed ({reason})", file=sys.stderr)


if __name__ == "__main__":
    main()
