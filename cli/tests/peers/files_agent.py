"""An agent whose every turn reads two files through the client, one inside
the session's directory (inside.txt) and one outside it (/etc/hostname),
and reports what each read gave in its message. Plain JSON lines.
"""
import json
import sys

cwd = None
pending = {}  # request id -> (prompt id, session, step)


def send(message):
    sys.stdout.write(json.dumps(dict(message, jsonrpc="2.0")) + "\n")
    sys.stdout.flush()


def read(prompt, session, step, path):
    pending[step] = (prompt, session)
    send({"id": step, "method": "fs/read_text_file", "params": {"sessionId": session, "path": path}})


def say(session, text):
    send({"method": "session/update", "params": {"sessionId": session, "update": {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}})


for line in sys.stdin:
    message = json.loads(line)
    method, id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if method == "initialize":
        send({"id": id, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    elif method == "session/new":
        cwd = params["cwd"]
        send({"id": id, "result": {"sessionId": "files"}})
    elif method == "session/prompt":
        read(id, params["sessionId"], 1, cwd + "/inside.txt")
    elif method is None and id in pending:
        prompt, session = pending.pop(id)
        if "error" in message:
            say(session, "read %d refused: %s\n" % (id, json.dumps(message["error"])))
        else:
            say(session, "read %d gave: %s\n" % (id, message["result"]["content"].strip()))
        if id == 1:
            read(prompt, session, 2, "/etc/hostname")
        else:
            send({"id": prompt, "result": {"stopReason": "end_turn"}})
