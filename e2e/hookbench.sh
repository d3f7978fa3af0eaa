#!/usr/bin/env bash
# hookbench.sh: wall time of one Claude Code PreToolUse hook call, as the
# host makes it: a new process per event that decides with the session's
# state, writes the audit record to the SQLite store and answers. Prints the
# median and 90th percentile per call in ms for `warden-hook claude` with
# its hookd running (what `warden init` wires), and for `warden hook claude`
# (a full warden process per call; also --stateless, no store).
# With an opa binary ($OPA_BIN or on PATH) it also runs the same call through
# `opa eval` on the equivalent Rego policy (e2e/testdata/hookbench.rego).
# Usage: bash e2e/hookbench.sh [calls]   (default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-200}"
go test -timeout 20m ./e2e -run '^$' -bench 'HookFloor|HookClaude|OPAEval' -benchtime "${n}x" -count 1 |
  awk '/^Benchmark/ { for (i = 1; i <= NF; i++) if ($i ~ /-ms$/) printf "%s ", $(i-1) " " $i; print "  " $1 } /^(ok|FAIL)/'
