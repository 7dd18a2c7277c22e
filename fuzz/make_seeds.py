#!/usr/bin/env python3
"""Regenerate fuzz/seeds/<target>/ from reliability/corpus/ plus a few valid
protocol exchanges. Seeds are small, named inputs checked into git; the
corpora libFuzzer grows live in fuzz/corpus/ (ignored).

    python3 fuzz/make_seeds.py
"""
import hashlib
import json
import pathlib

FUZZ = pathlib.Path(__file__).resolve().parent
CORPUS = FUZZ.parent / "reliability" / "corpus"


def line(obj):
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def req(id_, method, params):
    return line({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})


def note(method, params):
    return line({"jsonrpc": "2.0", "method": method, "params": params})


# Valid traffic for both sides (the shapes core/tests/typed.rs uses).
VALID = {
    "agent_session": b"".join([
        req(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}),
        req(2, "session/new", {"cwd": "/tmp", "mcpServers": []}),
        req(3, "session/prompt", {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}),
        note("session/cancel", {"sessionId": "s"}),
        req("x", "session/set_mode", {"sessionId": "s", "modeId": "code"}),
        req(4, "authenticate", {"methodId": "key"}),
        note("$/cancel_request", {"requestId": 3}),
    ]),
    "client_session": b"".join([
        req(1, "session/request_permission", {"sessionId": "s", "toolCall": {"toolCallId": "c", "title": "t"},
                                              "options": [{"optionId": "a", "name": "A", "kind": "allow_once"}]}),
        note("session/update", {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk",
                                                             "content": {"type": "text", "text": "hi"}}}),
        req(2, "fs/read_text_file", {"sessionId": "s", "path": "/a", "line": 1, "limit": 2}),
        req(3, "terminal/create", {"sessionId": "s", "command": "ls"}),
    ]),
    "responses": b"".join([
        line({"jsonrpc": "2.0", "id": 0, "result": {}}),
        line({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}),
        line({"jsonrpc": "2.0", "id": "s", "result": None}),
    ]),
}


def corpus_files():
    for path in sorted(CORPUS.iterdir()):
        if path.suffix in (".jsonl", ".bin"):
            yield path.stem, path.read_bytes()
    yield from VALID.items()


def is_json(data):
    try:
        json.loads(data)
        return True
    except ValueError:
        return False


def write(target, name, data):
    out = FUZZ / "seeds" / target
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_bytes(data)


def main():
    for target in ("framing", "dispatch", "classify", "schema_check", "json_writer", "host"):
        for old in (FUZZ / "seeds" / target).glob("*"):
            old.unlink()
    for stem, data in corpus_files():
        # framing: [limit][count][sizes...] + stream: a roomy limit read in
        # odd chunks, and a tight one read byte by byte with Pending reads.
        write("framing", f"{stem}-wide", bytes([255, 1, 7]) + data)
        write("framing", f"{stem}-tight", bytes([40, 3, 1, 0, 3]) + data)
        # dispatch: [mode] + stream: agent and client with the default
        # limit, and an agent with a small one (128 + 8*64 = 640 bytes).
        write("dispatch", f"{stem}-agent", bytes([0]) + data)
        write("dispatch", f"{stem}-client", bytes([1]) + data)
        write("dispatch", f"{stem}-agent-small", bytes([128]) + data)
        # host: [mode][script length][script] + stream: fed 64 bytes at a
        # time with a drain and an answer between, in two settings.
        script = bytes([252, 1, 2, 252, 1, 6, 3] * 6)
        write("host", f"{stem}-plain", bytes([0, len(script)]) + script + data)
        write("host", f"{stem}-answers-cancelled-chunk-1", bytes([3, len(script)]) + script + data)
        # classify: each line alone; json_writer: each line that is JSON.
        for n, piece in enumerate(data.split(b"\n")):
            if piece.strip():
                digest = hashlib.sha1(piece).hexdigest()[:8]
                write("classify", f"{stem}-{n}-{digest}", piece)
                if is_json(piece):
                    write("json_writer", f"{stem}-{n}-{digest}", piece)
    # host: a request and its cancellation in one feed (withdrawn), and
    # fed apart with a drain between (the host is told).
    together = req(1, "slow", {}) + note("$/cancel_request", {"requestId": 1}) + req(2, "next", {})
    feed_all = bytes([252] * (len(together) // 64 + 1))
    for mode in (0, 1, 2, 3, 9):
        script = feed_all + bytes([1, 2])
        write("host", f"cancel-together-{mode}", bytes([mode, len(script)]) + script + together)
        first = len(req(1, "slow", {}))
        script = bytes([((first - 1) << 2)]) + bytes([1]) + feed_all + bytes([1, 3, 2, 1])
        write("host", f"cancel-after-taken-{mode}", bytes([mode, len(script)]) + script + together)
    # schema_check: "method\nparams" for every valid request and notification.
    for stem, data in VALID.items():
        for n, piece in enumerate(data.split(b"\n")):
            message = json.loads(piece) if piece.strip() else {}
            if "method" in message and "params" in message:
                params = json.dumps(message["params"], separators=(",", ":")).encode()
                write("schema_check", f"{stem}-{n}", message["method"].encode() + b"\n" + params)


if __name__ == "__main__":
    main()
