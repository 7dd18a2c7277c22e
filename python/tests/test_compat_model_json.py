"""The engine writes compat models' wire JSON itself (``_wire_models``): byte
for byte what pydantic writes, params as its wire serializer (by alias, None
and defaults left out, one-value tags kept) and handlers' results as the
model's own serializer (by alias, None and unset fields left out, a
variant's unset tag added last), in pydantic's field order and escapes; when
a model holds anything but plain values the engine declines and pydantic
writes it, so the text is pydantic's in every case."""

import math
import warnings
from enum import Enum
from typing import Any, Dict, List, Optional

import pydantic
import pytest

from acp_engine import _native
from acp_engine.compat import schema as s
from acp_engine.compat._wire import _wire_serializer, to_wire_json
from acp_engine.compat.connection import dump_result
from test_compat_wire import _updates


def _pydantic(model: pydantic.BaseModel) -> bytes:
    written: bytes = _wire_serializer(type(model)).to_json(model, by_alias=True, exclude_none=True, exclude_defaults=True)
    return written


class _Color(str, Enum):
    RED = "red"


def _plain_models() -> List[pydantic.BaseModel]:
    text = s.TextContentBlock(text="héllo \"quoted\" \\ \n\t\x01 line ✓ \U0001f600")
    return [
        *_updates(),  # what the wire test sends
        s.AgentMessageChunk(content=text, message_id="m-1", field_meta={"trace": None, "n": [1, -2, True, None]}),
        s.ToolCallStart(tool_call_id="c", title="t", raw_input={"nested": {"deep": [None, 0, 2**70, -(2**64)]}, "empty": {}}),
        s.SessionNotification(session_id="sess-1", update=s.AgentThoughtChunk(content=text)),
        # Defaults: left out when equal (a model's default is a dict here: never equal to a model).
        s.AgentCapabilities(load_session=False, prompt_capabilities=s.PromptCapabilities(image=False)),
        s.AgentCapabilities(load_session=True),
        s.InitializeResponse(protocol_version=1, auth_methods=[]),
        s.ResourceLink(name="n", uri="file:///a b"),
        s.ClientCapabilities(fs=s.FileSystemCapabilities(read_text_file=True), terminal=False),
        s.RequestPermissionRequest(
            session_id="sess-1",
            tool_call=s.ToolCallUpdate(tool_call_id="call-1", title="Edit", status="pending"),
            options=[s.PermissionOption(option_id="allow", name="Allow", kind="allow_once")],
        ),
    ]


@pytest.mark.parametrize("model", _plain_models(), ids=lambda model: type(model).__name__)
def test_the_engine_writes_what_pydantic_writes(model: pydantic.BaseModel) -> None:
    written = to_wire_json(model)
    assert written == _pydantic(model)
    # And it was the engine that wrote it (its class is registered by now).
    assert _native.wire_json(model) == written


def _declined() -> List[pydantic.BaseModel]:
    subclassed = s.AgentMessageChunk(content=s.TextContentBlock(text="x"))

    class Sub(s.TextContentBlock):
        extra_field: Optional[str] = None

    subclassed.__dict__["content"] = Sub(text="y", extra_field="z")  # written by the field's schema
    return [
        s.ToolCallProgress(tool_call_id="c", raw_output={"color": _Color.RED}),
        s.ToolCallProgress(tool_call_id="c", raw_output={"nan": math.nan, "inf": math.inf}),
        s.ToolCallProgress(tool_call_id="c", raw_output={"floats": [0.1, 1e16, -0.0, 1e-7, 1.5e300]}),
        s.UsageUpdate(used=10, size=100, cost=s.Cost(amount=0.25, currency="USD")),
        s.ToolCallProgress(tool_call_id="c", raw_output={1: "int key"}),
        s.ToolCallProgress(tool_call_id="c", raw_output=("a", "tuple")),
        subclassed,
    ]


@pytest.mark.parametrize("model", _declined(), ids=lambda model: type(model).__name__)
def test_anything_but_plain_values_is_left_to_pydantic(model: pydantic.BaseModel) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _pydantic(model)
        assert to_wire_json(model) == expected
    assert _native.wire_json(model) is None


def test_a_subclass_in_a_field_of_its_parent_is_written_by_the_field() -> None:
    class Sub(s.TextContentBlock):
        note: Optional[str] = None

    alone = Sub(text="y", note="z")
    assert to_wire_json(alone) == _pydantic(alone)  # registers Sub: its own fields, as its root
    assert b'"note":"z"' in to_wire_json(alone)
    chunk = s.AgentMessageChunk(content=s.TextContentBlock(text="x"))
    chunk.__dict__["content"] = alone  # pydantic writes it as the field's class: without `note`
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert to_wire_json(chunk) == _pydantic(chunk)
    assert _native.wire_json(chunk) is None


def test_a_plain_value_assigned_without_validation_is_written_as_pydantic_writes_it() -> None:
    assigned = s.TextContentBlock(text="x")
    assigned.__dict__["text"] = 5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns that it is not a str
        assert to_wire_json(assigned) == _pydantic(assigned) == b'{"text":5,"type":"text"}'


def test_a_model_with_extra_fields_or_its_own_serializer_is_not_registered() -> None:
    class Extra(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="allow")
        name: str

    class Custom(pydantic.BaseModel):
        name: str

        @pydantic.field_serializer("name")
        def _upper(self, name: str) -> str:
            return name.upper()

    class Factory(pydantic.BaseModel):
        items: List[str] = pydantic.Field(default_factory=list)

    class Aliased(pydantic.BaseModel):
        field_meta: Optional[Dict[str, Any]] = pydantic.Field(default=None, alias="_meta")
        plain_name: str = pydantic.Field(serialization_alias="plainName")
        count: int = 3

    for model in (Extra(name="a", more=1), Custom(name="a"), Factory(items=[])):
        expected = _wire_serializer(type(model)).to_json(model, by_alias=True, exclude_none=True, exclude_defaults=True)
        assert to_wire_json(model) == expected
        assert _native.wire_json(model) is None
    aliased = Aliased.model_validate({"_meta": {"k": 1}, "plain_name": "x", "count": 3})
    assert to_wire_json(aliased) == b'{"_meta":{"k":1},"plainName":"x"}'
    assert _native.wire_json(aliased) == to_wire_json(aliased)


def _results() -> List[pydantic.BaseModel]:
    return [
        s.RequestPermissionResponse(outcome=s.AllowedOutcome(outcome="selected", option_id="allow")),
        s.RequestPermissionResponse(outcome=s.AllowedOutcome(option_id="allow")),  # the tag left unset
        s.RequestPermissionResponse(outcome=s.DeniedOutcome(outcome="cancelled")),
        s.PromptResponse(stop_reason="end_turn"),
        s.ReadTextFileResponse(content="hello"),
        s.NewSessionResponse(session_id="s-1", field_meta={"k": [1, None]}),
        # Set explicitly to a default or None: kept, and None left out.
        s.InitializeResponse(protocol_version=1, agent_capabilities=s.AgentCapabilities(load_session=False), auth_methods=[]),
        s.InitializeResponse(protocol_version=1, agent_info=None),
        s.WriteTextFileResponse(),
    ]


@pytest.mark.parametrize("result", _results(), ids=lambda result: type(result).__name__)
def test_a_result_is_written_as_its_own_serializer_writes_it(result: pydantic.BaseModel) -> None:
    expected = result.__pydantic_serializer__.to_json(result, by_alias=True, exclude_none=True, exclude_unset=True)
    assert dump_result(result) == expected
    assert _native.wire_json(result, True) == expected


def test_a_result_with_a_float_is_left_to_pydantic() -> None:
    result = s.UsageUpdate(used=1, size=2, cost=s.Cost(amount=0.5, currency="USD"))
    assert dump_result(result) == result.__pydantic_serializer__.to_json(result, by_alias=True, exclude_none=True, exclude_unset=True)
    assert _native.wire_json(result, True) is None
