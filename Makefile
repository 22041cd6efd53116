# agentchat — `make run` starts the local server, `make test` runs every test.
GO          ?= go
export CGO_ENABLED = 0
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Fuzzing is bounded by executions, not by time: with a duration, Go 1.26's
# fuzz coordinator can fail a target with "context deadline exceeded" as the
# time runs out, with no failing input (golang/go#75804, fixed in Go 1.27).
FUZZTIME    ?= 5000x
GOARCH_LAMBDA ?= arm64
# Tests run at once within a package (t.Parallel). Go's default is
# GOMAXPROCS, 2 here, but most of these tests wait on timers, consoles and
# child processes rather than the CPU: internal/tools/consoletools takes
# 22 s at 2 and 3 s at 16 (1.2-1.5 s of CPU either way).
TESTPARALLEL ?= 16

.PHONY: run run-dynamodb test test-fast unit fuzz lint bench bench-e2e build deps clean web web-check browser

## run: start the local server (SQLite in ./.data, 127.0.0.1:8080)
run:
	$(GO) run ./functions/local

## run-dynamodb: the local server with the DynamoDB store linked in (STORE=dynamodb, TABLE_NAME, ...)
run-dynamodb:
	$(GO) run ./functions/local/withdynamo

## deps: install the DynamoDB emulator used by the tests (dynalite, npm)
deps: node_modules/.package-lock.json

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error

## test: every test, the store suite on SQLite and DynamoDB, then brief fuzzing, then the web
##       console (its build checked against web/, then driven in a headless Chromium). In
##       sequence: the browser tests beside a cold build of the Go tests missed their waits.
test: deps unit fuzz browser

unit:
	$(GO) test -count=1 -parallel $(TESTPARALLEL) ./...

## test-fast: the edit loop: the unit tests of every package that starts no emulator, server
##            process or Lambda build (those run in `make test`); Go's test cache skips the
##            packages an edit did not reach
test-fast:
	$(GO) test -parallel $(TESTPARALLEL) $$($(GO) list ./... | grep -v -E '$(SLOW_PACKAGES)')

# Packages whose tests start dynalite, build Lambda bootstraps or run server processes.
SLOW_PACKAGES := /internal/(deploy|localserver|benche2e|lambdaapp|store/dynamo|webui|contextwin)(/|$$)|/internal/httpapi/chat$$

fuzz:
	@./scripts/fuzz.sh $(FUZZTIME)

## web: rebuild the web console from web/ into internal/webui/dist (committed: `make run` and
##      `go run ./functions/local` need no Node.js); run it after changing web/
web: deps
	./node_modules/.bin/tsc -p web/tsconfig.json
	node web/build.mjs

## web-check: type-check web/ and check that internal/webui/dist is exactly its build
web-check: deps
	./node_modules/.bin/tsc -p web/tsconfig.json
	node web/build.mjs --check

## browser: the web console in headless Chromium (Debian's /usr/bin/chromium, or CHROMIUM=path)
##          against the local server and a scripted LLM; screenshots in web/test-results/
browser: deps web-check
	node --test web/test/console.test.mjs

## lint: gofmt, go vet, staticcheck, cfn-lint on template.yaml (SAM transform included)
lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	@command -v cfn-lint >/dev/null || { echo "cfn-lint is required by make lint: pip install cfn-lint"; exit 1; }
	cfn-lint template.yaml

## bench: benchmarks (figures reported in README)
bench: deps
	$(GO) test -p 1 -run='^$$' -bench=. -benchmem ./...

## bench-e2e: agentchat, a bare reverse proxy and a scripted LLM as separate processes, measured
##            from a client process (BENCH_E2E_FLAGS="-n 500 -scenarios v1-stream", BENCH_E2E_PROFILE=cpu.pprof)
bench-e2e:
	@./scripts/bench-e2e.sh $(BENCH_E2E_FLAGS)

## build: Lambda binaries (bootstrap per function) into .aws-build/
build:
	@./scripts/build-lambdas.sh $(GOARCH_LAMBDA)

## build-<LogicalId>: one function's bootstrap into $(ARTIFACTS_DIR), for `sam build` (BuildMethod: makefile)
build-%:
	@./scripts/build-lambdas.sh --function $* --out "$(ARTIFACTS_DIR)" $(GOARCH_LAMBDA)

clean:
	rm -rf .aws-build
