"""The benchmark implementations (every language's agent and client, ours and
the official SDKs') and how to build them."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
ENGINE_BIN = os.path.join(ROOT, "target", "release")
OFFICIAL_DIR = os.path.join(BENCH, "official-rust")
OFFICIAL_BIN = os.path.join(OFFICIAL_DIR, "target", "release")
# One venv for both Python SDKs: our wheel and the official `acp` (pinned in
# interop/python/requirements.txt), plus matplotlib for the chart.
VENV = os.path.join(BENCH, ".venv")
PY = os.path.join(VENV, "bin", "python")
# The Go pair links the C library installed (`make install`) here.
GO_PREFIX = os.path.join(ROOT, "target", "go-prefix")
GO_BIN = os.path.join(ROOT, "target", "go-bin")
# The Kotlin pairs: ours compiled with the Kotlin package (its test classes
# include bench/kotlin), the official SDK's in bench/kotlin-official.
KOTLIN = os.path.join(ROOT, "kotlin", "target")
KOTLIN_OFFICIAL = os.path.join(BENCH, "kotlin-official")


def jvm(classes, classpath_file, main):
    """A JVM command line: the classes, then the dependencies Maven listed."""
    def read(path):
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            return ""
    return ["java", "-cp", ":".join(classes + [read(classpath_file)]), main]

# What the v2 programs measure: v2 has no client file system, so no rpc,
# concurrent or large; a v2 stream is the same N chunks, told in state updates.
V2_SCENARIOS = ("stream", "setup")

IMPLS = {
    "acp-engine (Rust)": {
        "client": [os.path.join(ENGINE_BIN, "engine-client")],
        "agent": [os.path.join(ENGINE_BIN, "engine-agent")],
    },
    # The same programs on the multi-thread runtime `#[tokio::main]` makes
    # (the README's examples); the row above runs tokio's current-thread one.
    "acp-engine (Rust multi-thread runtime)": {
        "client": [os.path.join(ENGINE_BIN, "engine-client"), "--runtime", "multi-thread"],
        "agent": [os.path.join(ENGINE_BIN, "engine-agent"), "--runtime", "multi-thread"],
        "pairs_within": "rust-multi-thread",
    },
    "official Rust SDK": {
        "client": [os.path.join(OFFICIAL_BIN, "official-client")],
        "agent": [os.path.join(OFFICIAL_BIN, "official-agent")],
    },
    "acp-engine (C)": {
        "client": [os.path.join(ENGINE_BIN, "c-bench-client")],
        "agent": [os.path.join(ENGINE_BIN, "c-bench-agent")],
    },
    "acp-engine (Go)": {
        "client": [os.path.join(GO_BIN, "go-bench-client")],
        "agent": [os.path.join(GO_BIN, "go-bench-agent")],
    },
    "acp-engine (Python)": {
        "client": [PY, os.path.join(BENCH, "python", "client.py")],
        "agent": [PY, os.path.join(BENCH, "python", "agent.py")],
    },
    "official Python SDK": {
        "client": [PY, os.path.join(BENCH, "official-python", "client.py")],
        "agent": [PY, os.path.join(BENCH, "official-python", "agent.py")],
    },
    # The official SDK's bench programs above, unmodified, with `acp` being
    # acp_engine.compat (its API on our engine), imported when the program
    # imports `acp`, as the official SDK is (on_engine.py).
    "acp-engine (Python official API)": {
        "client": [PY, os.path.join(BENCH, "official-python", "on_engine.py"), os.path.join(BENCH, "official-python", "client.py")],
        "agent": [PY, os.path.join(BENCH, "official-python", "on_engine.py"), os.path.join(BENCH, "official-python", "agent.py")],
    },
    "acp-engine (Node)": {
        "client": ["node", os.path.join(BENCH, "node", "client.mjs")],
        "agent": ["node", os.path.join(BENCH, "node", "agent.mjs")],
    },
    # The official SDK's own bench programs (its app API), importing our package.
    "acp-engine (Node app API)": {
        "client": ["node", os.path.join(BENCH, "node-app", "client.mjs")],
        "agent": ["node", os.path.join(BENCH, "node-app", "agent.mjs")],
    },
    # The same programs over the engine's own streams (stdioStream(),
    # spawnStream()) instead of ndJsonStream over Node's Web-stream adapters.
    "acp-engine (Node app API engine streams)": {
        "client": ["node", os.path.join(BENCH, "node-app", "stdio-client.mjs")],
        "agent": ["node", os.path.join(BENCH, "node-app", "stdio-agent.mjs")],
        "pairs_within": "node-app-engine-streams",
    },
    "official TypeScript SDK": {
        "client": ["node", os.path.join(BENCH, "official-ts", "client.mjs")],
        "agent": ["node", os.path.join(BENCH, "official-ts", "agent.mjs")],
    },
    # ACP v2 (the draft), paired only with each other: the official SDK's
    # `experimental/v2` app API in programs of ours (bench/README.md's v2
    # contract), and the same programs on our package, with Node's Web-stream
    # adapters and with the engine's own streams. A turn is told in state updates.
    "acp-engine (Node v2)": {
        "client": ["node", os.path.join(BENCH, "node-v2", "client.mjs")],
        "agent": ["node", os.path.join(BENCH, "node-v2", "agent.mjs")],
        "pairs_within": "v2",
        "scenarios": V2_SCENARIOS,
    },
    "acp-engine (Node v2 engine streams)": {
        "client": ["node", os.path.join(BENCH, "node-v2", "stdio-client.mjs")],
        "agent": ["node", os.path.join(BENCH, "node-v2", "stdio-agent.mjs")],
        "pairs_within": "v2-engine-streams",
        "scenarios": V2_SCENARIOS,
    },
    "official TypeScript SDK (v2)": {
        "client": ["node", os.path.join(BENCH, "official-ts-v2", "client.mjs")],
        "agent": ["node", os.path.join(BENCH, "official-ts-v2", "agent.mjs")],
        "pairs_within": "v2",
        "scenarios": V2_SCENARIOS,
    },
    # JVM implementations are paired only with each other: their start-up and
    # rates would multiply the whole matrix's run time.
    "acp-engine (Kotlin)": {
        "client": jvm([os.path.join(KOTLIN, "classes"), os.path.join(KOTLIN, "test-classes")],
                      os.path.join(KOTLIN, "classpath.txt"), "acp_engine.bench.BenchClientKt"),
        "agent": jvm([os.path.join(KOTLIN, "classes"), os.path.join(KOTLIN, "test-classes")],
                     os.path.join(KOTLIN, "classpath.txt"), "acp_engine.bench.BenchAgentKt"),
        "pairs_within": "jvm",
    },
    "official Kotlin SDK": {
        "client": jvm([os.path.join(KOTLIN_OFFICIAL, "target", "classes")],
                      os.path.join(KOTLIN_OFFICIAL, "target", "classpath.txt"), "official.bench.ClientKt"),
        "agent": jvm([os.path.join(KOTLIN_OFFICIAL, "target", "classes")],
                     os.path.join(KOTLIN_OFFICIAL, "target", "classpath.txt"), "official.bench.AgentKt"),
        "pairs_within": "jvm",
    },
    # Not an SDK: two C processes bouncing the scenario's lines over pipes,
    # the least a round trip (or a 16 MiB message) costs here
    # (bench/floor/floor.c); measured in the same run so that the report can
    # give each pair's rpc, perm and large as a fraction of it.
    "pipe floor (C)": {
        "client": [os.path.join(ENGINE_BIN, "floor")],
        "agent": [os.path.join(ENGINE_BIN, "floor"), "--agent"],
        "pairs_within": "floor",
        "scenarios": ("rpc", "perm", "large"),
        "floor": True,
    },
    # Not an SDK: two Node processes moving the scenario's lines through
    # Node's Web-stream adapters (Readable.toWeb, Writable.toWeb), as the
    # official TypeScript SDK's programs do with ndJsonStream, and nothing
    # else (bench/floor/node_web_streams.mjs): the least a pair over the
    # adapters costs here.
    "Node Web-stream floor (toWeb adapters)": {
        "client": ["node", os.path.join(BENCH, "floor", "node_web_streams.mjs")],
        "agent": ["node", os.path.join(BENCH, "floor", "node_web_streams.mjs"), "--agent"],
        "pairs_within": "node-web-stream-floor",
        "scenarios": ("stream", "rpc", "perm"),
        "floor": True,
    },
    # Not an SDK: a Python client and agent with asyncio and pydantic and
    # nothing else, timed through the handshake as the official Python SDK's
    # client is (bench/floor/python_client.py): the least a pydantic-based
    # Python pair's setup costs here.
    "Python setup floor (asyncio + pydantic)": {
        "client": [PY, os.path.join(BENCH, "floor", "python_client.py")],
        "agent": [PY, os.path.join(BENCH, "floor", "python_agent.py")],
        "pairs_within": "python-setup-floor",
        "scenarios": ("setup",),
        "floor": True,
    },
}

# Each language: our implementation and the official SDK it is measured
# against (C and Go have no official SDK: their pairs are compared with the
# Rust one's).
LANGUAGES = [
    ("Rust", "acp-engine (Rust)", "official Rust SDK"),
    ("Rust (multi-thread runtime)", "acp-engine (Rust multi-thread runtime)", "official Rust SDK"),
    ("C", "acp-engine (C)", "official Rust SDK"),
    ("Go", "acp-engine (Go)", "official Rust SDK"),
    ("Python", "acp-engine (Python)", "official Python SDK"),
    ("Python (official API)", "acp-engine (Python official API)", "official Python SDK"),
    ("Node", "acp-engine (Node)", "official TypeScript SDK"),
    ("Node (app API)", "acp-engine (Node app API)", "official TypeScript SDK"),
    ("Node (app API, engine streams)", "acp-engine (Node app API engine streams)", "official TypeScript SDK"),
    ("Node v2 (app API)", "acp-engine (Node v2)", "official TypeScript SDK (v2)"),
    ("Node v2 (app API, engine streams)", "acp-engine (Node v2 engine streams)", "official TypeScript SDK (v2)"),
    ("Kotlin", "acp-engine (Kotlin)", "official Kotlin SDK"),
]


def paired(client, agent):
    """Whether the matrix measures this pair (see `pairs_within`)."""
    return IMPLS[client].get("pairs_within") == IMPLS[agent].get("pairs_within")


def run(cmd, cwd=ROOT):
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, cwd=cwd, check=True, stdout=sys.stderr)


def build():
    run(["cargo", "build", "--release", "-q", "-p", "acp-engine-bench", "-p", "acp-engine-c"])
    run(["cargo", "build", "--release", "-q", "--manifest-path", os.path.join(OFFICIAL_DIR, "Cargo.toml")])
    run(["cc", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "bench/floor/floor.c",
         "-o", os.path.join(ENGINE_BIN, "floor")])
    for program in ("agent", "client"):
        run(["cc", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", "include", f"bench/c/{program}.c",
             "-L", ENGINE_BIN, "-lacp_engine", f"-Wl,-rpath,{ENGINE_BIN}",
             "-o", os.path.join(ENGINE_BIN, f"c-bench-{program}")])
    build_go()
    build_python()
    build_node()
    build_kotlin()


def build_go():
    """The Go pair (bench/go) on the Go package, linked with pkg-config
    against the C library installed into target/go-prefix."""
    run(["make", "-s", "install", f"PREFIX={GO_PREFIX}"])
    env = dict(os.environ, GOTOOLCHAIN="local", GOFLAGS="-mod=mod",
               PKG_CONFIG_PATH=os.path.join(GO_PREFIX, "lib", "pkgconfig"))
    for program in ("agent", "client"):
        print(f"+ go build -o {GO_BIN}/go-bench-{program} ./{program}", file=sys.stderr, flush=True)
        subprocess.run(["go", "build", "-o", os.path.join(GO_BIN, f"go-bench-{program}"), f"./{program}"],
                       cwd=os.path.join(BENCH, "go"), env=env, check=True, stdout=sys.stderr)


def build_python():
    """bench/.venv with our wheel (built by maturin) and the official SDK."""
    if not os.path.exists(PY):
        run([sys.executable, "-m", "venv", VENV])
    run([PY, "-m", "pip", "install", "-q", "--disable-pip-version-check", "maturin==1.16.0",
         "matplotlib==3.10.7", "-r", os.path.join(ROOT, "interop", "python", "requirements.txt")])
    wheels = os.path.join(VENV, "wheels")
    run([os.path.join(VENV, "bin", "maturin"), "build", "--release", "--quiet", "-o", wheels],
        cwd=os.path.join(ROOT, "python"))
    wheel = max((os.path.join(wheels, w) for w in os.listdir(wheels) if w.endswith(".whl")), key=os.path.getmtime)
    run([PY, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--force-reinstall", "--no-deps", wheel])


def build_node():
    """The addon in node/ (the bench imports the package from the tree) and
    the official TypeScript SDK (interop/ts/node_modules)."""
    run(["bash", os.path.join(ROOT, "interop", "setup.sh")])
    node = os.path.join(ROOT, "node")
    if not os.path.isdir(os.path.join(node, "node_modules", "@napi-rs")):
        run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=node)
    run(["npm", "run", "--silent", "build"], cwd=node)


def build_kotlin():
    """Our Kotlin package (native library, uniffi layer, classes and the
    bench programs among its test classes) and the official SDK's programs."""
    run(["bash", os.path.join(ROOT, "kotlin", "build.sh")])
    classpath = ["org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath",
                 "-Dmdep.outputFile=target/classpath.txt"]
    maven = ["mvn", "-q", "-B", "-Dstyle.color=never"]
    run(maven + ["test-compile"] + classpath, cwd=os.path.join(ROOT, "kotlin"))
    run(maven + ["package"] + classpath, cwd=KOTLIN_OFFICIAL)


def versions():
    """What was measured: toolchains and SDK versions."""
    def out(cmd):
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        except OSError:
            return "?"
        text = done.stdout.strip() or done.stderr.strip()  # java -version writes to stderr
        return text.splitlines()[0] if text else ""
    official_ts = "?"
    package = os.path.join(ROOT, "interop", "ts", "node_modules", "@agentclientprotocol", "sdk", "package.json")
    if os.path.exists(package):
        import json
        with open(package) as f:
            official_ts = json.load(f)["version"]
    return {
        "rustc": out(["rustc", "--version"]),
        "python": out([PY, "--version"]),
        "node": out(["node", "--version"]),
        "go": out(["go", "version"]),
        "official Rust SDK": "agent-client-protocol 5.2.0 (crates.io)",
        "official Python SDK": "agent-client-protocol " + out([PY, "-c", "import importlib.metadata as m; print(m.version('agent-client-protocol'))"]) + " (PyPI)",
        "official TypeScript SDK": f"@agentclientprotocol/sdk {official_ts} (npm)",
        "official TypeScript SDK (v2)": f"@agentclientprotocol/sdk {official_ts} (npm), experimental/v2",
        "official Kotlin SDK": "com.agentclientprotocol:acp-jvm 0.10.5 (Maven Central)",
        "java": out(["java", "-version"]) or "?",
    }


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = "?"
    try:
        with open("/proc/meminfo") as f:
            memory = f"{int(f.readline().split()[1]) / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return f"{os.cpu_count()} × {model}, {memory} RAM, Linux"
