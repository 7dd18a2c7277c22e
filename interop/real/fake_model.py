"""A fake Anthropic Messages API on loopback, so that a real agent built on
Claude Code (claude-agent-acp) runs real turns in tests: tool calls,
permission requests and file reads over ACP, with no network and no key.

usage: fake_model.py PORT_FILE [LOG_FILE]

Listens on 127.0.0.1 (a free port, written to PORT_FILE once listening) and
answers POST /v1/messages, streamed (SSE) or not. A turn whose prompt says
"use tools" is played as a script, one step per request of the agent:
  1. a tool call of the agent's read tool for hello.txt in the session's
     directory (named in the prompt as "in DIR"),
  2. after its result, a tool call of its write tool for out.txt there,
  3. after that result, a text that quotes what the read returned.
Any other request (titles, summaries, other prompts) gets a short text.
Every request's path and model go to LOG_FILE, one JSON line each.
"""
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def tool_named(tools, suffix):
    """The agent's tool for `suffix` ("Read", "Write"): ACP's own first."""
    names = [tool.get("name", "") for tool in tools or []]
    for name in names:
        if name.startswith("mcp__acp__") and name.endswith(suffix):
            return name
    return next((name for name in names if name == suffix), None)


def text_of(content):
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            parts.append(text_of(block.get("content")))
    return "\n".join(parts)


def plan(request):
    """What to answer: ("text", TEXT) or ("tool", NAME, INPUT)."""
    messages = request.get("messages") or []
    conversation = "\n".join(text_of(message.get("content")) for message in messages if message.get("role") == "user")
    if "use tools" not in conversation:
        return ("text", "Hello from the fake model.")
    directory = re.search(r"in (/\S+)", conversation)
    directory = directory.group(1).rstrip(".") if directory else "."
    results = [block for message in messages if message.get("role") == "user"
               for block in (message.get("content") if isinstance(message.get("content"), list) else [])
               if block.get("type") == "tool_result"]
    read, write = tool_named(request.get("tools"), "Read"), tool_named(request.get("tools"), "Write")
    if len(results) == 0 and read:
        return ("tool", read, {"file_path": directory + "/hello.txt"})
    if len(results) == 1 and write:
        return ("tool", write, {"file_path": directory + "/out.txt", "content": "written by the fake model\n"})
    seen = text_of(results[0].get("content")) if results else ""
    return ("text", "The file says: " + seen.strip().replace("\n", " ")[:200])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    counter = 0

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.reply(404, {"type": "error", "error": {"type": "not_found_error", "message": "fake"}})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            request = {}
        if LOG:
            with open(LOG, "a") as log:
                log.write(json.dumps({"path": self.path, "model": request.get("model"),
                                      "stream": bool(request.get("stream"))}) + "\n")
        if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
            if "count_tokens" in self.path:
                return self.reply(200, {"input_tokens": 10})
            return self.reply(404, {"type": "error", "error": {"type": "not_found_error", "message": "fake"}})
        Handler.counter += 1
        answer = plan(request)
        model = request.get("model") or "claude-fake"
        if answer[0] == "text":
            content = [{"type": "text", "text": answer[1]}]
            stop = "end_turn"
        else:
            content = [{"type": "tool_use", "id": "toolu_%d" % Handler.counter, "name": answer[1], "input": answer[2]}]
            stop = "tool_use"
        message = {"id": "msg_%d" % Handler.counter, "type": "message", "role": "assistant", "model": model,
                   "content": content, "stop_reason": stop, "stop_sequence": None,
                   "usage": {"input_tokens": 10, "output_tokens": 5}}
        if not request.get("stream"):
            return self.reply(200, message)
        self.stream(message)

    def reply(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def stream(self, message):
        events = [("message_start", {"type": "message_start", "message": dict(message, content=[], stop_reason=None,
                                                                              usage={"input_tokens": 10, "output_tokens": 1})})]
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                       "content_block": {"type": "text", "text": ""}}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "text_delta", "text": block["text"]}}))
            else:
                events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                       "content_block": dict(block, input={})}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "input_json_delta",
                                                                 "partial_json": json.dumps(block["input"])}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(("message_delta", {"type": "message_delta",
                                         "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                         "usage": {"output_tokens": 5}}))
        events.append(("message_stop", {"type": "message_stop"}))
        data = "".join("event: %s\ndata: %s\n\n" % (name, json.dumps(payload)) for name, payload in events).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


LOG = sys.argv[2] if len(sys.argv) > 2 else None
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1] + ".tmp", "w") as port_file:
    port_file.write(str(server.server_address[1]))
import os
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
