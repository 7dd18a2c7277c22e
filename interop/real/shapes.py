"""The rows several real agents go through (interop/real/run.py): `run`
through the scripted tool turn, `run --model`, our Python client, `check
agent`'s score, `trace` between acpx and the agent, and acpx through
`connect` / `serve`."""
import json
import shutil
import subprocess

from harness import HERE, ROOT, TOOL, Served, acpx, left_behind, messages, row, tool_turn_problems, workspace


def run_scripted_turn(title, agent, env, expected, markers, options=(), problems=()):
    """`acp-engine run --yes [options]` driving `agent` through the scripted
    tool turn in a fresh workspace: the turn's quote and write, the exit
    status, the `expected` lines shown, and none of the agent's processes
    (`markers` in their command line) left."""
    directory = workspace()
    done = subprocess.run([str(TOOL), "run", "--yes", *options, "--cwd", str(directory), "--", *agent],
                          input="use tools in %s\n" % directory, env=env, capture_output=True, text=True,
                          timeout=180)
    output = done.stdout + done.stderr
    problems = list(problems) + tool_turn_problems(output, directory)
    if done.returncode != 0:
        problems.append("run exited %d" % done.returncode)
    for line in expected:
        if line not in output:
            problems.append("run did not show %r" % line)
    for marker in markers:
        left = left_behind(marker)
        if left:
            problems.append("%s processes left after run: %s" % (marker, left))
    row(title, problems, output)
    shutil.rmtree(directory, ignore_errors=True)


def run_chooses_model(name, command, env, model, work, auth=None):
    """`run --model`: the agent's own model list, the choice sent (gemini-cli:
    the legacy session/set_model, outside the schema), `trace` marking it
    legacy and not a violation. `auth`: the method `run` authenticates with."""
    directory = workspace()
    trace = work / ("model-%s.jsonl" % name)
    done = subprocess.run([str(TOOL), "run", "--model", model, "--cwd", str(directory)]
                          + (["--auth", auth] if auth else []) + ["--",
                          str(TOOL), "trace", "--out", str(trace), "--"] + command,
                          input="", env=env, capture_output=True, text=True, timeout=180)
    output = done.stdout + done.stderr
    problems = []
    if done.returncode != 0:
        problems.append("run exited %d" % done.returncode)
    if "model %s" % model not in done.stdout:
        problems.append("run did not name the model chosen")
    records = [json.loads(line) for line in trace.read_text().splitlines()] if trace.exists() else []
    chosen = [r for r in records if r.get("method") in ("session/set_model", "session/set_config_option")]
    if not chosen:
        problems.append("no session/set_model nor session/set_config_option went to the agent")
    if any(r["verdict"] != "ok" for r in records):
        problems.append("trace found violations: %s" % [r.get("problems") for r in records if r["verdict"] != "ok"])
    legacy = [r for r in chosen if r.get("method") == "session/set_model"]
    if legacy and not all(r.get("legacy") for r in legacy if r["kind"] == "request"):
        problems.append("trace did not mark session/set_model legacy")
    if not any(r["kind"] == "response" and "result" in r.get("message", {}) for r in chosen):
        problems.append("the agent did not accept the model")
    left = left_behind(command[0])
    if left:
        problems.append("%s processes left after run: %s" % (name, left))
    how = "legacy session/set_model" if legacy else "session/set_config_option"
    row("acp-engine run --model %s -> %s: chosen with %s, trace marks it" % (model, name, how), problems, output)
    shutil.rmtree(directory, ignore_errors=True)


def python_client_drives(name, command, env, model, work, model_log):
    """Our Python package as the client of a real agent: the model switched
    (gemini-cli: the legacy session/set_model, through unchecked_methods),
    then a tool turn whose permission, read and write it serves; the fake
    model's log shows the turn ran on the model chosen."""
    python = ROOT / "target/python-venv/bin/python"
    if not python.exists():
        row("our Python client -> %s" % name, ["no target/python-venv: run make test-python first"])
        return
    directory = workspace()
    logged = len(model_log.read_text().splitlines()) if model_log.exists() else 0
    done = subprocess.run([str(python), str(HERE / "python_client.py"), "--cwd", str(directory), "--model", model,
                           "--"] + command, env=env, capture_output=True, text=True, timeout=180)
    output = done.stdout + done.stderr
    problems = []
    report = {}
    try:
        report = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        problems.append("the client printed no report (exit %d)" % done.returncode)
    if report:
        if report.get("stop_reason") != "end_turn":
            problems.append("the turn ended %r" % report.get("stop_reason"))
        if not report.get("permissions"):
            problems.append("no permission request reached the client")
        if str(directory / "hello.txt") not in report.get("reads", []):
            problems.append("no fs/read_text_file of hello.txt reached the client")
        if not report.get("writes"):
            problems.append("no fs/write_text_file reached the client")
        if "hello from the test" not in report.get("text", ""):
            problems.append("the reply does not quote the file read")
    requests = [json.loads(line) for line in model_log.read_text().splitlines()[logged:]]
    if not any(model in (r.get("path") or "") or r.get("model") == model for r in requests):
        problems.append("no model request used %s: %s" % (model, sorted({r.get("path") for r in requests})))
    left = left_behind(command[0])
    if left:
        problems.append("%s processes left after the client: %s" % (name, left))
    row("our Python client -> %s: model %s (%s), a tool turn with a permission, read and write" %
        (name, model, "legacy session/set_model" if report.get("legacy_models") else "config option"),
        problems, output)
    shutil.rmtree(directory, ignore_errors=True)


def check_scores(name, command, env, known, auth=None):
    """`check agent` against a real agent: its failures exactly `known`, the
    cases every agent passes passed; the invalid notifications it reported.
    `auth`: the method the cases authenticate with."""
    done = subprocess.run([str(TOOL), "check", "agent", "--json"] + (["--auth", auth] if auth else [])
                          + ["--"] + command, env=env, capture_output=True, text=True, timeout=600)
    verdicts, invalid = {}, []
    for line in done.stdout.splitlines():
        try:
            case = json.loads(line)
        except ValueError:
            continue
        verdicts[case["case"]] = case["verdict"]
        invalid.extend(case.get("invalid_notifications") or [])
    failed = {case for case, verdict in verdicts.items() if verdict == "fail"}
    problems = []
    if failed != known:
        problems.append("failed %s; known defects of this version: %s" % (sorted(failed), sorted(known)))
    for case in ("handshake", "prompt-turn-order", "unknown-method", "large-prompt", "client-capabilities"):
        if verdicts.get(case) != "pass":
            problems.append("%s: %s" % (case, verdicts.get(case)))
    left = left_behind(command[0])
    if left:
        problems.append("%s processes left after check: %s" % (name, left))
    return verdicts, invalid, problems, done.stdout + done.stderr


def trace_between_acpx_and(name, agent, marker, env, work):
    """acpx -> `trace` -> a real agent (`agent`, its program's path) through
    the scripted tool turn; none of its processes (`marker` in their command
    line) left."""
    directory = workspace()
    out = work / ("%s.jsonl" % name)
    code, output = acpx("%s trace --out %s -- %s" % (TOOL, out, agent), directory,
                        "use tools in %s" % directory, env=env, timeout=180)
    seen = messages(output)
    problems = tool_turn_problems(output, directory)
    if code != 0:
        problems.append("acpx exited %d" % code)
    traced = []
    if out.exists():
        traced = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    # Byte-transparent: acpx saw exactly what the trace recorded.
    recorded = [entry.get("message") for entry in traced]
    difference = transparency_problem(seen, traced)
    if difference:
        problems.append("acpx saw %d messages, the trace recorded %d: %s" % (len(seen), len(recorded), difference))
    if not any(m.get("method") == "session/request_permission" for m in seen):
        problems.append("no permission request crossed the trace")
    left = left_behind(marker)
    if left:
        problems.append("%s processes left after trace: %s" % (name, left))
    violations = sorted({"%s on %s" % (problem.get("rule"), update_kind(entry))
                         for entry in traced if entry.get("verdict") != "ok"
                         for problem in entry.get("problems") or [] if isinstance(problem, dict)})
    row("acpx -> acp-engine trace -> %s: byte-transparent (%d messages; flagged: %s)"
        % (name, len(recorded), "; ".join(violations) or "none"), problems, output)
    shutil.rmtree(directory, ignore_errors=True)


def transparency_problem(seen, traced):
    """Why the messages acpx saw are not those the trace recorded, each
    direction in its own order; None when they are. Two messages crossing
    in opposite directions have no order between them: acpx may log its
    answer before an update the agent had already sent."""
    def key(message):
        return json.dumps(message, sort_keys=True)
    seen_keys = [key(message) for message in seen]
    if sorted(seen_keys) != sorted(key(entry.get("message")) for entry in traced):
        return "not the same messages"
    for direction in sorted({str(entry.get("dir")) for entry in traced}):
        recorded = [key(entry.get("message")) for entry in traced if str(entry.get("dir")) == direction]
        members = set(recorded)
        if [k for k in seen_keys if k in members] != recorded:
            return "the %s messages in another order" % direction
    return None


def update_kind(entry):
    """A traced message's method, with the kind of a session/update."""
    message = entry.get("message") or {}
    update = (message.get("params") or {}).get("update") if isinstance(message.get("params"), dict) else None
    kind = update.get("sessionUpdate") if isinstance(update, dict) else None
    return "%s %s" % (message.get("method"), kind) if kind else str(message.get("method"))


def acpx_through_serve_to(name, agent, marker, env):
    """acpx -> `connect` -> `serve` -> a real agent (`agent`, its program's
    path) through the scripted tool turn, over WebSocket and HTTP; none of
    its processes (`marker` in their command line) left once the client
    left."""
    served = Served([str(agent)], env=env)
    for url in (served.ws, served.http):
        directory = workspace()
        code, output = acpx("%s connect %s" % (TOOL, url), directory, "use tools in %s" % directory, env=env,
                            timeout=180)
        problems = tool_turn_problems(output, directory)
        if code != 0:
            problems.append("acpx exited %d" % code)
        # The client left: serve stops the agent (which ignores the end of its input).
        left = left_behind(marker)
        if left:
            problems.append("%s processes left after the client left: %s" % (name, left))
        row("acpx -> connect %s -> serve -> %s: a tool turn; the agent stopped after"
            % (url.split(":")[0], name), problems, output)
        shutil.rmtree(directory, ignore_errors=True)
    served.stop()
