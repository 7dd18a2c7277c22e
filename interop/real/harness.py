"""What every row of the real-program tests shares (interop/real/run.py):
paths, the row printer and its tally, the messages in a program's output,
processes left behind, scratch directories, acpx, and `acp-engine serve`."""
import json
import os
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


def tool_turn_problems(seen_text, directory):
    """What is wrong with claude-agent-acp's scripted tool turn."""
    problems = []
    if "hello from the test" not in seen_text:
        problems.append("the model's answer does not quote the file the agent read")
    if not (directory / "out.txt").exists():
        problems.append("the agent's Write (after the permission) wrote no out.txt")
    return problems


def scratch_home():
    """A fresh home directory for an agent (its settings, caches, logins)."""
    return str(Path(tempfile.mkdtemp(prefix="acp-real-home-")))
