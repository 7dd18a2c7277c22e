"""The engine's event reader (`_native.loads`, what `drain` uses) gives
exactly what `json.loads` gives: same values, same types, same errors."""

import json
import math
import random
from typing import Any

import pytest

from acp_engine import _native


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types, all the way down (1 == 1.0 == True in
    Python; here they differ), and -0.0 is not 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b) or (math.isnan(a) and math.isnan(b))
    return bool(a == b)


def check(text: str) -> None:
    expected = json.loads(text)
    got = _native.loads(text)
    assert same(got, expected), (text, got, expected)


ACP_EVENTS = [
    '[[1,"session/update",{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk",'
    '"content":{"type":"text","text":"hi"}}}],[0,7,"fs/read_text_file",{"path":"/a","line":null}],'
    '[2,3,{"content":"x"}],[3,4,{"code":-32603,"message":"Internal error","data":{"why":[1,2.5]}}],'
    '[4,9],[5,2,true],[5,3,false],[6,"peer closed the connection"]]',
]

CORNERS = [
    "0", "-0", "-0.0", "0.0", "1e400", "-1e400", "1E2", "1e-2", "2.5e+3", "123456789012345678901234567890",
    "-9223372036854775808", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
    "0.1", "5e-324", "1.7976931348623157e308", '""', '"\\u0000"', '"\\ud83d\\ude00"', '"\\ud800"',
    '"\\udc00x"', '"\\ud800\\u0041"', '"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t"', '"\\u00e9\\u4e2d"', '"é中😀"',
    "[]", "{}", " [ 1 , 2 ] ", '{"a":1,"a":2}', '{"":{"":[]}}', "true", "false", "null",
    '{"' + "k" * 100 + '":1}', '{"\\u0061":1}', '"' + "x" * 100 + '\\n"', "[" * 300 + "]" * 300,
    "NaN", "Infinity", "-Infinity", "[1,NaN]",
]


@pytest.mark.parametrize("text", ACP_EVENTS + CORNERS)
def test_corners(text: str) -> None:
    check(text)


def random_value(rng: random.Random, depth: int = 0) -> Any:
    choice = rng.randrange(10 if depth < 6 else 7)
    if choice == 0:
        return rng.choice([None, True, False])
    if choice == 1:
        return rng.randint(-(2**70), 2**70)
    if choice == 2:
        return rng.randint(-1000, 1000)
    if choice == 3:
        return rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-300, 300)
    if choice in (4, 5, 6):
        alphabet = 'ab"\\/\n\t\x00\x1fé中😀\u2028 '
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(40)))
    if choice in (7, 8):
        keys = ["a", "sessionId", "type", "é", "", 'q"', "k" * 70]
        return {rng.choice(keys) + str(i): random_value(rng, depth + 1) for i in range(rng.randrange(5))}
    return [random_value(rng, depth + 1) for _ in range(rng.randrange(5))]


def test_random_values() -> None:
    rng = random.Random(20261123)
    for _ in range(3000):
        value = random_value(rng)
        check(json.dumps(value))
        check(json.dumps(value, ensure_ascii=False))
        check(json.dumps(value, indent=1))


@pytest.mark.parametrize("text", ["", "[", "[1,]", "{", '{"a"}', '"abc', "tru", "nul", "01x", "[1 2]", "-", "1.",
                                  '"\\x"', '"\\u12"', "[1]x", "{'a':1}", "01", "-01", "1.e5", ".5", "1e", "1e+",
                                  '"a\nb"', '"' + "y" * 40 + '\x01"', "1" * 5000])
def test_errors_are_json_loads_errors(text: str) -> None:
    with pytest.raises(Exception) as expected:
        json.loads(text)
    with pytest.raises(type(expected.value)) as got:
        _native.loads(text)
    assert str(got.value) == str(expected.value)


def test_keys_are_shared_between_messages() -> None:
    # The fast reader ran (json.loads makes new key objects per call): a
    # protocol's field names are made once.
    first = _native.loads('[{"sessionId":"a","update":{}}]')
    second = _native.loads('[{"sessionId":"b","update":{}}]')
    assert [key for key in first[0]] == ["sessionId", "update"]
    assert all(a is b for a, b in zip(first[0], second[0]))
