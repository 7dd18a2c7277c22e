"""claude-agent-acp (Claude Code's ACP agent) on a fake Anthropic API
(fake_model.py): `run` through a tool turn with a permission, `run
--model`, `check agent`, `trace` between acpx and it, acpx through
`connect` / `serve`."""
import os
import shutil

from harness import BIN, row, scratch_home
from shapes import acpx_through_serve_to, check_scores, run_chooses_model, run_scripted_turn, trace_between_acpx_and

CLAUDE = BIN / "claude-agent-acp"
# claude-agent-acp 0.23.1 (on the official TypeScript SDK 0.17) answers no
# malformed line (-32700 / -32600) and keeps running after its stdin closes.
CLAUDE_KNOWN_FAILURES = {"exit-on-eof", "invalid-request", "parse-error"}


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
        "HOME": scratch_home(),
    })
    return env


def run_drives_claude(env):
    run_scripted_turn("acp-engine run --yes -> claude-agent-acp: a tool turn with a permission", [str(CLAUDE)], env,
                      ("connected to @zed-industries/claude-agent-acp", "Read hello.txt", "[--yes: allowed Write",
                       "[end_turn]"), ("claude-agent",))


def check_scores_claude(env):
    verdicts, invalid, problems, output = check_scores("claude-agent-acp", [str(CLAUDE)], env, CLAUDE_KNOWN_FAILURES)
    # Its usage_update with "used": null each turn is counted, not lost.
    if not any("usage_update" in text for text in invalid):
        problems.append("its invalid usage_update was not reported: %s" % invalid)
    row("acp-engine check agent -> claude-agent-acp: %d cases, the failures exactly its known defects, "
        "%d invalid notifications reported" % (len(verdicts), len(invalid)), problems, output)


def rows(port, work):
    env = claude_env(port)
    run_drives_claude(env)
    run_chooses_model("claude-agent-acp", [str(CLAUDE)], env, "opus[1m]", work)
    check_scores_claude(env)
    trace_between_acpx_and("claude-agent-acp", CLAUDE, "claude-agent", env, work)
    acpx_through_serve_to("claude-agent-acp", CLAUDE, "claude-agent", env)
    shutil.rmtree(env["HOME"], ignore_errors=True)
