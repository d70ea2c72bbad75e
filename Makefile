# Veredicto — run `make run` for the example, `make test` for the checks.
GO       ?= go
NPM      ?= npm
BIN      := bin/veredicto
NODE     := node_modules/.bin/node

.PHONY: all run test test-go test-node test-cfn node-tools vet bench bench-compare build-cli clean jsonata-expected moto-crosscheck

all: build-cli

# Lambda build targets (build-<LogicalId>, build, sizes) used by `sam build`.
include build.mk

build-cli:
	$(GO) build -o $(BIN) ./cmd/veredicto

# The main job on the built-in example: the executive-search evaluation of
# examples/search-demo (offline baseline unless OPENAI_API_KEY is set).
# Reports land in out/demo-cfo-andina/.
run: build-cli
	./$(BIN) search run examples/search-demo --out out/demo-cfo-andina

# Every check CI runs: vet, the Go tests with the race detector (conformance
# corpus included; the DynamoDB adapter tests start dynalite from the npm
# tools, so those are installed first), and the Node checks (asl-validator
# on every definition, the corpus cross-checked against
# aws-local-stepfunctions).
test: vet node-tools test-go test-node test-cfn

# AWS's own linter on the SAM template, informational checks included; any
# finding fails. cfn-lint ships with the machine image and CI; without it
# the check is skipped locally, never in CI. (`--` ends --include-checks,
# which would otherwise take the file name for a check.)
test-cfn:
	@if command -v cfn-lint >/dev/null 2>&1; then cfn-lint --include-checks I -- template.yaml; \
	elif [ -n "$$CI" ]; then echo "cfn-lint is required in CI"; exit 1; \
	else echo "cfn-lint not found: skipping the template lint"; fi

node-tools:
	@if command -v $(NPM) >/dev/null 2>&1; then $(MAKE) --no-print-directory node_modules/.installed; \
	elif [ -n "$$CI" ]; then echo "npm is required in CI"; exit 1; \
	else echo "npm not found: DynamoDB adapter tests will skip"; fi

vet:
	@test -z "$$(gofmt -l *.go cmd internal prompts statemachines functions infra)" || { echo "gofmt needed:"; gofmt -l *.go cmd internal prompts statemachines functions infra; exit 1; }
	$(GO) vet ./...

# The fuzzing budgets are counts of executions, not durations: a -fuzztime
# duration races Go's fuzzing coordinator at its deadline and can fail with a
# bare "context deadline exceeded" and no failing input (golang/go#75804) on
# a loaded machine.
test-go:
	$(GO) test -race -count=1 ./...
	# The race detector enlarges every stack frame: the stack bound runs without it.
	$(GO) test -count=1 -run '^TestWaitingTaskStackShrinks$$' ./internal/asl
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime 40000x ./internal/asl
	$(GO) test -run '^$$' -fuzz '^FuzzCanonicalJSON$$' -fuzztime 40000x ./internal/asl
	$(GO) test -run '^$$' -fuzz '^FuzzLazyInputsChangeNothing$$' -fuzztime 20000x ./internal/asl
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime 2000x ./internal/search

# npm tools are pinned in package.json / package-lock.json and installed on
# first use. Without npm the Node checks are skipped locally, never in CI.
node_modules/.installed: package.json package-lock.json
	$(NPM) ci --no-audit --no-fund --loglevel=error
	@touch $@

test-node:
	@if ! command -v $(NPM) >/dev/null 2>&1; then \
	  if [ -n "$$CI" ]; then echo "npm is required in CI"; exit 1; fi; \
	  echo "npm not found: skipping asl-validator and the aws-local-stepfunctions cross-check"; \
	else \
	  $(MAKE) --no-print-directory node_modules/.installed && \
	  bash scripts/validate-asl.sh && \
	  $(NODE) scripts/crosscheck.mjs testdata/conformance && \
	  $(NODE) scripts/jsonata-crosscheck.mjs internal/asl/jsonata/testdata && \
	  $(GO) run ./cmd/bench-compare -rounds 1 -time 20ms -cpu 1 >/dev/null; \
	fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem -cpu 1 ./internal/asl

# The engine against the npm engine aws-local-stepfunctions on the same four
# workloads (internal/asl/aslbench), interleaved rounds, medians, outputs
# compared. BENCH_COMPARE='-rounds 4 -time 500ms' shortens it (rounds in fours
# keep the order balanced).
bench-compare: node_modules/.installed
	$(GO) run ./cmd/bench-compare $(BENCH_COMPARE)

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
