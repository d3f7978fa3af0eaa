#!/usr/bin/env bash
# loadbench.sh: many agents' hooks at once on one project. 1, 10, 50 and 200
# concurrent `warden-hook claude` clients (a new process per call, as the
# host makes it) share one hookd; each level makes [calls] calls in all
# (at least 4 per client). Prints per level: calls/s, p50 and p99 wall time
# per call in ms, calls that timed out, and audit records against calls
# made (they must be equal). WARDEN_LOAD_LEVELS=1,10 picks other levels;
# WARDEN_HOOKD=off runs `warden hook` for every call instead of hookd.
# Usage: bash e2e/loadbench.sh [calls]   (default 800)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-800}"
go test ./e2e -run '^$' -bench 'HookLoad' -benchtime "${n}x" -count 1 -timeout 30m |
  awk '/^Benchmark/ { line = $1; for (i = 3; i <= NF; i += 2) if ($(i+1) != "ns/op") line = line "  " $i " " $(i+1); print line } /^(ok|FAIL)/ || /audit records|no answer/'
