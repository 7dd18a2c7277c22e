"""What the broken test agents share: JSON-RPC lines on stdin and stdout.

`serve` reads stdin to its end and hands each message to the agent's
`request`, `notification` or `response`, answering what is no message
(-32700, -32600) itself; `on_garbage` runs first for a line that is not
JSON (a defect may exit there)."""
import json
import sys


def send(message):
    sys.stdout.write(json.dumps(dict(message, jsonrpc="2.0")) + "\n")
    sys.stdout.flush()


def error(id, code, message, data=None):
    send({"id": id, "error": dict({"code": code, "message": message}, **({"data": data} if data else {}))})


def serve(request, notification, response, on_garbage=lambda: None):
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            on_garbage()
            error(None, -32700, "Parse error")
            continue
        if not isinstance(message, dict):
            error(None, -32600, "Invalid Request")
        elif message.get("jsonrpc") != "2.0":
            error(message.get("id"), -32600, "Invalid Request")
        elif "method" in message and "id" in message:
            request(message)
        elif "method" in message:
            notification(message)
        else:
            response(message)
