"""Every language's example agent of ours under acpx (a headless client on
the official TypeScript SDK): over stdio, and through `acp-engine connect`
/ `serve` (WebSocket and Streamable HTTP)."""
import shutil
import subprocess

from harness import ROOT, TOOL, Served, acpx, messages, row, workspace


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


def rows(work):
    acpx_drives_our_agents(work)
    acpx_through_serve(work)
