#!/usr/bin/env bash
# Runs every fuzz target of the module briefly (go test allows one target per run).
# The bound is a -fuzztime: an execution count (5000x) by default, not a duration,
# which Go 1.26 can fail at its end with no failing input (golang/go#75804).
set -euo pipefail
fuzztime="${1:-5000x}"
# One go list for every package (import path and directory), not one per package.
go list -f '{{.ImportPath}} {{.Dir}}' ./... | while read -r pkg dir; do
  targets=$(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)\(' "$dir"/*_test.go 2>/dev/null | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/' || true)
  for t in $targets; do
    echo "fuzz $pkg $t ($fuzztime)"
    go test -run='^$' -fuzz="^${t}\$" -fuzztime="$fuzztime" "$pkg" </dev/null
  done
done
