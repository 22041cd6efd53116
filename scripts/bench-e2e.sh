#!/usr/bin/env bash
# bench-e2e: agentchat measured as a client sees it (make bench-e2e).
#
# Builds the local server (./functions/local) and the benchmark
# (./internal/benche2e/cmd/benche2e), then runs `benche2e run`, which starts
# the scripted LLM, a bare httputil.ReverseProxy in front of it and agentchat
# (SQLite, JWT auth) as their own processes on 127.0.0.1, alternates
# requests to the three from its own process and prints the figures and
# agentchat's ratios to the proxy. Every process stops with the run, also
# on Ctrl-C or failure. Arguments go to `benche2e run` (e.g. -n 500,
# -scenarios v1-stream, -json out.json, -store dynalite; -h lists them).
#
# BENCH_E2E_PROFILE=cpu.pprof builds the profiling server
# (./internal/benche2e/cmd/profserver) instead, which writes agentchat's CPU
# profile of the whole run there (go tool pprof -top cpu.pprof), and the
# proxy's beside it as cpu.pprof.proxy: what agentchat spends over the proxy
# is go tool pprof -top -diff_base cpu.pprof.proxy cpu.pprof
set -euo pipefail
cd "$(dirname "$0")/.."

export CGO_ENABLED=0
GO=${GO:-go}
bin=$(mktemp -d "${TMPDIR:-/tmp}/bench-e2e-bin.XXXXXX")
trap 'rm -rf "$bin"' EXIT

"$GO" build -o "$bin/benche2e" ./internal/benche2e/cmd/benche2e
args=()
if [[ -n "${BENCH_E2E_PROFILE:-}" ]]; then
	"$GO" build -o "$bin/agentchat" ./internal/benche2e/cmd/profserver
	args+=(-cpuprofile "$BENCH_E2E_PROFILE")
elif [[ " $* " == *" dynalite "* ]]; then
	# -store dynalite: the local server built with the DynamoDB store.
	"$GO" build -o "$bin/agentchat" ./functions/local/withdynamo
else
	"$GO" build -o "$bin/agentchat" ./functions/local
fi
# The run's work directory (SQLite file, logs) goes under $bin too, so that
# it goes with the trap even when the run itself is killed.
mkdir "$bin/tmp"
TMPDIR="$bin/tmp" "$bin/benche2e" run -server "$bin/agentchat" "${args[@]}" "$@"
