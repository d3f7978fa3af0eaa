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
# ROUNDS=N (default 1) runs the whole table N times, one round after the
# other, prints each round's table, and then a summary: each row's median
# requests/s and p99 over the rounds, and each row's share of OPA's
# requests/s as the median of the rounds' own shares (each round's rows
# are seconds apart; rounds are minutes apart, on a machine whose speed
# drifts), with each target's verdict at the median. This is the
# service's counterpart of `go run ./cmd/compare -count 5` in bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-3000}"
rounds="${ROUNDS:-1}"
case "$rounds" in '' | *[!0-9]*) rounds=0 ;; *) rounds=$((10#$rounds)) ;; esac
if [ "$rounds" -lt 1 ]; then echo "servebench: ROUNDS=${ROUNDS:-}: want a whole number of at least 1" >&2; exit 2; fi

# one_round prints one round's table rows (server, clients, requests/s,
# p50, p99), and fails when the benchmark failed.
one_round() {
  go test -timeout 20m ./e2e -run '^$' -bench 'ServeLoad' -benchtime "${n}x" -count 1 |
    awk '/^BenchmarkServeLoad/ {
      split($1, p, "/"); sub(/-[0-9]+$/, "", p[3]); sub(/clients=/, "", p[3])
      for (i = 1; i <= NF; i++) { if ($i == "req/s") r = $(i-1); if ($i == "p50-ms") a = $(i-1); if ($i == "p99-ms") b = $(i-1) }
      printf "| %s | %s | %s | %s | %s |\n", p[2], p[3], r, a, b }
      /^(FAIL|--- FAIL)/ { print; bad = 1 } END { exit bad }'
}

header() {
  echo "| server | clients | requests/s | p50 ms | p99 ms |"
  echo "| --- | ---: | ---: | ---: | ---: |"
}

if [ "$rounds" = 1 ]; then
  header
  one_round
  exit
fi

all=$(mktemp)
trap 'rm -f "$all"' EXIT
for k in $(seq 1 "$rounds"); do
  echo "round $k of $rounds"
  header
  table=$(one_round) || { echo "$table"; exit 1; }
  echo "$table"
  echo "$table" | sed "s/^/$k /" >> "$all"
  echo
done

# The summary: medians over the rounds. A row's share of OPA's requests/s
# is taken in each round (over OPA's row of the same round and clients;
# the floors' too, for scale) and its median reported; warden's median
# p99 is held against OPA's.
echo "summary of $rounds rounds (medians)"
echo "| server | clients | requests/s | p99 ms | share of OPA's requests/s | each round's share |"
echo "| --- | ---: | ---: | ---: | ---: | --- |"
awk -F'|' '
  function median(list,    a, m, i, j, t) {
    m = split(list, a, " ")
    for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  function over(v, s, c,    k, l) {
    l = ""
    for (k = 1; k <= last; k++) if ((k, s, c) in v) l = l " " v[k, s, c]
    return l
  }
  {
    split($1, f, " "); k = f[1] + 0
    s = $2; c = $3; gsub(/ /, "", s); gsub(/ /, "", c)
    rate[k, s, c] = $4 + 0; p99[k, s, c] = $6 + 0
    if (!((s, c) in seen)) { seen[s, c] = 1; order[++rows] = s SUBSEP c }
    if (k > last) last = k
  }
  END {
    for (i = 1; i <= rows; i++) {
      split(order[i], sc, SUBSEP); s = sc[1]; c = sc[2]
      sl = ""; shown = ""
      if (s != "opa")
        for (k = 1; k <= last; k++)
          if ((k, s, c) in rate && (k, "opa", c) in rate && rate[k, "opa", c] > 0) {
            sh = rate[k, s, c] / rate[k, "opa", c]
            sl = sl " " sh; shown = shown (shown == "" ? "" : ", ") sprintf("%.2fx", sh)
          }
      mp = median(over(p99, s, c)); m = sl == "" ? 0 : median(sl)
      printf "| %s | %s | %.0f | %.2f | %s | %s |\n", s, c, median(over(rate, s, c)), mp, sl == "" ? "" : sprintf("%.2fx", m), shown
      if (sl != "" && c != 1 && s !~ /^floor/) {
        pg = s == "warden-postgres"; want = pg ? 0.7 : 1.0
        op = median(over(p99, "opa", c))
        line = sprintf("%s at %s clients: %.2fx OPA'"'"'s requests/s (target %.1fx)", s, c, m, want)
        if (!pg) line = line sprintf(", p99 %.2f ms against OPA'"'"'s %.2f (target: no higher)", mp, op)
        verdict[++nv] = line ": " ((m >= want && (pg || mp <= op)) ? "met" : "NOT MET")
      }
    }
    print ""
    if (nv == 0) print "no OPA rows in the rounds, so no shares and no verdicts (go install github.com/open-policy-agent/opa@v1.22.2, or set OPA_BIN)"
    for (i = 1; i <= nv; i++) print verdict[i]
  }
' "$all"
