"""The method table against the schema itself: every method of the schema's
``x-method`` / ``x-side`` list is on the right handler and peer class, in the
stable package and in ``acp_engine.unstable``; and the updates new in the
current schema cross a real pipe typed and unchanged."""

import inspect
import json
import os
import sys
from typing import Any, Dict, List, Set, Tuple

from conftest import peer, run_async

import acp_engine
import acp_engine.unstable
from acp_engine import Client, spawn_agent

SCHEMA_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "schema", "v1")


def schema_methods(name: str) -> Set[Tuple[str, str, str]]:
    """(side, wire method, params type) of every method the schema file lists."""
    with open(os.path.join(SCHEMA_DIR, name)) as file:
        defs = json.load(file)["$defs"]
    return {
        (d["x-side"], d["x-method"], n)
        for n, d in defs.items()
        if "x-method" in d and not n.endswith("Response")
    }


def handler_name(params_type: str) -> str:
    """The naming rule of every language: the params type without its suffix."""
    if params_type == "SessionNotification":
        return "session_update"
    base = params_type.removesuffix("Request").removesuffix("Notification")
    return "".join("_" + c.lower() if c.isupper() else c for c in base).lstrip("_")


def check_package(package: Any, schema: str) -> int:
    classes = {
        "agent": (package.Agent, package.ClientSideConnection),
        "client": (package.Client, package.AgentSideConnection),
    }
    checked = 0
    for side, method, params_type in schema_methods(schema):
        if side not in classes:
            continue  # protocol ($/cancel_request) and proxy methods are not routed
        handler, peer_class = classes[side]
        name = handler_name(params_type)
        assert inspect.iscoroutinefunction(getattr(handler, name)), f"{handler.__name__}.{name} ({method})"
        assert callable(getattr(peer_class, name)), f"{peer_class.__name__}.{name} ({method})"
        table = package._generated.methods.AGENT_HANDLERS if side == "agent" else package._generated.methods.CLIENT_HANDLERS
        assert table[method] == name
        checked += 1
    return checked


def test_every_stable_method_is_on_its_handler_and_peer_class() -> None:
    assert check_package(acp_engine, "schema.json") >= 24


def test_every_unstable_method_is_on_the_unstable_classes() -> None:
    stable = check_package(acp_engine, "schema.json")
    assert check_package(acp_engine.unstable, "schema.unstable.json") > stable
    # ... and only there.
    assert not hasattr(acp_engine.Agent, "fork_session")
    assert hasattr(acp_engine.unstable.Agent, "fork_session")


def test_baseline_methods_must_be_implemented() -> None:
    class Half(acp_engine.Agent):
        async def initialize(self, params):  # type: ignore[no-untyped-def]
            return {"protocolVersion": 1}

    try:
        Half()  # type: ignore[abstract]
    except TypeError as error:
        assert "new_session" in str(error) and "prompt" in str(error) and "cancel" in str(error)
    else:
        raise AssertionError("an Agent without the baseline methods was instantiated")


class NewsClient(Client):
    def __init__(self) -> None:
        self.updates: List[Dict[str, Any]] = []

    async def request_permission(self, params):  # type: ignore[no-untyped-def]
        return {"outcome": {"outcome": "cancelled"}}

    async def session_update(self, params):  # type: ignore[no-untyped-def]
        self.updates.append(params["update"])


@run_async
async def test_notice_and_compaction_updates_arrive_unchanged() -> None:
    sys.path.insert(0, os.path.dirname(peer("full_agent.py")))
    from full_agent import NEWS

    client = NewsClient()
    async with spawn_agent(lambda _: client, sys.executable, peer("full_agent.py")) as agent:
        capabilities = {"session": {"notices": {}, "compaction": {}}}
        await agent.initialize({"protocolVersion": 1, "clientCapabilities": capabilities})
        answer = await agent.prompt({"sessionId": "s-1", "prompt": [{"type": "text", "text": "news"}]})
        assert answer["stopReason"] == "end_turn"
    assert client.updates == NEWS
