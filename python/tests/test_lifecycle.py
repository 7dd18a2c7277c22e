"""Process lifecycle: an interpreter that exits with a connection open
exits promptly and its agent goes too; EOF ends an agent."""

import os
import signal
import subprocess
import sys
import textwrap
import time

from conftest import peer, wait_gone

AGENT = peer("full_agent.py")


def run_script(body: str) -> subprocess.CompletedProcess:
    script = textwrap.dedent(body).replace("AGENT", repr(AGENT)).replace("PYTHON", repr(sys.executable))
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)


def test_interpreter_exit_with_a_connection_open() -> None:
    done = run_script(
        """
        import asyncio
        from acp_engine import Connection, spawn_stream

        async def main():
            connection = Connection(spawn_stream(PYTHON, AGENT))
            await connection.send_request("initialize", {"protocolVersion": 1})
            print(connection.pid, flush=True)
            # returns with the connection open

        asyncio.run(main())
        """
    )
    assert done.returncode == 0, done.stderr
    assert wait_gone(int(done.stdout.strip()))


def test_exit_with_a_request_in_flight() -> None:
    done = run_script(
        """
        import asyncio, sys
        from acp_engine import Connection, spawn_stream

        async def main():
            connection = Connection(spawn_stream(PYTHON, AGENT))
            await connection.send_request("initialize", {"protocolVersion": 1})
            print(connection.pid, flush=True)
            asyncio.ensure_future(connection.send_request(
                "session/prompt", {"sessionId": "s", "prompt": [{"type": "text", "text": "hang"}]}))
            await asyncio.sleep(0.1)
            sys.exit(0)

        asyncio.run(main())
        """
    )
    assert done.returncode == 0, done.stderr
    assert wait_gone(int(done.stdout.strip()))


def test_agent_exits_on_stdin_eof() -> None:
    agent = subprocess.Popen([sys.executable, AGENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin is not None and agent.stdout is not None
    agent.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n')
    agent.stdin.flush()
    assert b'"protocolVersion":1' in agent.stdout.readline()
    agent.stdin.close()
    assert agent.wait(timeout=10) == 0


def test_malformed_input_gets_errors_and_the_agent_keeps_going() -> None:
    agent = subprocess.Popen([sys.executable, AGENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin is not None and agent.stdout is not None
    agent.stdin.write(b"{not json\n[1,2]\n")
    agent.stdin.write(b'{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}\n')
    agent.stdin.flush()
    lines = [agent.stdout.readline() for _ in range(3)]
    assert b"-32700" in lines[0]
    assert b"-32600" in lines[1]
    assert b'"id":7' in lines[2] and b'"protocolVersion":1' in lines[2]
    agent.stdin.close()
    assert agent.wait(timeout=10) == 0


def test_ctrl_c_with_a_call_in_flight() -> None:
    # A client waiting on a call that never returns gets Ctrl-C: it exits
    # (KeyboardInterrupt) at once, and its agent goes too.
    script = textwrap.dedent(
        """
        import asyncio, faulthandler, signal
        from acp_engine import Connection, spawn_stream

        # Ctrl-C as in a terminal, even when whatever started the tests
        # ignores SIGINT (a background job of a non-interactive shell does,
        # and Python then never raises KeyboardInterrupt).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        # Should it hang anyway, its stacks go to stderr, which the
        # assertion below shows.
        faulthandler.dump_traceback_later(15, exit=True)

        async def main():
            connection = Connection(spawn_stream(PYTHON, AGENT))
            await connection.send_request("initialize", {"protocolVersion": 1})
            print(connection.pid, flush=True)
            await connection.send_request(
                "session/prompt", {"sessionId": "s", "prompt": [{"type": "text", "text": "hang"}]})

        asyncio.run(main())
        """
    ).replace("AGENT", repr(AGENT)).replace("PYTHON", repr(sys.executable))
    client = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert client.stdout is not None
    agent_pid = int(client.stdout.readline())
    time.sleep(0.2)
    client.send_signal(signal.SIGINT)
    _, stderr = client.communicate(timeout=20)
    assert client.returncode != 0 and "KeyboardInterrupt" in stderr, stderr
    assert wait_gone(agent_pid)


def test_a_peer_that_stops_reading_gets_backpressure_not_loss() -> None:
    # Our side sends 400,000 notifications to a peer that reads nothing for
    # a while: the sender waits (memory stays bounded), then everything
    # arrives, in order, once the peer reads.
    reader = textwrap.dedent(
        """
        import sys, time
        time.sleep(1.5)
        count = 0
        for line in sys.stdin.buffer:
            count += 1
        print("received", count, file=sys.stderr, flush=True)
        """
    )
    script = textwrap.dedent(
        """
        import asyncio, resource, sys
        from acp_engine import Connection, spawn_stream

        async def main():
            connection = Connection(spawn_stream(PYTHON, "-c", READER))
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            for i in range(400_000):
                await connection.send_notification("_n", {"i": i, "pad": "x" * 100})
            grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
            print(grown // 1024, flush=True)
            await connection.aclose()

        asyncio.run(main())
        """
    ).replace("READER", repr(reader)).replace("PYTHON", repr(sys.executable))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    grown_mb = int(done.stdout.split()[0])
    received = int(done.stderr.split("received")[1].split()[0])
    # 400,000 messages are ~50 MB; the write queue holds at most a few MB.
    assert grown_mb < 24, f"sender grew {grown_mb} MB while the peer was not reading"
    assert received == 400_000


def test_a_request_right_before_eof_is_answered(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # `printf request | agent`: the request and the end of input arrive
    # together; the agent answers before it closes, to a pipe or a file.
    request = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'
    done = subprocess.run([sys.executable, AGENT], input=request, capture_output=True, timeout=20)
    assert b'"id":1,"result"' in done.stdout, done.stdout
    output = tmp_path / "out.jsonl"
    with open(output, "wb") as stdout:
        subprocess.run([sys.executable, AGENT], input=request, stdout=stdout, timeout=20)
    assert b'"id":1,"result"' in output.read_bytes()


def test_eof_while_the_agent_spins_for_input_ends_it_cleanly() -> None:
    # The dispatcher spins a moment for input before it sleeps; EOF within
    # that spin lets the stream's fd go. (It went on to watch the closed fd:
    # "Bad file descriptor" from a task nobody awaited, 2 runs in 80 under
    # load.) A spin of 2 s makes the EOF land inside it every time.
    agent = subprocess.Popen(
        [sys.executable, AGENT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "ACP_ENGINE_SPIN_US": "2000000"},
    )
    assert agent.stdin is not None and agent.stdout is not None and agent.stderr is not None
    agent.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n')
    agent.stdin.flush()
    assert b'"id":1' in agent.stdout.readline()
    time.sleep(0.3)  # the agent spins for the next message
    agent.stdin.close()
    assert agent.wait(timeout=10) == 0
    stderr = agent.stderr.read().decode()
    assert "Traceback" not in stderr and "exception" not in stderr, stderr
