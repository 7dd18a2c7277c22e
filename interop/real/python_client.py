"""A client on our Python package (acp_engine) driving a real agent: the
agent's command after the options; prints one JSON line of what happened.

    python_client.py --cwd DIR [--model ID] -- AGENT [ARGS...]

It advertises file reads and writes, serves them inside DIR, grants every
permission with its allow-once option, switches the session's model with
`--model` (the legacy `session/set_model`, a method outside the schema
sent through `unchecked_methods`, when the agent offers the legacy
`models`; its session config option otherwise), and runs one turn:
"use tools in DIR".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from typing import Any, Dict, List

from acp_engine import Client, RequestError, spawn_agent

# The legacy model selection, which the schema no longer has.
SET_MODEL = "session/set_model"


class RecordingClient(Client):
    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.seen: Dict[str, List[Any]] = {"permissions": [], "reads": [], "writes": [], "updates": []}
        self.text = ""

    def inside(self, path: str) -> str:
        real = os.path.realpath(path)
        if not real.startswith(os.path.realpath(self.cwd) + os.sep):
            raise RequestError.invalid_params({"path": path, "message": "outside the session's directory"})
        return real

    async def request_permission(self, params: Any) -> Any:
        self.seen["permissions"].append(params["toolCall"].get("title"))
        options = params["options"]
        chosen = next((o for o in options if o["kind"] == "allow_once"), options[0])
        return {"outcome": {"outcome": "selected", "optionId": chosen["optionId"]}}

    async def session_update(self, params: Any) -> None:
        update = params["update"]
        self.seen["updates"].append(update["sessionUpdate"])
        if update["sessionUpdate"] == "agent_message_chunk" and update["content"]["type"] == "text":
            self.text += update["content"]["text"]

    async def read_text_file(self, params: Any) -> Any:
        path = self.inside(params["path"])
        self.seen["reads"].append(path)
        try:
            with open(path) as file:
                return {"content": file.read()}
        except FileNotFoundError:
            raise RequestError.resource_not_found(params["path"]) from None

    async def write_text_file(self, params: Any) -> Any:
        path = self.inside(params["path"])
        self.seen["writes"].append(path)
        with open(path, "w") as file:
            file.write(params["content"])
        return {}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--model")
    parser.add_argument("agent", nargs="+")
    args = parser.parse_args()
    client = RecordingClient(args.cwd)
    report: Dict[str, Any] = {}
    async with spawn_agent(lambda _: client, *args.agent, unchecked_methods=[SET_MODEL]) as agent:
        init = await agent.initialize(
            {
                "protocolVersion": 1,
                "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}},
                "clientInfo": {"name": "acp-engine interop python client", "version": "1"},
            }
        )
        report["agent"] = (init.get("agentInfo") or {}).get("name")
        session = await agent.new_session({"cwd": args.cwd, "mcpServers": []})
        sid = session["sessionId"]
        legacy = session.get("models")  # type: ignore[typeddict-item]
        report["legacy_models"] = [m["modelId"] for m in legacy["availableModels"]] if legacy else None
        if args.model:
            if legacy:
                report["set_model"] = await agent.ext_method(SET_MODEL, {"sessionId": sid, "modelId": args.model})
            else:
                option = next(o for o in session.get("configOptions") or [] if o.get("category") == "model")
                await agent.set_session_config_option({"sessionId": sid, "configId": option["id"], "value": args.model})
                report["set_model"] = "config option %s" % option["id"]
        turn = await agent.prompt(
            {"sessionId": sid, "prompt": [{"type": "text", "text": "use tools in %s" % args.cwd}]}
        )
        report["stop_reason"] = turn["stopReason"]
    report.update(client.seen, text=client.text)
    print(json.dumps(report))


asyncio.run(main())
