"""A fake model API on loopback, so that real agents run real turns in
tests with no network and no key: the Anthropic Messages API (for Claude
Code, under claude-agent-acp), the Gemini API (for gemini-cli) and the
OpenAI Responses API (for Codex, under codex-acp): tool calls, permission
requests and file reads over ACP.

usage: fake_model.py PORT_FILE [LOG_FILE]

Listens on 127.0.0.1 (a free port, written to PORT_FILE once listening) and
answers POST /v1/messages (Anthropic), streamed (SSE) or not, and POST
/v1beta/models/MODEL:generateContent / :streamGenerateContent (Gemini) and
POST /v1/responses, streamed (OpenAI). A turn whose prompt says "use tools"
is played as a script, one step per request of the agent:
  1. a tool call of the agent's read tool for hello.txt in the session's
     directory (named in the prompt as "in DIR"),
  2. after its result, a tool call of its write tool for out.txt there
     (gemini-cli: hello.txt again; it takes a new file's "Resource not
     found" from the client's read as a failure),
  3. after that result, a text that quotes what the read returned.
Codex has no read or write tool of its own but a shell: its one step is a
command that reads hello.txt and writes out.txt, run with
`sandbox_permissions: require_escalated`, so that Codex asks the client's
permission first; then the text as in 3.
Any other request (titles, summaries, other prompts) gets a short text.
Every request's path and model go to LOG_FILE, one JSON line each.
"""
import json
import os
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
        if block.get("type") in ("text", "input_text"):
            parts.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            parts.append(text_of(block.get("content")))
    return "\n".join(parts)


def script(conversation, results, read, write, written="out.txt"):
    """The scripted turn (see the module): ("text", TEXT) or ("tool", NAME,
    INPUT), from the user's words, the tool results so far and the agent's
    read and write tools; the write goes to `written` in the directory."""
    if "use tools" not in conversation:
        return ("text", "Hello from the fake model.")
    directory = re.search(r"in (/\S+)", conversation)
    directory = directory.group(1).rstrip(".") if directory else "."
    if len(results) == 0 and read:
        return ("tool", read, {"file_path": directory + "/hello.txt"})
    if len(results) == 1 and write:
        return ("tool", write, {"file_path": directory + "/" + written, "content": "written by the fake model\n"})
    seen = results[0] if results else ""
    return ("text", "The file says: " + seen.strip().replace("\n", " ")[:200])


def plan(request):
    """The Anthropic request's answer: ("text", TEXT) or ("tool", NAME, INPUT)."""
    messages = request.get("messages") or []
    conversation = "\n".join(text_of(message.get("content")) for message in messages if message.get("role") == "user")
    results = [text_of(block.get("content")) for message in messages if message.get("role") == "user"
               for block in (message.get("content") if isinstance(message.get("content"), list) else [])
               if block.get("type") == "tool_result"]
    read, write = tool_named(request.get("tools"), "Read"), tool_named(request.get("tools"), "Write")
    return script(conversation, results, read, write)


def gemini_plan(request):
    """The Gemini request's answer, as `plan`."""
    contents = request.get("contents") or []
    texts, results = [], []
    for content in contents:
        if content.get("role") != "user":
            continue
        for part in content.get("parts") or []:
            if "text" in part:
                texts.append(part["text"])
            response = part.get("functionResponse")
            if response:
                results.append(json.dumps(response.get("response")))
    names = [declaration.get("name") for tool in request.get("tools") or []
             for declaration in tool.get("functionDeclarations") or []]
    read = "read_file" if "read_file" in names else None
    write = "write_file" if "write_file" in names else None
    # gemini-cli takes the client's "Resource not found" for a new file as a
    # failure: it rewrites the file it read instead.
    return script("\n".join(texts), results, read, write, written="hello.txt")


def codex_plan(request):
    """The Responses API request's answer, as `plan` (see the module)."""
    items = request.get("input") or []
    said = [text_of(item.get("content")) for item in items
            if item.get("type", "message") == "message" and item.get("role") == "user"]
    # The turn's own prompt, not the context Codex sends as user messages too.
    prompt = next((text for text in reversed(said) if "use tools" in text), "")
    results = [str(item.get("output")) for item in items if item.get("type") == "function_call_output"]
    if not prompt:
        return ("text", "Hello from the fake model.")
    if not results:
        directory = re.search(r"in (/\S+)", prompt)
        directory = directory.group(1).rstrip(".") if directory else "."
        command = "cat hello.txt && printf 'written by the fake model\\n' > out.txt"
        return ("tool", "exec_command", {"cmd": command, "workdir": directory,
                                         "sandbox_permissions": "require_escalated",
                                         "justification": "Read hello.txt and write out.txt"})
    return ("text", "The file says: " + results[0].strip().replace("\n", " ")[-300:])


def responses_events(answer, number):
    """The Responses API stream (event name, payload) of `answer`, its ids
    numbered `number`."""
    events = [{"type": "response.created", "response": {"id": "resp_%d" % number}}]
    if answer[0] == "text":
        item = {"type": "message", "role": "assistant", "id": "msg_%d" % number,
                "content": [{"type": "output_text", "text": answer[1]}]}
        events.append({"type": "response.output_item.added", "output_index": 0, "item": dict(item, content=[])})
        events.append({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                       "item_id": item["id"], "delta": answer[1]})
    else:
        item = {"type": "function_call", "id": "fc_%d" % number, "call_id": "call_%d" % number,
                "name": answer[1], "arguments": json.dumps(answer[2])}
    events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    events.append({"type": "response.completed", "response": {
        "id": "resp_%d" % number, "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}})
    return [(event["type"], event) for event in events]


ROUTING = {"reasoning": "a fake model", "model_choice": "flash", "complexity_reasoning": "a fake model",
           "complexity_score": 10, "next_speaker": "user"}


def gemini_answer(answer):
    """A Gemini response chunk for `answer`."""
    if answer[0] == "text":
        parts = [{"text": answer[1]}]
    else:
        parts = [{"functionCall": {"name": answer[1], "args": answer[2]}}]
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "gemini-fake"}


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
        if ":countTokens" in self.path:
            return self.reply(200, {"totalTokens": 10})
        if ":generateContent" in self.path or ":streamGenerateContent" in self.path:
            return self.gemini(request)
        if self.path.startswith("/v1/responses"):
            # Ids by the step of the turn, not a count of requests: two runs
            # of one turn get the same ones (node/drop-in compares them).
            step = 1 + sum(item.get("type") == "function_call_output" for item in request.get("input") or [])
            return self.send_events(responses_events(codex_plan(request), step))
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

    def gemini(self, request):
        config = request.get("generationConfig") or {}
        if config.get("responseMimeType") == "application/json":
            # gemini-cli's own questions (which model routes a turn, who
            # speaks next): one object that answers each of their schemas.
            answer = gemini_answer(("text", json.dumps(ROUTING)))
        else:
            answer = gemini_answer(gemini_plan(request))
        if ":streamGenerateContent" not in self.path:
            return self.reply(200, answer)
        data = ("data: %s\r\n\r\n" % json.dumps(answer)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

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
        self.send_events(events)

    def send_events(self, events):
        """Server-sent events, (name, payload) each."""
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
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
