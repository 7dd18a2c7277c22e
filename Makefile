# acp-engine: the two first commands are `make demo` and `make test`.
CARGO ?= cargo
EXAMPLES := target/debug/examples

.PHONY: help demo build check test test-setup test-real test-remote test-balancer test-trace test-check test-view test-readme update-schema schema-check schema-check-all fuzz test-python test-node test-go test-kotlin test-reliability test-rust test-interop test-c test-install cbindgen header header-check abi-check abi-baseline install codegen codegen-check lint fmt bench bench-quick clean
PREFIX ?= /usr/local
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
CBINDGEN ?= cbindgen
CBINDGEN_VERSION := 0.29.4
# The N of the C library's soname, libacp_engine.so.N (bindings/c/src/version.rs).
ABI_VERSION := $(shell sed -n 's/^\#define ACP_ENGINE_ABI_VERSION \([0-9]*\)$$/\1/p' include/acp_engine.h)

## help: every target, with what it does
help:
	@awk '/^## [a-z-]+:/ { sub(/^## /, ""); split($$0, p, ":"); printf "\n  %-17s%s", p[1], substr($$0, length(p[1]) + 3); next } \
	     /^## / { sub(/^## /, ""); printf " %s", $$0 } END { print "" }' $(MAKEFILE_LIST)

## demo: the example client spawns the example agent: a prompt turn with a
## permission request, file read/write and a real terminal, then a cancelled turn
demo:
	$(CARGO) build -q -p acp-engine --examples
	$(EXAMPLES)/client $(EXAMPLES)/agent

## test: every test: schema and generated code in sync, the C ABI compatible with the
## baseline, Rust, C, Python, Node, Go and Kotlin suites, the malformed-input corpus,
## interop with the official SDKs, the README programs, benchmark smoke run; the suites
## run two at a time, each once what it drives is built (tools/test/pool.py), each
## suite's output in target/test-logs/
test: schema-check codegen-check header-check
	@rm -rf target/test-logs
	@python3 tools/test/pool.py

## test-setup: the official SDKs the suites drive as peers (interop/setup.sh; npm ci, a venv)
test-setup:
	bash interop/setup.sh >/dev/null

## build: every crate of the workspace with its examples and binaries, debug: the one
## build the suites share (the same packages each time, so cargo resolves one feature
## set and `cargo test --workspace` reuses what it compiled)
build:
	$(CARGO) build -q --workspace --lib --bins --examples

## test-rust: the engine's unit, wire-level and process tests; with unstable, the unit
## tests and the schema suites (the targets the feature changes)
test-rust: build
	$(CARGO) test --workspace --all-targets
	$(CARGO) test -p acp-engine --features unstable --lib --test typed --test schema_types
	$(CARGO) test --workspace --doc

## test-python: the acp_engine wheel built with maturin, installed into a fresh
## venv and tested there (pytest, mypy --strict on the examples, interop rows)
test-python: build
	bash python/test.sh

## test-node: the acp-engine npm package built (node/build-native.mjs, tsc), packed with
## npm pack, installed into an empty directory and tested there (node:test,
## tsc --strict on the examples, interop rows)
test-node: build
	bash node/test.sh

## test-go: the Go package (go/) on the C library installed with `make install`
## into target/go-prefix: gofmt, go vet, go test -race, interop rows
test-go: build
	bash go/test.sh

## test-kotlin: the Kotlin package (kotlin/, Maven) on the uniffi binding (bindings/uniffi):
## the native library and the uniffi Kotlin layer built first, then JUnit over real processes
test-kotlin: build
	bash kotlin/test.sh

## test-reliability: the malformed-input corpus (reliability/corpus) against
## every language's example agent and client over real pipes
test-reliability: build
	bash reliability/run.sh

## test-readme: every program in a README, built outside the tree from the installed
## packages and run against the official TypeScript SDK (tools/readme; needs the
## wheel and npm tarball that test-python and test-node leave in target/)
test-readme:
	bash interop/setup.sh >/dev/null
	python3 tools/readme/run.py

## test-interop: our example agent/client against the official SDKs' (installed here); proxy
## chains: our conductor with our and the official TypeScript SDK's proxies, the official Rust
## conductor (built in bench/official-rust) with ours; MCP-over-ACP with the official MCP SDK's server;
## ACP v2: the official Rust SDK's v2 client against our dual-version agents
test-interop: build
	OURS_CLIENT=$(CURDIR)/$(EXAMPLES)/client OURS_AGENT=$(CURDIR)/$(EXAMPLES)/agent bash interop/run.sh
	bash interop/conductor.sh
	bash interop/mcp.sh
	bash interop/v2.sh

## test-remote: remote agents over WebSocket on loopback: `acp-engine serve` / `connect`
## with the official SDKs' clients and agents, the token check, malformed frames, a vanished client
test-remote: build
	bash interop/setup.sh >/dev/null
	bash interop/remote.sh

## test-balancer: three `acp-engine serve` backends behind HAProxy (deploy/haproxy.cfg, Debian's
## haproxy): 1,000 sessions spread by cookie affinity, observers attached through it, a backend
## killed with SIGKILL (its sessions loaded on the others), a rolling restart with drain; needs
## make test-python's venv
test-balancer: build
	@[ -x target/python-venv/bin/python ] || { echo "test-balancer: no target/python-venv: run make test-python first"; exit 1; }
	bash interop/setup.sh >/dev/null
	target/python-venv/bin/python interop/balancer.py

## test-trace: `acp-engine trace` between the official SDKs' peers and ours: sessions
## complete through the proxy and every message is judged ok
test-trace: build
	bash interop/setup.sh >/dev/null
	bash interop/trace.sh

## test-check: `acp-engine check agent` / `check client` pass against our agents and clients in
## every language and the official TypeScript SDK's (the official Python SDK's printed for the record)
test-check: build
	bash interop/setup.sh >/dev/null
	bash interop/check.sh

## test-real: real ACP programs from npm, pinned (interop/real/package.json): acpx drives
## every language's example agent (stdio, and through connect / serve); claude-agent-acp,
## codex-acp and gemini-cli, on a fake model server on loopback, under run, check agent,
## trace and serve; acp-agent-framework (PyPI) unedited on acp_engine.compat
test-real: build
	bash interop/real/setup.sh >/dev/null
	python3 interop/real/run.py

## test-view: `acp-engine view` pages in a real browser (Debian's chromium, driven by
## playwright-core): a traced session and a 100,000-message trace; screenshots in target/view-test/
test-view: build
	cd cli/tests/view && npm ci --no-audit --no-fund --loglevel=error
	node cli/tests/view/view.test.mjs

## test-c: the C ABI: C tests (gcc -Wall -Wextra -Werror), valgrind, ASan, ctypes, C examples
test-c: build
	bash bindings/c/tests/run.sh
	$(MAKE) -s test-install

## test-install: `make install` into a scratch prefix, then build the C examples
## the way a user would, with pkg-config only (no LD_LIBRARY_PATH), and run the
## client against the agent (which must need libacp_engine.so.N, the installed file,
## with libacp_engine.so a link to it); a relative PREFIX must be refused
test-install:
	@prefix=$$(mktemp -d) && $(MAKE) -s install PREFIX=$$prefix \
	  && export PKG_CONFIG_PATH=$$prefix/lib/pkgconfig \
	  && cc -o $$prefix/agent bindings/c/examples/agent.c $$(pkg-config --cflags --libs acp_engine) \
	  && cc -o $$prefix/client bindings/c/examples/client.c $$(pkg-config --cflags --libs acp_engine) \
	  && [ -f $$prefix/lib/libacp_engine.so.$(ABI_VERSION) ] && [ ! -L $$prefix/lib/libacp_engine.so.$(ABI_VERSION) ] \
	  && [ "$$(readlink $$prefix/lib/libacp_engine.so)" = libacp_engine.so.$(ABI_VERSION) ] \
	  && readelf -d $$prefix/client | grep -q 'NEEDED.*\[libacp_engine\.so\.$(ABI_VERSION)\]' \
	  && env -u LD_LIBRARY_PATH $$prefix/client $$prefix/agent | tail -1 | grep -qx 'interop ok' \
	  && ! $(MAKE) -s install PREFIX=relative/prefix 2>/dev/null && [ ! -e relative ] \
	  && echo "make install + pkg-config build: 3 passed, 0 failed" && rm -rf $$prefix

## cbindgen: install the pinned cbindgen from crates.io if it is not on PATH
cbindgen:
	@[ "$$($(CBINDGEN) --version 2>/dev/null)" = "cbindgen $(CBINDGEN_VERSION)" ] \
	  || $(CARGO) install --locked --quiet cbindgen --version =$(CBINDGEN_VERSION)

## header: regenerate include/acp_engine.h with the pinned cbindgen
header: cbindgen
	$(CBINDGEN) --quiet --config bindings/c/cbindgen.toml --crate acp-engine-ffi --output include/acp_engine.h bindings/c

header-check: cbindgen
	@tmp=$$(mktemp) && $(CBINDGEN) --quiet --config bindings/c/cbindgen.toml --crate acp-engine-ffi --output $$tmp bindings/c \
	  && if cmp -s $$tmp include/acp_engine.h; then echo "include/acp_engine.h is up to date"; rm -f $$tmp; \
	  else diff -u include/acp_engine.h $$tmp | head -40; rm -f $$tmp; echo "include/acp_engine.h is stale: run make header"; exit 1; fi

## abi-check: the release C library against the recorded ABI of its soname
## (bindings/c/abi/libacp_engine.so.N.abi) with abidiff (Debian: abigail-tools): a removed
## function or a changed type fails; added functions and fields appended to acp_options
## and acp_handlers pass (see bindings/c/README.md)
abi-check:
	CARGO="$(CARGO)" bash bindings/c/abi/check.sh

## abi-baseline: record the release C library's ABI as the baseline of its soname (after
## raising ACP_ENGINE_ABI_VERSION for a breaking change, or at a release)
abi-baseline:
	CARGO="$(CARGO)" bash bindings/c/abi/check.sh --baseline

## install: the C library (shared, as libacp_engine.so.N with libacp_engine.so a link
## to it, and static), its headers and acp_engine.pc under PREFIX
install:
	@case "$(PREFIX)" in /*) ;; *) echo "make install: PREFIX must be an absolute path, not '$(PREFIX)' (acp_engine.pc records it)" >&2; exit 2;; esac
	@[ -n "$(ABI_VERSION)" ] || { echo "make install: no ACP_ENGINE_ABI_VERSION in include/acp_engine.h" >&2; exit 2; }
	$(CARGO) build --release -q -p acp-engine-c
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include
	install -m 0755 target/release/libacp_engine.so $(DESTDIR)$(PREFIX)/lib/libacp_engine.so.$(ABI_VERSION)
	ln -sf libacp_engine.so.$(ABI_VERSION) $(DESTDIR)$(PREFIX)/lib/libacp_engine.so
	install -m 0644 target/release/libacp_engine.a $(DESTDIR)$(PREFIX)/lib/
	install -m 0644 include/acp_engine.h include/acp_methods.h include/acp_errors.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' bindings/c/acp_engine.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/acp_engine.pc

## update-schema: take the v1 and v2 JSON from the official npm package at its pinned version
## (schema/upstream/npm/v1, schema/v2), derive v1 from the pinned Rust crate (tools/schema-derive,
## a cargo build; schema/upstream/crate/v1) and merge the two, the newer of each definition,
## into schema/v1 (what codegen reads); then run make codegen
update-schema:
	bash tools/codegen/update_schema.sh

## schema-check: schema/ is exactly what the pinned npm package and the committed crate
## derivation (schema/upstream/crate) give (update-schema is a no-op); no cargo build
schema-check:
	@out=$$(mktemp -d) && ACP_SCHEMA_OUT=$$out ACP_SCHEMA_DERIVE=0 bash tools/codegen/update_schema.sh >/dev/null \
	  && diff -r $$out/schema schema && echo "schema/ matches the pinned package" && rm -rf $$out

## schema-check-all: schema-check, with the crate's schema derived again (builds
## tools/schema-derive, stable and unstable, in its own target dirs)
schema-check-all:
	@out=$$(mktemp -d) && ACP_SCHEMA_OUT=$$out bash tools/codegen/update_schema.sh >/dev/null \
	  && diff -r $$out/schema schema && echo "schema/ matches the pinned package and crate" && rm -rf $$out

## codegen: regenerate every language's types and method tables from schema/v1, and
## the engine's error and event tables from core/tables.json
codegen:
	python3 tools/codegen/gen_rust.py
	python3 tools/codegen/gen_python.py
	python3 tools/codegen/gen_py_models.py
	python3 tools/codegen/gen_py_compat.py
	python3 tools/codegen/gen_ts.py
	python3 tools/codegen/gen_c.py
	python3 tools/codegen/gen_go.py
	python3 tools/codegen/gen_kotlin.py
	python3 tools/codegen/gen_tables.py

## codegen-check: fail when a generated file drifts from schema/v1 or the generators,
## when a wire method name or an error code is typed by hand outside them, a core rule is
## written again in a binding, or two release consumers would compile the engine differently
codegen-check:
	python3 tools/codegen/gen_rust.py --check
	python3 tools/codegen/gen_python.py --check
	python3 tools/codegen/gen_py_models.py --check
	python3 tools/codegen/gen_py_compat.py --check
	python3 tools/codegen/gen_ts.py --check
	python3 tools/codegen/gen_c.py --check
	python3 tools/codegen/gen_go.py --check
	python3 tools/codegen/gen_kotlin.py --check
	python3 tools/codegen/gen_tables.py --check
	python3 tools/house/wire_names.py
	python3 tools/house/error_codes.py
	python3 tools/house/rules_in_core.py
	python3 tools/house/generated_marked.py
	python3 tools/house/one_release_build.py

FUZZ_SECONDS ?= 300
## fuzz: every cargo-fuzz target (fuzz/: framing, dispatch, classify, schema_check, sse, json_writer, host) for
## FUZZ_SECONDS each, with AddressSanitizer; a crash fails (see fuzz/README.md)
fuzz:
	bash fuzz/run.sh $(FUZZ_SECONDS)

## lint: formatting, clippy and the core crate's docs, warnings are errors (the fuzz crate, outside
## the workspace, included: it must keep compiling against the core)
lint:
	$(CARGO) fmt --all --check
	$(CARGO) fmt --manifest-path fuzz/Cargo.toml --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p acp-engine --all-targets --features unstable -- -D warnings
	$(CARGO) clippy --manifest-path fuzz/Cargo.toml --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -q -p acp-engine --no-deps

fmt:
	$(CARGO) fmt --all

## check: the inner loop, a few minutes after `make build`: format and lint (make lint),
## gofmt, generated code and the header in sync, the house checks, the Rust unit tests
check: lint codegen-check header-check
	@[ -z "$$(gofmt -l go bench/go)" ] || { gofmt -l go bench/go; echo "gofmt: the files above need formatting"; exit 1; }
	$(CARGO) test -q --workspace --lib --bins

## bench: every SDK's client against every SDK's agent (ours and the official ones), six
## scenarios, three runs (five in rpc and perm); then what `acp-engine trace` costs and the remote transports
## (WebSocket, Streamable HTTP) against the official TypeScript SDK's, and resumes; rewrites docs/benchmarks/
bench:
	python3 bench/run.py
	python3 bench/trace_overhead.py
	python3 bench/remote.py --no-build
	python3 bench/resume.py

## bench-quick: every pair once with a small N (a smoke test, no figures asserted)
bench-quick:
	python3 bench/run.py --quick
	python3 bench/trace_overhead.py --quick
	python3 bench/remote.py --quick --no-build
	python3 bench/resume.py --quick

clean:
	$(CARGO) clean
	rm -rf bench/official-rust/target
