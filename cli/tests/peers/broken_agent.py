"""A small ACP agent on plain JSON lines, correct unless told to break one
rule, for `acp-engine check agent`'s own tests.

usage: broken_agent.py [DEFECT]

DEFECT is one or more, comma-separated, of: ordering (a message chunk
after the turn's answer), no-invalid-params (session/new takes any
params), crash-on-garbage (exits on a line that is not JSON), no-cancel (a
cancelled turn ends end_turn), ignores-capabilities (a turn reads a file
whatever the client advertised), echoes-version (initialize answers the
protocol version asked for, whatever it is). And traits that are no defect: bare-init
(initialize answers without agentCapabilities), needs-auth (session/new
is refused -32000 until `authenticate` with method "key"), one-dir
(session/new fails in a cwd another session already used: it leaves a
file there), tree (starts a grandchild that ignores SIGTERM, and ignores
the end of its input and SIGTERM itself; both pids are appended to the
file $BROKEN_AGENT_PIDS), bad-update (each turn also sends a usage_update
whose `used` is null, as claude-agent-acp 0.23 does), failing-turns (a
prompt whose text is "fail" is answered -32603, as an agent whose model
is unreachable answers).
A turn sends a message chunk, asks one permission, and ends when it is
answered.
"""
import os
import signal
import subprocess
import sys
import time

from agent_lines import error, send, serve

defects = set(sys.argv[1].split(",")) if len(sys.argv) > 1 else set()
defect = sys.argv[1] if len(sys.argv) > 1 else ""
authenticated = False

if "tree" in defects:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    grandchild = subprocess.Popen(
        [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)"],
        stdin=subprocess.DEVNULL)
    with open(os.environ["BROKEN_AGENT_PIDS"], "a") as pids:
        pids.write("%d\n%d\n" % (os.getpid(), grandchild.pid))
turns = {}  # permission request id -> (prompt id, session id)
cancelled = set()  # sessions whose turn the client cancelled
next_id = 0


def chunk(session, text):
    send({"method": "session/update", "params": {"sessionId": session, "update": {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}})


def request(message):
    global next_id
    id, method, params = message.get("id"), message["method"], message.get("params") or {}
    global authenticated
    if method == "initialize":
        result = {"protocolVersion": 1}
        if "echoes-version" in defects:
            result["protocolVersion"] = params.get("protocolVersion")
        if "bare-init" not in defects:
            result["agentCapabilities"] = {}
        if "needs-auth" in defects:
            result["authMethods"] = [{"id": "key", "name": "API key"}]
        send({"id": id, "result": result})
    elif method == "authenticate":
        if params.get("methodId") != "key":
            return error(id, -32602, "Invalid params")
        authenticated = True
        send({"id": id, "result": {}})
    elif method == "session/new":
        valid = isinstance(params.get("cwd"), str) and isinstance(params.get("mcpServers"), list)
        if not valid and defect != "no-invalid-params":
            return error(id, -32602, "Invalid params")
        if "needs-auth" in defects and not authenticated:
            return error(id, -32000, "Authentication required")
        if "one-dir" in defects:
            marker = os.path.join(params["cwd"], "broken-agent-was-here-%d" % os.getpid())
            if any(name.startswith("broken-agent-was-here-") and name != os.path.basename(marker)
                   for name in os.listdir(params["cwd"])):
                return error(id, -32603, "Internal error: another session used this directory")
            open(marker, "w").close()
        send({"id": id, "result": {"sessionId": "s%d" % id if isinstance(id, int) else "s-" + str(id)}})
    elif method == "session/prompt":
        if not isinstance(params.get("prompt"), list) or not isinstance(params.get("sessionId"), str):
            return error(id, -32602, "Invalid params")
        session = params["sessionId"]
        if "failing-turns" in defects and [block.get("text") for block in params["prompt"]] == ["fail"]:
            return error(id, -32603, "Internal error")
        cancelled.discard(session)
        chunk(session, "thinking")
        if "bad-update" in defects:
            send({"method": "session/update", "params": {"sessionId": session, "update": {
                "sessionUpdate": "usage_update", "used": None, "size": 1000}}})
        if "ignores-capabilities" in defects:
            send({"id": "read-anyway", "method": "fs/read_text_file",
                  "params": {"sessionId": session, "path": "/tmp/hello.txt"}})
        next_id += 1
        turns[next_id] = (id, session)
        send({"id": next_id, "method": "session/request_permission", "params": {
            "sessionId": session, "toolCall": {"toolCallId": "call-%d" % next_id},
            "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]}})
    else:
        error(id, -32601, "Method not found")


def notification(message):
    params = message.get("params") or {}
    if message["method"] == "session/cancel":
        cancelled.add(params.get("sessionId"))
    elif message["method"] == "$/cancel_request":
        for permission, (prompt, session) in list(turns.items()):
            if prompt == params.get("requestId"):
                del turns[permission]
                error(prompt, -32800, "Request cancelled")


def response(message):
    turn = turns.pop(message.get("id"), None)
    if turn is None:
        return
    prompt, session = turn
    outcome = (message.get("result") or {}).get("outcome", {}).get("outcome")
    if (outcome == "cancelled" or session in cancelled) and defect != "no-cancel":
        return send({"id": prompt, "result": {"stopReason": "cancelled"}})
    chunk(session, "done")
    send({"id": prompt, "result": {"stopReason": "end_turn"}})
    if defect == "ordering":
        chunk(session, "one more thing")


def garbage():
    if defect == "crash-on-garbage":
        sys.exit(1)


serve(request, notification, response, garbage)

if "tree" in defects:
    # Deaf to the end of its input, as some real agents are.
    while True:
        time.sleep(1)
