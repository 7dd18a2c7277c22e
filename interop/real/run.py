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
A file per program (ours.py, claude.py, codex.py, framework.py,
gemini.py); the rows several agents share are in shapes.py, what every
row shares in harness.py.
"""
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import claude
import codex
import gemini
import ours
from harness import HERE, MADE, results


def main():
    work = Path(tempfile.mkdtemp(prefix="acp-real-work-"))
    model = None
    try:
        ours.rows(work)
        port_file = work / "port"
        model = subprocess.Popen([sys.executable, str(HERE / "fake_model.py"), str(port_file),
                                  str(work / "model.log")])
        deadline = time.time() + 10
        while not port_file.exists() and time.time() < deadline:
            time.sleep(0.05)
        port = int(port_file.read_text())
        claude.rows(port, work)
        codex.rows(port, work)
        gemini.rows(port, work)
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
