"""gemini-cli (`gemini --acp`) on a fake Gemini API (fake_model.py): `run`
through a tool turn whose read and write go over ACP, `run --model` (the
legacy session/set_model), our Python client switching its model and
serving such a turn, `check agent`."""
import os
import shutil
import subprocess

from harness import BIN, TOOL, left_behind, row, scratch_home, workspace
from shapes import check_scores, python_client_drives, run_chooses_model

GEMINI = BIN / "gemini"
# gemini-cli 0.61.0 answers params that do not fit -32603 (not -32602), and
# no malformed line.
GEMINI_KNOWN_FAILURES = {"invalid-params", "invalid-prompt", "invalid-request", "parse-error"}


def gemini_env(port):
    env = dict(os.environ)
    env.update({
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:%d" % port,
        "GEMINI_API_KEY": "acp-engine-test",
        "HOME": scratch_home(),
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


def check_scores_gemini(env):
    verdicts, _, problems, output = check_scores("gemini-cli", [str(GEMINI), "--acp"], env, GEMINI_KNOWN_FAILURES)
    row("acp-engine check agent -> gemini-cli: %d cases, the failures exactly its known defects" % len(verdicts),
        problems, output)


def rows(port, work):
    env = gemini_env(port)
    run_drives_gemini(env)
    run_chooses_model("gemini-cli", [str(GEMINI), "--acp"], env, "gemini-2.5-pro", work)
    python_client_drives("gemini-cli", [str(GEMINI), "--acp"], env, "gemini-3.5-flash-lite", work, work / "model.log")
    check_scores_gemini(env)
    shutil.rmtree(env["HOME"], ignore_errors=True)
