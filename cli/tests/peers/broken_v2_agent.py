"""A small agent of the ACP v2 draft on plain JSON lines, correct unless told
to break one rule, for `acp-engine check agent`'s own tests of its v2 cases.

usage: broken_v2_agent.py [DEFECT]

DEFECT is one of: ordering (a message chunk after the turn went idle),
no-idle (a turn never reports a state_update to idle), no-cancel (a
cancelled turn ends end_turn), early (takes requests before initialize),
answers-v1 (initialize answers protocol version 1). A turn sends a message
chunk, asks one permission, and when it is answered reports the turn's end
as a state_update to idle; session/prompt itself answers a messageId at
once. initialize asking for 1 is -32022 (supported: [2]).
"""
import sys

from agent_lines import error, send, serve

defect = sys.argv[1] if len(sys.argv) > 1 else ""
initialized = False
turns = {}  # permission request id -> session id
cancelled = set()  # sessions whose turn the client cancelled
next_id = 0


def update(session, update):
    send({"method": "session/update", "params": {"sessionId": session, "update": update}})


def chunk(session, text):
    update(session, {"sessionUpdate": "agent_message_chunk", "messageId": "m-1",
                     "content": {"type": "text", "text": text}})


def idle(session, stop_reason):
    if defect != "no-idle":
        update(session, {"sessionUpdate": "state_update", "state": "idle", "stopReason": stop_reason})


def request(message):
    global initialized, next_id
    id, method, params = message.get("id"), message["method"], message.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        if not isinstance(asked, int) or asked < 2:
            return error(id, -32022, "Unsupported protocol version", {"requested": asked, "supported": [2]})
        initialized = True
        version = 1 if defect == "answers-v1" else 2
        send({"id": id, "result": {"protocolVersion": version, "info": {"name": "broken-v2", "version": "1"}}})
    elif not initialized and defect != "early":
        error(id, -32600, "Invalid Request: initialize first")
    elif method == "session/new":
        if not isinstance(params.get("cwd"), str):
            return error(id, -32602, "Invalid params")
        send({"id": id, "result": {"sessionId": "s-%s" % id}})
    elif method == "session/prompt":
        if not isinstance(params.get("prompt"), list) or not isinstance(params.get("sessionId"), str):
            return error(id, -32602, "Invalid params")
        session = params["sessionId"]
        cancelled.discard(session)
        send({"id": id, "result": {"messageId": "m-1"}})
        chunk(session, "thinking")
        next_id += 1
        turns[next_id] = session
        send({"id": next_id, "method": "session/request_permission", "params": {
            "sessionId": session, "toolCall": {"toolCallId": "call-%d" % next_id},
            "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]}})
    else:
        error(id, -32601, "Method not found")


def notification(message):
    if message["method"] == "session/cancel":
        cancelled.add((message.get("params") or {}).get("sessionId"))


def response(message):
    session = turns.pop(message.get("id"), None)
    if session is None:
        return
    outcome = (message.get("result") or {}).get("outcome", {}).get("outcome")
    if (outcome == "cancelled" or session in cancelled) and defect != "no-cancel":
        return idle(session, "cancelled")
    chunk(session, "done")
    idle(session, "end_turn")
    if defect == "ordering":
        chunk(session, "one more thing")


serve(request, notification, response)
