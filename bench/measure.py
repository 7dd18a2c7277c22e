"""One run of one client/agent pair: the client's JSON line, both processes'
peak RSS (each wrapped in /usr/bin/time) and their CPU time."""

import json
import os
import resource
import subprocess
import tempfile

from impls import ROOT

TIME = "/usr/bin/time"

# The programs run without NODE_EXTRA_CA_CERTS: some machines (this sandbox)
# set it, and every Node process then parses a certificate bundle at startup
# (~50 ms here, for ours and the official SDK's alike), which no benchmark
# uses: it would only blur the setup figures.
ENV = {key: value for key, value in os.environ.items() if key != "NODE_EXTRA_CA_CERTS"}


def measure(client, agent, scenario, n, timeout):
    """(result, error): result has the client's fields plus cpu_s,
    rss_client_kb and rss_agent_kb; error is a short reason or None."""
    with tempfile.TemporaryDirectory() as tmp:
        client_rss = os.path.join(tmp, "client")
        agent_rss = os.path.join(tmp, "agent")
        cmd = ([TIME, "-f", "%M", "-o", client_rss] + client + ["--scenario", scenario, "--n", str(n), "--"]
               + [TIME, "-f", "%M", "-o", agent_rss] + agent)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            done = subprocess.run(cmd, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, "timeout"
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if not lines:
            stderr = [line for line in done.stderr.strip().splitlines() if "exit status" not in line]
            return None, f"exit {done.returncode}: {(stderr or ['no output'])[-1][:160]}"
        result = json.loads(lines[-1])
        if not result.get("ok"):
            late = result.get("late") or 0
            if not (late and result.get("count", 0) + late == n):
                return None, f"count {result.get('count')} of {n}"
            # Everything arrived, but some updates after the turn's answer:
            # measured, and reported as an ordering failure.
            result["late"] = late
        # CPU time of the client and the agent it spawned and reaped, for
        # the whole run (setup included): what the SDKs cost, whatever the clock.
        result["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        result["rss_client_kb"] = read_kb(client_rss)
        result["rss_agent_kb"] = read_kb(agent_rss)
        return result, None


def read_kb(path):
    try:
        with open(path) as f:
            return int(f.read().split()[-1])
    except (OSError, ValueError, IndexError):
        return None
