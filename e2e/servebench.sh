#!/usr/bin/env bash
# servebench.sh: load test of `warden serve` beside `opa run --server` on the
# equivalent policy (e2e/testdata/hookbench.rego), over loopback, at 1, 16 and
# 64 concurrent clients: requests/s, p50 and p99 per configuration. warden
# writes each call's audit record (SQLite, and PostgreSQL on 127.0.0.1:5432
# database test) before it answers. The floor row is a server that reads
# each body and answers a fixed decision: the ceiling of any server on this
# machine with this client. The floor-file row is that server appending
# each body to a file and syncing it, in groups: the ceiling of any server
# that makes each call durable before its answer, by whatever means. The
# floor-sqlite row is that server writing each
# body as a row of a SQLite table, durably, in groups (the driver and sync
# warden uses; no index, no session): the ceiling of a server that records
# each call in SQLite. The floor-store rows are that server recording each
# call in warden's own store (session, audit record, history; SQLite, and
# PostgreSQL as warden-postgres) with no token check and no decision:
# warden serve's ceiling with its store.
# OPA comes from $OPA_BIN or PATH
# (`go install github.com/open-policy-agent/opa@v1.22.2`); without it its rows
# are skipped.
# Usage: bash e2e/servebench.sh [requests per configuration]   (default 3000)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-3000}"
echo "| server | clients | requests/s | p50 ms | p99 ms |"
echo "| --- | ---: | ---: | ---: | ---: |"
go test -timeout 20m ./e2e -run '^$' -bench 'ServeLoad' -benchtime "${n}x" -count 1 |
  awk '/^BenchmarkServeLoad/ {
    split($1, p, "/"); sub(/-[0-9]+$/, "", p[3]); sub(/clients=/, "", p[3])
    for (i = 1; i <= NF; i++) { if ($i == "req/s") r = $(i-1); if ($i == "p50-ms") a = $(i-1); if ($i == "p99-ms") b = $(i-1) }
    printf "| %s | %s | %s | %s | %s |\n", p[2], p[3], r, a, b }
    /^(FAIL|--- FAIL)/ { print; bad = 1 } END { exit bad }'
