"""codex-acp (Codex's ACP agent, on the official Rust SDK) on a fake OpenAI
Responses API (fake_model.py): `run` through a turn whose shell command
Codex runs after the client's permission, `run --model`, `check agent`,
`trace` between acpx and it, acpx through `connect` / `serve` (which stops
it when the client leaves: it ignores the end of its input); then
acp-agent-framework on our Python compat layer, with codex-acp as its
backend (framework.py)."""
import os
import shutil
from pathlib import Path

import framework
from harness import BIN, HERE, row, scratch_home
from shapes import acpx_through_serve_to, check_scores, run_chooses_model, run_scripted_turn, trace_between_acpx_and

CODEX = BIN / "codex-acp"
# codex-acp 0.16.0 (on the official Rust SDK 0.14.0) answers no malformed
# line and keeps running after its stdin closes.
CODEX_KNOWN_FAILURES = {"exit-on-eof", "invalid-request", "parse-error"}


def codex_env(port):
    """Codex's home, its config naming the fake model API as its provider."""
    home = Path(scratch_home())
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


def check_scores_codex(env):
    verdicts, _, problems, output = check_scores("codex-acp", [str(CODEX)], env, CODEX_KNOWN_FAILURES,
                                                 auth="openai-api-key")
    row("acp-engine check agent -> codex-acp: %d cases, the failures exactly its known defects" % len(verdicts),
        problems, output)


def rows(port, work):
    env = codex_env(port)
    run_drives_codex(env)
    run_chooses_model("codex-acp", [str(CODEX)], env, "gpt-5.4", work, auth="openai-api-key")
    check_scores_codex(env)
    trace_between_acpx_and("codex-acp", CODEX, "codex-acp", env, work)
    acpx_through_serve_to("codex-acp", CODEX, "codex-acp", env)
    framework.rows(env)
    shutil.rmtree(env["HOME"], ignore_errors=True)
