#!/usr/bin/env bash
# test.sh: warden's whole test run, as the README and CI run it.
#   ./test.sh          vet, format, unit and end-to-end tests, race tests,
#                      short fuzz runs, and the bench module's correctness tests
# End-to-end tests need the real agent hosts: install them once with
# `bash .ci/install-hosts.sh` (they are skipped otherwise, unless CI is set).
# PostgreSQL tests use 127.0.0.1:5432 (database test); they are skipped when
# it is unreachable, unless CI is set.
set -euo pipefail
cd "$(dirname "$0")"

fuzztime="${FUZZTIME:-8s}"

echo "== go vet and gofmt"
go vet ./...
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bench/*') | grep -v '^bench/' || true)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== race tests on the concurrent code"
go test -race -count=1 ./client/ ./mcpproxy/ ./serve/ ./mcpserve/ ./engine/ ./shell/ ./session/ ./sqlite/ ./report/ ./internal/scripted/ ./internal/cli/ ./internal/hookd/

echo "== fuzz targets, ${fuzztime} each"
# Go 1.26's fuzz coordinator can report "context deadline exceeded" as the
# -fuzztime window closes on a loaded machine (golang/go#75804), with no failing
# input. Such a run is tried once more with a count instead of a time
# (-fuzztime Nx, N the executions the first run reached): a count sets no
# deadline, so the race cannot recur. Any run that wrote a failing input, or
# failed in any other way, fails the test run and prints its log.
fuzz() {
  local log; log=$(mktemp)
  local budget="$fuzztime"
  for try in 1 2; do
    if go test "$1" -run '^$' -fuzz "^$2\$" -fuzztime "$budget" >"$log" 2>&1; then
      echo "fuzz $2: ok"; rm -f "$log"; return 0
    fi
    if [ "$try" = 1 ] && grep -q 'context deadline exceeded' "$log" && ! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' "$log"; then
      local n; n=$(grep -oE 'execs: [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+' || true)
      if [ -z "$n" ] || [ "$n" -lt 10000 ]; then n=10000; fi
      budget="${n}x"
      echo "fuzz $2: the fuzz coordinator's deadline race (golang/go#75804), no failing input; once more for $budget executions"
      continue
    fi
    break
  done
  echo "fuzz $2 failed:"; tail -n 40 "$log"; rm -f "$log"
  go test "$1" -run "$2"
  exit 1
}
fuzz ./shell/ FuzzAnalyze
fuzz ./shell/ FuzzFastMatchesParser
fuzz ./shell/ FuzzFastValidLinear
fuzz ./shell/ FuzzExpandMatchesBash
fuzz ./policy/ FuzzParse
fuzz ./engine/ FuzzResolve
fuzz ./internal/glob/ FuzzPath
fuzz ./report/ FuzzFilter
fuzz ./compile/ FuzzSplice
fuzz . FuzzRedactSkipsOnlyWhatCannotMatch
fuzz ./internal/hookd/ FuzzDecodeResponse
fuzz ./mcpproxy/ FuzzOneReading

if [ -f bench/go.mod ]; then
  echo "== bench module: correctness of warden, OPA and cedar-go"
  (cd bench && go vet ./... && go test -count=1 ./...)
fi

echo "== serve load: warden serve beside opa run --server (e2e/servebench.sh, short)"
# The table of bench/README.md in short (1,000 requests a row), with warden's
# requests/s at 16 clients as a multiple of OPA's, on SQLite and (when
# reachable) PostgreSQL, and the loopback floor's (a server that does
# nothing: the most any server can answer this client here). It fails when a server answers an error or a row is
# missing; speed is reported, not asserted (a loaded machine is no verdict).
# OPA comes from $OPA_BIN or PATH (.ci/run installs it); without it the run
# is skipped, unless CI is set.
opa_bin="${OPA_BIN:-$(command -v opa || true)}"
if [ -z "$opa_bin" ] && [ -x "$HOME/go/bin/opa" ]; then opa_bin="$HOME/go/bin/opa"; fi
if [ -z "$opa_bin" ]; then
  if [ -n "${CI:-}" ]; then
    echo "serve load: no opa binary in CI (.ci/run installs it: go install github.com/open-policy-agent/opa@v1.22.2)"; exit 1
  fi
  echo "serve load: SKIPPED: no opa binary (go install github.com/open-policy-agent/opa@v1.22.2, or set OPA_BIN)"
else
  if ! table=$(OPA_BIN="$opa_bin" bash e2e/servebench.sh 1000 2>&1); then
    echo "$table"; echo "serve load: the load test failed"; exit 1
  fi
  echo "$table"
  echo "$table" | awk -F'|' '
    { gsub(/[ ,]/, "", $2); gsub(/[ ,]/, "", $3); gsub(/[ ,]/, "", $4) }
    $3 == "16" { rate[$2] = $4 }
    END {
      if (!("opa" in rate) || !("warden-sqlite" in rate)) { print "serve load: the 16-client rows are missing"; exit 1 }
      for (k in rate) if (k != "opa" && k != "floor") {
        printf "serve load: %s at 16 clients: %.2fx OPA'"'"'s requests/s (target: 3x)\n", k, rate[k] / rate["opa"]
      }
      if ("floor" in rate) printf "serve load: the loopback floor (a server that does nothing) at 16 clients: %.2fx OPA'"'"'s requests/s\n", rate["floor"] / rate["opa"]
    }'
fi

echo "== all tests"
go test -count=1 ./...
