"""acp-agent-framework (PyPI: an agent framework on the official Python
SDK's API) unedited on our `acp_engine.compat`, without the official SDK
installed: `run` drives its agent, whose codex-acp backend it spawns and
drives as an ACP client, through the scripted tool turn; `check agent`
finds no defect in it."""
import subprocess

from harness import BIN, HERE, ROOT, row
from shapes import check_scores, run_scripted_turn


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


def rows(env):
    """`env`: codex-acp's (framework_agent.py's backend)."""
    framework_on_compat(env)
