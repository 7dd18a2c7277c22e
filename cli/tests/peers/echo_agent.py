"""A plain-JSON-lines ACP agent for the conductor's tests: it records every
line it receives (in LOG) and says back what reached it.

usage: echo_agent.py LOG

session/prompt: "crash" exits 3 at once; "wait" is answered only when
cancelled (-32800); anything else gets one agent_message_chunk with the
prompt's texts joined by spaces, then a session/request_permission, then
the answer {"stopReason": "end_turn", "_meta": {"permission": <its result>}}.
x/fail is answered with an error carrying data.
"""
import json
import sys

log = open(sys.argv[1], "a")
waiting = {}   # our permission request id -> the prompt's id
held = set()   # prompt ids answered only when cancelled


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    log.write(line)
    log.flush()
    message = json.loads(line)
    method, id_ = message.get("method"), message.get("id")
    params = message.get("params") or {}
    if method is None:
        prompt_id = waiting.pop(id_, None)
        if prompt_id is not None:
            send({"jsonrpc": "2.0", "id": prompt_id,
                  "result": {"stopReason": "end_turn", "_meta": {"permission": message.get("result")}}})
    elif method == "initialize":
        send({"jsonrpc": "2.0", "id": id_, "result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": id_, "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        texts = [block.get("text", "") for block in params.get("prompt", [])]
        if "crash" in texts:
            sys.exit(3)
        if "wait" in texts:
            held.add(id_)
            continue
        send({"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk",
                                          "content": {"type": "text", "text": " ".join(texts)}}}})
        permission = "perm-%s" % len(waiting)
        waiting[permission] = id_
        send({"jsonrpc": "2.0", "id": permission, "method": "session/request_permission", "params": {
            "sessionId": "s1", "toolCall": {"toolCallId": "t1", "title": "Read"},
            "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]}})
    elif method == "$/cancel_request":
        cancelled = params.get("requestId")
        if cancelled in held:
            held.discard(cancelled)
            send({"jsonrpc": "2.0", "id": cancelled, "error": {"code": -32800, "message": "Request cancelled"}})
    elif method == "x/fail":
        send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32042, "message": "nope", "data": {"why": "because"}}})
    elif id_ is not None:
        send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": "Method not found"}})
