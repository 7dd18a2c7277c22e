"""Real ACP programs from npm, which nobody here wrote, against our side
(what `make test-real` runs after interop/real/setup.sh):

- acpx (a headless client on the official TypeScript SDK) drives every
  language's example agent through a turn with a permission request, a
  file read, a write and a terminal, over stdio and through
  `acp-engine connect` / `serve` (WebSocket and Streamable HTTP);
- claude-agent-acp (Claude Code's ACP agent) runs real turns against a fake
  Anthropic API on loopback (fake_model.py): `acp-engine run` drives it
  through a tool turn with a permission; `acp-engine check agent` scores it
  (its known defects listed below); `acp-engine trace` between acpx and it
  is byte-transparent; acpx reaches it through `connect` / `serve`;
- codex-acp (Codex's ACP agent, on the official Rust SDK) on a fake OpenAI
  Responses API on the same server: `run` drives it through a turn whose
  shell command Codex runs after the client's permission; `check agent`
  scores it (its known defects listed below); `trace` between acpx and it
  is byte-transparent; acpx reaches it through `connect` / `serve`, which
  stops it when the client leaves (it ignores the end of its input);
- acp-agent-framework (PyPI: an agent framework on the official Python
  SDK's API) runs unedited on our Python package's `acp_engine.compat`,
  without the official SDK installed: `run` drives its agent, whose codex
  backend it spawns and drives as an ACP client, through that tool turn,
  and `check agent` finds no defect in it;
- gemini-cli (`gemini --acp`) on a fake Gemini API on the same server:
  `run` drives it through a tool turn whose read and write go over ACP
  (fs/read_text_file, a permission, fs/write_text_file); `check agent`
  scores it (its known defects listed below); our Python package, as its
  client, switches its model with the legacy session/set_model (a method
  outside the schema) and serves such a turn;
- `run --model` switches each agent's model the way it offers (gemini-cli:
  legacy session/set_model; claude-agent-acp, codex-acp: a config option), and `trace`
  marks the legacy method instead of flagging it;
- no agent process (nor what it started) is left after any of them.

Prints a row per check and "N passed, M failed" last; exits 1 on a failure.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TOOL = ROOT / "target/debug/acp-engine"
BIN = HERE / "node_modules/.bin"
ACPX = BIN / "acpx"
CLAUDE = BIN / "claude-agent-acp"
GEMINI = BIN / "gemini"
CODEX = BIN / "codex-acp"

# claude-agent-acp 0.23.1 (on the official TypeScript SDK 0.17) answers no
# malformed line (-32700 / -32600) and keeps running after its stdin closes.
CLAUDE_KNOWN_FAILURES = {"exit-on-eof", "invalid-request", "parse-error"}
# gemini-cli 0.61.0 answers params that do not fit -32603 (not -32602), and
# no malformed line.
GEMINI_KNOWN_FAILURES = {"invalid-params", "invalid-prompt", "invalid-request", "parse-error"}
# codex-acp 0.16.0 (on the official Rust SDK 0.14.0) answers no malformed
# line and keeps running after its stdin closes.
CODEX_KNOWN_FAILURES = {"exit-on-eof", "invalid-request", "parse-error"}

results = {"passed": 0, "failed": 0}


def row(name, problems, detail=""):
    if problems:
        results["failed"] += 1
        print("FAIL %s" % name)
        for problem in problems:
            print("  | %s" % problem)
        if detail:
            for line in detail.strip().splitlines()[-15:]:
                print("  | %s" % line[:300])
    else:
        results["passed"] += 1
        print("PASS %s" % name)
    sys.stdout.flush()


def messages(text):
    """The JSON-RPC messages among `text`'s lines."""
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
                found.append(message)
    return found


def running_with(marker):
    """Pids of running processes whose command line contains `marker`."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        # Not acp-engine itself (`serve -- claude-agent-acp` names its agent).
        if marker in cmdline and str(TOOL) not in cmdline and state not in ("Z", "X"):
            pids.append(int(entry.name))
    return pids


def left_behind(marker, patience=8.0):
    """Processes of `marker` still running after `patience` s (then killed)."""
    deadline = time.time() + patience
    while True:
        pids = running_with(marker)
        if not pids or time.time() > deadline:
            break
        time.sleep(0.1)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return pids


# Every directory made for a row, removed at the end even if a row raised.
MADE = []


def workspace():
    """A fresh directory with the file the turns read."""
    directory = Path(tempfile.mkdtemp(prefix="acp-real-"))
    MADE.append(directory)
    (directory / "hello.txt").write_text("hello from the test\n")
    return directory


def acpx(agent_command, directory, prompt, env=None, timeout=120):
    """acpx exec PROMPT against `agent_command` in `directory`: (exit code, output)."""
    command = [str(ACPX), "--agent", agent_command, "--approve-all", "--format", "json",
               "--cwd", str(directory), "exec", prompt]
    done = subprocess.run(command, cwd=directory, env=env, capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout + done.stderr


def example_turn_problems(code, output, directory):
    """What is wrong with an example agent's turn under acpx."""
    problems = []
    seen = messages(output)
    if code != 0:
        problems.append("acpx exited %d" % code)
    if not any(m.get("method") == "session/request_permission" for m in seen):
        problems.append("no permission request")
    reads = {m["id"] for m in seen if m.get("method") == "fs/read_text_file"}
    if not any(m.get("id") in reads and "method" not in m
               and (m.get("result") or {}).get("content") == "hello from the test\n" for m in seen):
        problems.append("no fs/read_text_file answered with the file's text")
    if not any(m.get("method") == "terminal/create" for m in seen):
        problems.append("no terminal")
    if not any((m.get("result") or {}).get("stopReason") == "end_turn" for m in seen):
        problems.append("the turn did not end end_turn")
    if not (directory / "written.txt").exists():
        problems.append("the agent's fs/write_text_file wrote nothing")
    return problems


def our_agents(work):
    """Every language's example agent that is built: (name, command)."""
    agents = [("Rust", str(ROOT / "target/debug/examples/agent"))]
    c_agent = work / "c-agent"
    subprocess.run(["cc", "-o", str(c_agent), str(ROOT / "bindings/c/examples/agent.c"), "-I", str(ROOT / "include"),
                    "-L", str(ROOT / "target/debug"), "-lacp_engine", "-Wl,-rpath," + str(ROOT / "target/debug")],
                   check=True)
    agents.append(("C", str(c_agent)))
    python = ROOT / "target/python-venv/bin/python"
    if python.exists():
        agents.append(("Python", "%s %s" % (python, ROOT / "python/examples/agent.py")))
    node = ROOT / "target/node-app/out/examples/agent.js"
    if node.exists():
        agents.append(("Node", "node %s" % node))
    go = ROOT / "target/go-bin/agent"
    if go.exists():
        agents.append(("Go", str(go)))
    return agents


class Served:
    """`acp-engine serve` on a free loopback port, for `agent`."""

    def __init__(self, agent, env=None):
        # Its log (and its agents' stderr) to a file: a pipe nobody reads
        # would fill and stop them.
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen([str(TOOL), "serve", "--listen", "127.0.0.1:0", "--"] + agent,
                                        stdout=subprocess.PIPE, stderr=self.log, env=env, text=True)
        self.ws = self.process.stdout.readline().strip()
        self.http = self.process.stdout.readline().strip()

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.seek(0)
        return self.log.read()


def acpx_drives_our_agents(work):
    for name, command in our_agents(work):
        directory = workspace()
        code, output = acpx(command, directory, "hello")
        row("acpx -> acp-engine (%s) example agent: permission, file read and write, terminal" % name,
            example_turn_problems(code, output, directory), output)
        shutil.rmtree(directory, ignore_errors=True)


def acpx_through_serve(work):
    served = Served([str(ROOT / "target/debug/examples/agent")])
    for url in (served.ws, served.http):
        directory = workspace()
        code, output = acpx("%s connect %s" % (TOOL, url), directory, "hello")
        row("acpx -> acp-engine connect %s -> serve -> Rust example agent" % url.split(":")[0],
            example_turn_problems(code, output, directory), output)
        shutil.rmtree(directory, ignore_errors=True)
    served.stop()


def claude_env(port):
    env = dict(os.environ)
    env.update({
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % port,
        "ANTHROPIC_API_KEY": "sk-acp-engine-test",
        # Claude Code refuses to run as root outside a sandbox; this is one.
        "IS_SANDBOX": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "HOME": str(Path(tempfile.mkdtemp(prefix="acp-real-home-"))),
    })
    return env


def tool_turn_problems(seen_text, directory):
    """What is wrong with claude-agent-acp's scripted tool turn."""
    problems = []
    if "hello from the test" not in seen_text:
        problems.append("the model's answer does not quote the file the agent read")
    if not (directory / "out.txt").exists():
        problems.append("the agent's Write (after the permission) wrote no out.txt")
    return problems


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


def run_drives_claude(env):
    run_scripted_turn("acp-engine run --yes -> claude-agent-acp: a tool turn with a permission", [str(CLAUDE)], env,
                      ("connected to @zed-industries/claude-agent-acp", "Read hello.txt", "[--yes: allowed Write",
                       "[end_turn]"), ("claude-agent",))


def gemini_env(port):
    env = dict(os.environ)
    env.update({
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:%d" % port,
        "GEMINI_API_KEY": "acp-engine-test",
        "HOME": str(Path(tempfile.mkdtemp(prefix="acp-real-home-"))),
    })
    return env


def run_drives_gemini(env):
    directory = workspace()
    done = subprocess.run([str(TOOL), "run", "--yes", "--cwd", str(directory), "--", str(GEMINI), "--acp"],
                          input="use tools in %s\n" % directory, env=env, capture_output=True, text=True,
                          timeout=180)
    output = done.stdout
    problems = []
    if done.returncode != 0:
        problems.append("run exited %d" % done.returncode)
    for expected in ("connected to gemini-cli", "[read %s/hello.txt]" % directory, "[--yes: allowed Writing to hello.txt",
                     "[wrote %s/hello.txt]" % directory, "The file says: ", "hello from the test", "[end_turn]"):
        if expected not in output:
            problems.append("run did not show %r" % expected)
    if (directory / "hello.txt").read_text() != "written by the fake model\n":
        problems.append("the agent's write over ACP did not reach the file")
    left = left_behind(str(GEMINI))
    if left:
        problems.append("gemini processes left after run: %s" % left)
    row("acp-engine run --yes -> gemini-cli: a tool turn, its read and write over ACP after a permission",
        problems, output + done.stderr[-2000:])
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


def check_scores_gemini(env):
    verdicts, _, problems, output = check_scores("gemini-cli", [str(GEMINI), "--acp"], env, GEMINI_KNOWN_FAILURES)
    row("acp-engine check agent -> gemini-cli: %d cases, the failures exactly its known defects" % len(verdicts),
        problems, output)


def check_scores_claude(env):
    verdicts, invalid, problems, output = check_scores("claude-agent-acp", [str(CLAUDE)], env, CLAUDE_KNOWN_FAILURES)
    # Its usage_update with "used": null each turn is counted, not lost.
    if not any("usage_update" in text for text in invalid):
        problems.append("its invalid usage_update was not reported: %s" % invalid)
    row("acp-engine check agent -> claude-agent-acp: %d cases, the failures exactly its known defects, "
        "%d invalid notifications reported" % (len(verdicts), len(invalid)), problems, output)


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
    # Byte-transparent: acpx saw exactly what the trace recorded, in order.
    recorded = [entry.get("message") for entry in traced]
    if recorded != seen:
        problems.append("acpx saw %d messages, the trace recorded %d, or they differ" % (len(seen), len(recorded)))
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


def codex_env(port):
    """Codex's home, its config naming the fake model API as its provider."""
    home = Path(tempfile.mkdtemp(prefix="acp-real-home-"))
    config = (HERE / "codex-config.toml").read_text().replace("PORT", str(port))
    (home / "config.toml").write_text(config)
    env = dict(os.environ)
    env.update({"CODEX_HOME": str(home), "HOME": str(home), "OPENAI_API_KEY": "sk-acp-engine-test"})
    return env


def run_drives_codex(env):
    run_scripted_turn("acp-engine run --yes -> codex-acp: a tool turn, its command run after a permission",
                      [str(CODEX)], env,
                      ("connected to codex-acp", "[--yes: allowed cat hello.txt", "The file says: ", "[end_turn]"),
                      ("codex-acp",), options=("--auth", "openai-api-key"))


def framework_on_compat(env):
    """acp-agent-framework's agent, and its client of codex-acp, on
    acp_engine.compat: `run` -> framework -> codex-acp -> the fake model."""
    venv = ROOT / "target/real-python-venv"
    wheels = sorted((ROOT / "target/wheels").glob("acp_engine-*.whl"))
    name = "acp-agent-framework on acp_engine.compat -> codex-acp"
    if not wheels:
        row(name, ["no target/wheels/acp_engine-*.whl: run make test-python first"])
        return
    install = subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                              "--no-deps", "--force-reinstall", str(wheels[-1])], capture_output=True, text=True)
    problems = [] if install.returncode == 0 else ["installing the wheel failed: %s" % install.stderr[-500:]]
    # The official SDK is not there: whatever imports `acp` gets our layer or nothing.
    official = subprocess.run([str(venv / "bin/python"), "-c", "import acp"], capture_output=True, text=True)
    if "ModuleNotFoundError" not in official.stderr:
        problems.append("`import acp` works without our alias: the official SDK is installed")
    env = dict(env, PATH="%s:%s" % (BIN, env["PATH"]), PYTHONPATH=str(HERE))
    agent = [str(venv / "bin/python"), "-m", "acp_engine.compat", str(venv / "bin/acp-agent"), "run",
             "framework_agent:agent"]
    run_scripted_turn(name + ": a tool turn through both hops, the official SDK not installed", agent, env,
                      ("connected to framework-on-codex 0.2.0", "The file says: ", "[end_turn]"),
                      ("acp-agent", "codex-acp"), problems=problems)
    # Each case's turns go through codex-acp too. On the official SDK 0.12.1
    # the same program fails garbage-then-turn (it exits), parse-error and
    # invalid-request; on ours, nothing.
    verdicts, _, problems, output = check_scores("acp-agent-framework", agent, env, set())
    row("acp-engine check agent -> acp-agent-framework on acp_engine.compat: %d cases, none failed"
        % len(verdicts), problems, output)


def check_scores_codex(env):
    verdicts, _, problems, output = check_scores("codex-acp", [str(CODEX)], env, CODEX_KNOWN_FAILURES,
                                                 auth="openai-api-key")
    row("acp-engine check agent -> codex-acp: %d cases, the failures exactly its known defects" % len(verdicts),
        problems, output)


def main():
    work = Path(tempfile.mkdtemp(prefix="acp-real-work-"))
    model = None
    try:
        acpx_drives_our_agents(work)
        acpx_through_serve(work)
        port_file = work / "port"
        model = subprocess.Popen([sys.executable, str(HERE / "fake_model.py"), str(port_file),
                                  str(work / "model.log")])
        deadline = time.time() + 10
        while not port_file.exists() and time.time() < deadline:
            time.sleep(0.05)
        env = claude_env(int(port_file.read_text()))
        run_drives_claude(env)
        run_chooses_model("claude-agent-acp", [str(CLAUDE)], env, "opus[1m]", work)
        check_scores_claude(env)
        trace_between_acpx_and("claude-agent-acp", CLAUDE, "claude-agent", env, work)
        acpx_through_serve_to("claude-agent-acp", CLAUDE, "claude-agent", env)
        shutil.rmtree(env["HOME"], ignore_errors=True)
        env = codex_env(int(port_file.read_text()))
        run_drives_codex(env)
        run_chooses_model("codex-acp", [str(CODEX)], env, "gpt-5.4", work, auth="openai-api-key")
        check_scores_codex(env)
        trace_between_acpx_and("codex-acp", CODEX, "codex-acp", env, work)
        acpx_through_serve_to("codex-acp", CODEX, "codex-acp", env)
        framework_on_compat(env)
        shutil.rmtree(env["HOME"], ignore_errors=True)
        env = gemini_env(int(port_file.read_text()))
        run_drives_gemini(env)
        run_chooses_model("gemini-cli", [str(GEMINI), "--acp"], env, "gemini-2.5-pro", work)
        python_client_drives("gemini-cli", [str(GEMINI), "--acp"], env, "gemini-3.5-flash-lite", work, work / "model.log")
        check_scores_gemini(env)
        shutil.rmtree(env["HOME"], ignore_errors=True)
    finally:
        if model:
            model.kill()
            model.wait()
        shutil.rmtree(work, ignore_errors=True)
        for directory in MADE:
            shutil.rmtree(directory, ignore_errors=True)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
