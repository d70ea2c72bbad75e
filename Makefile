# Veredicto — run `make run` for the example, `make test` for the checks,
# `make test-long` for every test, the slow ones too.
GO       ?= go
NPM      ?= npm
BIN      := bin/veredicto
NODE     := node_modules/.bin/node
# go test, summarised (cmd/test-summary): one line per package as it
# finishes, failing tests in full, skipped tests named with their reason.
GOTEST   := $(GO) run ./cmd/test-summary

.PHONY: all run test test-long test-go test-node test-cfn node-tools vet bench bench-long bench-compare bench-starts bench-search build-cli clean jsonata-expected moto-crosscheck

all: build-cli

# Lambda build targets (build-<LogicalId>, build, sizes) used by `sam build`.
include build.mk

# Says what it does on stderr: a first build takes minutes
# (scripts/build-cli.sh counts the packages as they compile).
build-cli:
	@bash scripts/build-cli.sh "$(GO)" $(BIN)

# The main job on the built-in example: the executive-search evaluation of
# examples/search-demo (offline baseline unless OPENAI_API_KEY is set).
# Reports land in out/demo-cfo-andina/. Its progress (each candidate's
# stages, «n de 6 evaluados», time so far and what is left) goes to
# stderr, the results to stdout.
run: build-cli
	@echo "make: evaluating examples/search-demo into out/demo-cfo-andina" >&2
	@./$(BIN) search run examples/search-demo --out out/demo-cfo-andina

# The checks every change must pass, in two to three minutes on two cores:
# vet, the Go tests under -short with the race detector (conformance corpus
# included; the DynamoDB adapter tests start dynalite from the npm tools,
# so those are installed first), the stack bound and brief fuzz runs, the
# Node checks (asl-validator on every definition, the corpus cross-checked
# against aws-local-stepfunctions) and the template lint. It prints one
# line per package or check and names every skipped test with its reason;
# -short skips the slow tests, which say so and which make test-long runs.
test: vet node-tools test-go test-node test-cfn

# Every Go test with the race detector, without -short: also the slow ones
# (the CLI built and run as a subprocess, the AWS CLI, the ApiFunction
# bootstrap, every kind's bootstrap built as make sizes does and held under
# 9 MiB, the 200-candidate browser measurement). CI runs make test, then
# this.
test-long: node-tools
	@$(GOTEST) -race -count=1 ./...

# AWS's own linter on the SAM template, informational checks included; any
# finding fails. cfn-lint ships with the machine image and CI; without it
# the check is skipped locally, never in CI. (`--` ends --include-checks,
# which would otherwise take the file name for a check.)
test-cfn:
	@if command -v cfn-lint >/dev/null 2>&1; then cfn-lint --include-checks I -- template.yaml && echo "cfn-lint: template.yaml clean"; \
	elif [ -n "$$CI" ]; then echo "cfn-lint is required in CI"; exit 1; \
	else echo "cfn-lint not found: skipping the template lint"; fi

node-tools:
	@if command -v $(NPM) >/dev/null 2>&1; then $(MAKE) -s --no-print-directory node_modules/.installed; \
	elif [ -n "$$CI" ]; then echo "npm is required in CI"; exit 1; \
	else echo "npm not found: DynamoDB adapter tests will skip"; fi

vet:
	@test -z "$$(gofmt -l *.go cmd internal prompts statemachines functions infra)" || { echo "gofmt needed:"; gofmt -l *.go cmd internal prompts statemachines functions infra; exit 1; }
	@$(GO) vet ./...
	@echo "ok    gofmt, go vet"

# The race detector enlarges every stack frame: the stack bound runs
# without it. The fuzzing budgets are counts of executions, not durations:
# a -fuzztime duration races Go's fuzzing coordinator at its deadline and
# can fail with a bare "context deadline exceeded" and no failing input
# (golang/go#75804) on a loaded machine.
test-go:
	@$(GOTEST) -short -race -count=1 ./...
	@$(GOTEST) -label 'stack bound, no race' -count=1 -run '^TestWaitingTaskStackShrinks$$' ./internal/asl
	@$(GOTEST) -label 'FuzzParse 40000x' -run '^$$' -fuzz '^FuzzParse$$' -fuzztime 40000x ./internal/asl
	@$(GOTEST) -label 'FuzzCanonicalJSON 40000x' -run '^$$' -fuzz '^FuzzCanonicalJSON$$' -fuzztime 40000x ./internal/asl
	@$(GOTEST) -label 'FuzzLazyInputsChangeNothing 20000x' -run '^$$' -fuzz '^FuzzLazyInputsChangeNothing$$' -fuzztime 20000x ./internal/asl
	@$(GOTEST) -label 'FuzzLoad 2000x' -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime 2000x ./internal/search

# npm tools are pinned in package.json / package-lock.json and installed on
# first use. Without npm the Node checks are skipped locally, never in CI.
node_modules/.installed: package.json package-lock.json
	@out=$$($(NPM) ci --no-audit --no-fund --loglevel=error 2>&1) || { echo "$$out"; exit 1; }
	@touch $@
	@echo "ok    npm ci (the pinned tools, into node_modules/)"

test-node:
	@if ! command -v $(NPM) >/dev/null 2>&1; then \
	  if [ -n "$$CI" ]; then echo "npm is required in CI"; exit 1; fi; \
	  echo "npm not found: skipping asl-validator and the aws-local-stepfunctions cross-check"; \
	else \
	  $(MAKE) -s --no-print-directory node_modules/.installed && \
	  bash scripts/validate-asl.sh && \
	  $(NODE) scripts/crosscheck.mjs testdata/conformance && \
	  $(NODE) scripts/jsonata-crosscheck.mjs internal/asl/jsonata/testdata && \
	  $(GO) run ./cmd/bench-compare -rounds 1 -time 20ms -cpu 1 >/dev/null && \
	  echo "bench-compare: both engines give the same outputs on the four workloads"; \
	fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem -cpu 1 ./internal/asl

# The long benchmarks, never part of make test: issue 34's waiting soak
# (BenchmarkWaitingSoak: 100 000 executions left waiting in a Wait state,
# then on task tokens, in a `veredicto serve` subprocess: its memory,
# goroutines and threads, ListExecutions pages, a kill -9 and the restart,
# SendTaskSuccess and StopExecution latencies; several minutes a variant,
# SOAK_N=10000 shortens it) after the 10 000 waiting executions of
# BenchmarkWaitingExecutions. docs/BENCHMARKS.md records their figures.
bench-long:
	$(GO) test -run '^$$' -bench '^BenchmarkWaitingExecutions$$' -benchtime 1x ./internal/control
	$(GO) test -run '^$$' -bench '^BenchmarkWaitingSoak$$' -benchtime 1x -timeout 120m ./cmd/veredicto

# The engine against the npm engine aws-local-stepfunctions on the same four
# workloads (internal/asl/aslbench), interleaved rounds, medians, outputs
# compared. BENCH_COMPARE='-rounds 4 -time 500ms' shortens it (rounds in fours
# keep the order balanced).
bench-compare: node_modules/.installed
	$(GO) run ./cmd/bench-compare $(BENCH_COMPARE)

# StartExecution through serve's signed Step Functions API at AWS's burst
# size, 1 300/s, for 60 s, and the executions of the 5-state Pass chain
# completed (cmd/loadgen; docs/BENCHMARKS.md "Local control plane").
# BENCH_STARTS='-workers 32 -count 5000 -duration 0' changes the run;
# PROFILE=cpu.pprof keeps a CPU profile of the server.
BENCH_STARTS ?= -workers 64 -rate 1300 -duration 60s
bench-starts: build-cli
	@$(GO) build -o bin/loadgen ./cmd/loadgen
	@bash scripts/bench-starts.sh $(BIN) bin/loadgen $(BENCH_STARTS)

# The executive search's CPU per model call and wall time against the ideal
# (issue 34; docs/BENCHMARKS.md "CPU per model call"): 200 candidates in
# process against a scripted model, then "veredicto search run" against the
# scripted OpenAI-compatible server, instant and at 100 ms a call.
# BENCH_CLI_BIN=path measures another build of the CLI; TMPDIR chooses the
# disk the runs write to.
bench-search:
	$(GO) test -run '^$$' -bench 'Search200' -benchtime 3x -cpu 2 ./internal/search/gems
	$(GO) test -run '^$$' -bench '^BenchmarkSearchCLI200$$' -benchtime 5x -cpu 2 ./cmd/veredicto

clean:
	rm -rf bin node_modules

# Records the reference JSONata (jsonata@2.0.6 from npm) outcomes of the
# corpus that go test ./internal/asl/jsonata compares the Go evaluator with.
jsonata-expected: node_modules/.installed
	$(NODE) scripts/jsonata-crosscheck.mjs --write internal/asl/jsonata/testdata

# Informational second opinion on the service-free conformance cases from
# moto's Step Functions interpreter (moto ships with the machine image).
moto-crosscheck:
	python3 scripts/moto-crosscheck.py testdata/conformance
