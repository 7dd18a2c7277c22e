# acp-engine: the two first commands are `make demo` and `make test`.
CARGO ?= cargo
EXAMPLES := target/debug/examples

.PHONY: demo test lint fmt bench bench-quick clean

## demo: a Rust client spawns a Rust agent and prints every message that flows
demo:
	$(CARGO) build -q -p acp-engine --examples
	cd core && ../$(EXAMPLES)/json_client ../$(EXAMPLES)/json_agent

## test: every test (unit, wire-level, real child processes) plus the benchmark smoke run
test:
	$(CARGO) test --workspace --all-targets
	$(CARGO) test --workspace --doc
	$(MAKE) bench-quick


## lint: formatting and clippy, warnings are errors
lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

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
