"""A small ACP client on plain JSON lines, correct unless told to break one
rule, for `acp-engine check client`'s own tests.

usage: broken_client.py DEFECT AGENT_COMMAND...   (DEFECT "" for none)

It starts the agent, runs one prompt turn in a fresh directory (serving
permission requests, files and terminals), then exits 0. DEFECT is one of:
bad-permission (answers with an option it was not offered),
no-method-not-found (answers unknown methods with a result),
no-invalid-params (reads without a path succeed), crash-on-garbage (exits
on a line that is not JSON), hang-on-agent-death (waits for ever when the
agent dies).
"""
import atexit
import json
import shutil
import subprocess
import sys
import tempfile
import time

defect, agent = sys.argv[1], sys.argv[2:]
cwd = tempfile.mkdtemp(prefix="broken-client-")
atexit.register(shutil.rmtree, cwd, True)
proc = subprocess.Popen(agent, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
terminals = {}


def send(message):
    proc.stdin.write(json.dumps(dict(message, jsonrpc="2.0")) + "\n")
    proc.stdin.flush()


def result(id, value):
    send({"id": id, "result": value})


def error(id, code, message):
    send({"id": id, "error": {"code": code, "message": message}})


def serve(message):
    id, method, params = message["id"], message["method"], message.get("params") or {}
    if method == "session/request_permission":
        option = "not-offered" if defect == "bad-permission" else params["options"][0]["optionId"]
        result(id, {"outcome": {"outcome": "selected", "optionId": option}})
    elif method == "fs/read_text_file":
        if "path" not in params:
            if defect == "no-invalid-params":
                return result(id, {"content": ""})
            return error(id, -32602, "Invalid params")
        with open(params["path"]) as f:
            result(id, {"content": f.read()})
    elif method == "fs/write_text_file":
        with open(params["path"], "w") as f:
            f.write(params["content"])
        result(id, {})
    elif method == "terminal/create":
        run = subprocess.run([params["command"], *params.get("args", [])], capture_output=True, text=True)
        terminals[str(len(terminals))] = run
        result(id, {"terminalId": str(len(terminals) - 1)})
    elif method == "terminal/wait_for_exit":
        result(id, {"exitCode": terminals[params["terminalId"]].returncode})
    elif method == "terminal/output":
        result(id, {"output": terminals[params["terminalId"]].stdout, "truncated": False})
    elif method == "terminal/release":
        result(id, {})
    elif defect == "no-method-not-found":
        result(id, {})
    else:
        error(id, -32601, "Method not found")


def receive(waiting_for):
    """Serve the agent until the response to `waiting_for` arrives."""
    while True:
        line = proc.stdout.readline()
        if not line:
            if defect == "hang-on-agent-death":
                shutil.rmtree(cwd, ignore_errors=True)  # the check kills us; atexit would not run
                time.sleep(600)
            sys.exit(1)
        try:
            message = json.loads(line)
        except ValueError:
            if defect == "crash-on-garbage":
                sys.exit(2)
            error(None, -32700, "Parse error")
            continue
        if "method" in message and "id" in message:
            serve(message)
        elif "method" not in message and message.get("id") == waiting_for:
            return message


send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {
    "fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}}})
receive(1)
send({"id": 2, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}})
session = receive(2)["result"]["sessionId"]
send({"id": 3, "method": "session/prompt", "params": {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}})
receive(3)
proc.stdin.close()
proc.wait(timeout=10)
