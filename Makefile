# acp-engine: the two first commands are `make demo` and `make test`.
CARGO ?= cargo
EXAMPLES := target/debug/examples

.PHONY: demo test test-rust test-interop codegen codegen-check lint fmt bench bench-quick clean

## demo: the example client spawns the example agent: a prompt turn with a
## permission request, file read/write and a real terminal, then a cancelled turn
demo:
	$(CARGO) build -q -p acp-engine --examples
	$(EXAMPLES)/client $(EXAMPLES)/agent

## test: every test: generated code in sync, Rust unit/wire/process tests,
## interop with the official TypeScript and Python SDKs, benchmark smoke run
test: codegen-check test-rust test-interop bench-quick

test-rust:
	$(CARGO) test --workspace --all-targets
	$(CARGO) test -p acp-engine --features unstable --all-targets
	$(CARGO) test --workspace --doc

## test-interop: our example agent/client against the official SDKs' (installed here)
test-interop:
	$(CARGO) build -q -p acp-engine --examples
	OURS_CLIENT=$(CURDIR)/$(EXAMPLES)/client OURS_AGENT=$(CURDIR)/$(EXAMPLES)/agent bash interop/run.sh

## codegen: regenerate the schema types from schema/v1
codegen:
	python3 tools/codegen/gen_rust.py

codegen-check:
	python3 tools/codegen/gen_rust.py --check

## lint: formatting and clippy, warnings are errors
lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p acp-engine --all-targets --features unstable -- -D warnings

fmt:
	$(CARGO) fmt --all

## bench: acp-engine against the official Rust SDK, same machine, same run
bench:
	python3 bench/run.py

## bench-quick: every pair once with a small N (a smoke test, no figures asserted)
bench-quick:
	python3 bench/run.py --quick

clean:
	$(CARGO) clean
	rm -rf bench/official-rust/target
