#!/usr/bin/env bash
# hookbench.sh: wall time of one `warden hook claude` PreToolUse call, as a
# host makes it (process start, policy load, decide, SQLite store write,
# exit). Prints the median and 90th percentile per call in ms, for an allow
# and a deny with the store, and a deny with --stateless (no store).
# With an opa binary ($OPA_BIN or on PATH) it also runs the same call through
# `opa eval` on the equivalent Rego policy (e2e/testdata/hookbench.rego).
# Usage: bash e2e/hookbench.sh [calls]   (default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-200}"
go test ./e2e -run '^$' -bench 'HookClaude|OPAEval' -benchtime "${n}x" -count 1 |
  awk '/^Benchmark/ { for (i = 1; i <= NF; i++) if ($i ~ /-ms$/) printf "%s ", $(i-1) " " $i; print "  " $1 } /^(ok|FAIL)/'
