"""Drive `acp-engine run` through a pseudo-terminal, as a person would:
a prompt whose permission request is answered with a number, a prompt
cancelled with Ctrl-C while its permission request waits, then Ctrl-D.

usage: pty_run.py ACP_ENGINE CWD AGENT_COMMAND...

Exits 0 when every step showed what it should; otherwise prints what the
terminal showed and exits 1.
"""
import os
import pty
import select
import sys
import time

tool, cwd, agent = sys.argv[1], sys.argv[2], sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(tool, [tool, "run", "--cwd", cwd, "--", *agent])

screen = b""


def expect(text, timeout=20):
    """Wait until `text` is on the screen (after what was seen before)."""
    global screen
    deadline = time.time() + timeout
    while text.encode() not in screen:
        left = deadline - time.time()
        if left <= 0:
            fail(f"never saw {text!r}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                fail(f"the program ended before {text!r}")
            if not chunk:
                fail(f"the program ended before {text!r}")
            screen += chunk
    at = screen.index(text.encode()) + len(text)
    seen, screen = screen[:at], screen[at:]
    return seen.decode(errors="replace")


def fail(why):
    sys.stdout.write(f"FAIL: {why}\n--- the terminal showed ---\n{screen.decode(errors='replace')}\n")
    sys.exit(1)


def press(keys):
    os.write(fd, keys.encode())


expect("Ctrl-D quits")
press("Say hello\r")
expect("choose a number: ")
press("1\r")
reply = expect("[end_turn]")
if "Hello from the client's file" not in reply:
    fail("the agent did not read hello.txt through run")
if "terminal said: hi" not in reply:
    fail("the agent's terminal command did not run")
with open(os.path.join(cwd, "written.txt")) as f:
    if f.read() != "written by agent":
        fail("the agent did not write written.txt through run")
press("cancel me\r")
expect("choose a number: ")
press("\x03")
expect("[cancelled]")
press("\x04")
_, status = os.waitpid(pid, 0)
if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
    fail(f"exit status {status}")
print("ok: a prompt with a permission answered, a turn cancelled with Ctrl-C, Ctrl-D quit")
