#!/usr/bin/env python3
"""The C ABI from Python's stdlib ctypes (no compiled glue): spawn our Rust
example agent as ACP_SIDE_CLIENT with handlers = NULL and run the interop
"Say hello" turn on this thread through the event queue.

    ACP_TARGET_DIR=target/debug python3 bindings/c/tests/test_ctypes.py

Exits non-zero on failure.
"""
import ctypes
import json
import os
import subprocess
import sys
import tempfile

TARGET = os.environ.get("ACP_TARGET_DIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "target", "debug")
LIBRARY = os.path.join(TARGET, "libacp_engine.so")
AGENT = os.path.join(TARGET, "examples", "agent")

# ---- the C declarations we use (include/acp_engine.h) ----------------------

ACP_OK, ACP_ERR_TIMEOUT = 0, 8
ACP_SIDE_CLIENT = 2
# acp_event_kind, numbered as the engine's event kinds (include/acp_engine.h).
EVENT_REQUEST, EVENT_NOTIFICATION, EVENT_RESPONSE, EVENT_CLOSED = 0, 1, 2, 6


# The ABI these declarations describe (ACP_ENGINE_ABI_VERSION): a library of
# another ABI version is refused before anything is called.
ABI_VERSION = 1
ACP_ERR_INVALID_ARGUMENT = 4


class AcpOptions(ctypes.Structure):
    # The header's fields, in its order. struct_size is sizeof of the struct
    # as declared here: the library reads the fields within it (and takes
    # the defaults of fields appended to the header later).
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("side", ctypes.c_int),
        ("max_message_size", ctypes.c_size_t),
        ("exit_grace_ms", ctypes.c_uint32),
        ("unstable", ctypes.c_bool),
        ("quick_response_callbacks", ctypes.c_bool),
        ("max_in_flight_requests", ctypes.c_size_t),
        ("max_buffered_bytes", ctypes.c_size_t),
        ("output_stall_timeout_ms", ctypes.c_uint32),
        ("unchecked_methods", ctypes.POINTER(ctypes.c_char_p)),
    ]


class AcpError(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int64), ("message", ctypes.c_char_p), ("data_json", ctypes.c_char_p)]


class AcpEvent(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int),
        ("method", ctypes.c_char_p),
        ("json", ctypes.c_char_p),
        ("request_id", ctypes.c_int64),
        ("error", AcpError),
        ("responder", ctypes.c_void_p),
        ("reason", ctypes.c_char_p),
    ]


# void (*)(void *user_data, int64_t id, const char *result, const acp_error *error)
RESPONSE_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p,
                                     ctypes.POINTER(AcpError))

lib = ctypes.CDLL(LIBRARY)
conn_p = ctypes.c_void_p
lib.acp_engine_abi_version.restype = ctypes.c_uint32
lib.acp_engine_abi_version.argtypes = []
if lib.acp_engine_abi_version() != ABI_VERSION:
    sys.exit(f"{LIBRARY} has ABI version {lib.acp_engine_abi_version()}, these declarations {ABI_VERSION}")
lib.acp_engine_version.restype = ctypes.c_char_p
lib.acp_engine_version.argtypes = []
lib.acp_last_error_message.restype = ctypes.c_char_p
lib.acp_last_error_message.argtypes = []
lib.acp_connection_spawn.restype = ctypes.c_int
lib.acp_connection_spawn.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p),
                                     ctypes.c_char_p, ctypes.POINTER(AcpOptions), ctypes.c_void_p,
                                     ctypes.POINTER(conn_p)]
lib.acp_connection_send_request.restype = ctypes.c_int
lib.acp_connection_send_request.argtypes = [conn_p, ctypes.c_char_p, ctypes.c_char_p, RESPONSE_CALLBACK,
                                            ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)]
lib.acp_connection_next_event.restype = ctypes.c_int
lib.acp_connection_next_event.argtypes = [conn_p, ctypes.c_int32, ctypes.POINTER(ctypes.POINTER(AcpEvent))]
lib.acp_event_free.restype = None
lib.acp_event_free.argtypes = [ctypes.POINTER(AcpEvent)]
lib.acp_responder_ok.restype = ctypes.c_int
lib.acp_responder_ok.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.acp_responder_error.restype = ctypes.c_int
lib.acp_responder_error.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p, ctypes.c_char_p]
lib.acp_connection_close.restype = ctypes.c_int
lib.acp_connection_close.argtypes = [conn_p]
lib.acp_connection_wait_closed.restype = ctypes.c_int
lib.acp_connection_wait_closed.argtypes = [conn_p, ctypes.c_int32]
lib.acp_connection_free.restype = None
lib.acp_connection_free.argtypes = [conn_p]
lib.acp_shutdown.restype = None
lib.acp_shutdown.argtypes = []


class Failure(Exception):
    pass


def check(rc, what):
    if rc != ACP_OK:
        raise Failure(f"{what}: result {rc}: {lib.acp_last_error_message().decode()}")


# ---- a client on the event queue ------------------------------------------------

class Client:
    def __init__(self, cwd):
        self.cwd = cwd
        self.text = []          # agent_message_chunk texts
        self.terminals = {}     # terminalId -> (output, exit code)
        self.permissions = 0
        self.closed_reason = None
        self.conn = conn_p()
        argv = (ctypes.c_char_p * 2)(AGENT.encode(), None)
        options = AcpOptions(struct_size=ctypes.sizeof(AcpOptions), side=ACP_SIDE_CLIENT)
        check(lib.acp_connection_spawn(argv, None, None, ctypes.byref(options), None, ctypes.byref(self.conn)),
              "acp_connection_spawn")

    def call(self, method, params, timeout_ms=20000):
        """Send a request with no callback; pump events until its RESPONSE."""
        request_id = ctypes.c_int64(-1)
        check(lib.acp_connection_send_request(self.conn, method.encode(), json.dumps(params).encode(),
                                              RESPONSE_CALLBACK(), None, ctypes.byref(request_id)),
              f"send {method}")
        while True:
            event = self.next_event(timeout_ms)
            if event is None:
                raise Failure(f"no answer to {method} within {timeout_ms} ms")
            kind, payload = event
            if kind == EVENT_RESPONSE and payload["id"] == request_id.value:
                if payload["error"] is not None:
                    raise Failure(f"{method} failed: {payload['error']}")
                return payload["result"]
            if kind == EVENT_CLOSED:
                raise Failure(f"connection closed during {method}: {payload}")

    def next_event(self, timeout_ms):
        """One event, handled; (kind, payload) or None on timeout."""
        pointer = ctypes.POINTER(AcpEvent)()
        rc = lib.acp_connection_next_event(self.conn, timeout_ms, ctypes.byref(pointer))
        if rc == ACP_ERR_TIMEOUT:
            return None
        check(rc, "acp_connection_next_event")
        try:
            event = pointer.contents
            kind = event.kind
            if kind == EVENT_REQUEST:
                params = json.loads(event.json) if event.json else None
                self.serve(event.method.decode(), params, event.responder)
                return kind, None
            if kind == EVENT_NOTIFICATION:
                params = json.loads(event.json) if event.json else None
                self.notified(event.method.decode(), params)
                return kind, None
            if kind == EVENT_RESPONSE:
                error = None
                if event.json is None:
                    error = {"code": event.error.code, "message": (event.error.message or b"").decode()}
                result = json.loads(event.json) if event.json is not None else None
                return kind, {"id": event.request_id, "result": result, "error": error}
            if kind == EVENT_CLOSED:
                self.closed_reason = event.reason.decode()
                return kind, self.closed_reason
            raise Failure(f"unknown event kind {kind}")
        finally:
            lib.acp_event_free(pointer)  # copies were taken above

    def notified(self, method, params):
        if method != "session/update":
            return
        update = params.get("update", {})
        content = update.get("content", {})
        if update.get("sessionUpdate") == "agent_message_chunk" and content.get("type") == "text":
            self.text.append(content["text"])

    def serve(self, method, params, responder):
        try:
            result = self.answer(method, params)
        except Exception as error:  # an error answer, not a crash
            check(lib.acp_responder_error(responder, -32603, str(error).encode(), None), "responder_error")
            return
        check(lib.acp_responder_ok(responder, json.dumps(result).encode()), f"answer {method}")

    def answer(self, method, params):
        if method == "session/request_permission":
            self.permissions += 1
            option = next(o for o in params["options"] if o["kind"] == "allow_once")
            return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
        if method == "fs/read_text_file":
            with open(params["path"], encoding="utf-8") as f:
                lines = f.read().splitlines(keepends=True)
            start = max((params.get("line") or 1) - 1, 0)
            limit = params.get("limit")
            lines = lines[start:start + limit] if limit is not None else lines[start:]
            return {"content": "".join(lines)}
        if method == "fs/write_text_file":
            with open(params["path"], "w", encoding="utf-8") as f:
                f.write(params["content"])
            return {}
        if method == "terminal/create":
            # Run it for real, to completion (echo is quick).
            done = subprocess.run([params["command"]] + params.get("args", []), cwd=params.get("cwd") or self.cwd,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            terminal_id = f"term-{len(self.terminals) + 1}"
            self.terminals[terminal_id] = (done.stdout, done.returncode)
            return {"terminalId": terminal_id}
        if method == "terminal/output":
            output, code = self.terminals[params["terminalId"]]
            return {"output": output, "truncated": False, "exitStatus": {"exitCode": code, "signal": None}}
        if method == "terminal/wait_for_exit":
            _, code = self.terminals[params["terminalId"]]
            return {"exitCode": code, "signal": None}
        if method == "terminal/kill":
            return {}
        if method == "terminal/release":
            self.terminals.pop(params["terminalId"], None)
            return {}
        raise Failure(f"unexpected request {method}")


def main():
    print(f"libacp_engine {lib.acp_engine_version().decode()} from {LIBRARY}", file=sys.stderr)
    # Options without struct_size (all zero) are refused, saying what to do.
    unsized, conn = AcpOptions(side=ACP_SIDE_CLIENT), conn_p()
    argv = (ctypes.c_char_p * 2)(b"true", None)
    rc = lib.acp_connection_spawn(argv, None, None, ctypes.byref(unsized), None, ctypes.byref(conn))
    if rc != ACP_ERR_INVALID_ARGUMENT or b"struct_size is 0" not in lib.acp_last_error_message():
        raise Failure(f"struct_size 0: result {rc}: {lib.acp_last_error_message().decode()}")
    with tempfile.TemporaryDirectory(prefix="acp-ctypes-") as cwd:
        with open(os.path.join(cwd, "hello.txt"), "w") as f:
            f.write("Hello from the client's file\n")
        client = Client(cwd)
        try:
            init = client.call("initialize", {
                "protocolVersion": 1,
                "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True},
                "clientInfo": {"name": "ctypes-interop-client", "version": "1.0.0"},
            })
            if init.get("protocolVersion") != 1:
                raise Failure(f"protocolVersion {init.get('protocolVersion')}")
            session = client.call("session/new", {"cwd": cwd, "mcpServers": []})
            outcome = client.call("session/prompt", {
                "sessionId": session["sessionId"],
                "prompt": [{"type": "text", "text": "Say hello"}],
            })
            text = "".join(client.text)
            print(f"agent said: {text!r}", file=sys.stderr)
            if outcome.get("stopReason") != "end_turn":
                raise Failure(f"stopReason {outcome.get('stopReason')}")
            if "Hello from the client's file" not in text:
                raise Failure("the reply lacks the file's content")
            if "terminal said: hi" not in text:
                raise Failure("the reply lacks the terminal's output")
            if client.permissions != 1:
                raise Failure(f"{client.permissions} permission requests")
            with open(os.path.join(cwd, "written.txt")) as f:
                if f.read() != "written by agent":
                    raise Failure("written.txt is wrong")
        finally:
            check(lib.acp_connection_close(client.conn), "acp_connection_close")
            while client.closed_reason is None:
                if client.next_event(10000) is None:
                    raise Failure("no CLOSED event")
            check(lib.acp_connection_wait_closed(client.conn, 10000), "acp_connection_wait_closed")
            lib.acp_connection_free(client.conn)
            lib.acp_shutdown()
    print("test_ctypes: ok")


if __name__ == "__main__":
    try:
        main()
    except Failure as failure:
        print(f"test_ctypes: FAIL: {failure}", file=sys.stderr)
        sys.exit(1)
