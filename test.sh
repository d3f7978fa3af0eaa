#!/usr/bin/env bash
# test.sh: warden's whole test run, as the README and CI run it.
#   ./test.sh          vet, format, unit and end-to-end tests, race tests,
#                      short fuzz runs, the bench module's correctness tests
#                      and the serve load comparison beside OPA
# Every step runs to the end even when an earlier one failed; the run ends
# with a summary of the steps (name, result, duration) and exits non-zero if
# any failed. Each `go test` has a -timeout that fits its step.
# End-to-end tests need the real agent hosts: install them once with
# `bash .ci/install-hosts.sh` (they are skipped otherwise, unless CI is set).
# PostgreSQL tests use 127.0.0.1:5432 (database test); they are skipped when
# it is unreachable, unless CI is set.
set -uo pipefail
cd "$(dirname "$0")"

fuzztime="${FUZZTIME:-4s}"

# Every build of the run is the release's (scripts/release.sh: -trimpath,
# no cgo): the tests run what ships, and one compile of each package serves
# vet, the unit tests, the end-to-end tests' binaries and the release test's
# build (the release's own flags, a second compile of every package, cost
# the end-to-end step 100 CPU-seconds). The race detector needs cgo.
export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath"

# step NAME CMD...: runs CMD, records its result and duration, and goes on.
# Its output is shown as it comes and kept, so that the summary can list
# every failing test of a failed step.
logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT
steps=() results=() durations=() failed=0
step() {
  local name="$1"; shift
  local log="$logdir/${#steps[@]}.log"
  echo "== $name"
  local t0=$SECONDS
  "$@" 2>&1 | tee "$log"
  if [ "${PIPESTATUS[0]}" -eq 0 ]; then results+=("ok"); else results+=("FAILED"); failed=$((failed + 1)); fi
  steps+=("$name"); durations+=($((SECONDS - t0)))
  echo "== $name: ${results[-1]} in ${durations[-1]}s"
}

summary() {
  echo
  echo "== summary"
  local i
  for i in "${!steps[@]}"; do
    printf '%-8s %6ss  %s\n' "${results[$i]}" "${durations[$i]}" "${steps[$i]}"
    if [ "${results[$i]}" != ok ]; then
      grep -E '^\s*--- FAIL|^FAIL\s|^panic: |fuzz .* failed|gofmt would change|the load test failed|^# ' "$logdir/$i.log" | sed 's/^/           /' | head -n 60
    fi
  done
  echo "total ${SECONDS}s"
  echo "test.sh: $(( ${#steps[@]} - failed )) passed, $failed failed"
  [ "$failed" -eq 0 ]
}

vet_and_format() {
  go vet ./... || return 1
  local unformatted
  unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bench/*') | grep -v '^bench/' || true)
  if [ -n "$unformatted" ]; then
    echo "gofmt would change:"; echo "$unformatted"; return 1
  fi
}

# Go 1.26's fuzz coordinator can report "context deadline exceeded" as the
# -fuzztime window closes on a loaded machine (golang/go#75804), with no failing
# input. Such a run is tried once more with a count instead of a time
# (-fuzztime Nx, N the executions the first run reached): a count sets no
# deadline, so the race cannot recur. Any run that wrote a failing input, or
# failed in any other way, fails the test run and prints its log.
# -fuzzminimizetime 2s: the fuzzer shrinks each new interesting input for up
# to 60 s by default, finding nothing meanwhile; a retry by count then took
# 148 s instead of 6 (FuzzRedactSkipsOnlyWhatCannotMatch, 60,750 executions).
# A failing input is still shrunk, for 2 s.
fuzz() {
  local log; log=$(mktemp)
  local budget="$fuzztime"
  for try in 1 2; do
    if go test -timeout 10m "$1" -run '^$' -fuzz "^$2\$" -fuzztime "$budget" -fuzzminimizetime 2s >"$log" 2>&1; then
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
  go test -timeout 10m "$1" -run "$2"
  return 1
}
fuzz_all() {
  local bad=0
  fuzz ./shell/ FuzzAnalyze || bad=1
  fuzz ./shell/ FuzzFastMatchesParser || bad=1
  fuzz ./shell/ FuzzFastValidLinear || bad=1
  fuzz ./shell/ FuzzExpandMatchesBash || bad=1
  fuzz ./policy/ FuzzParse || bad=1
  fuzz ./engine/ FuzzResolve || bad=1
  fuzz ./internal/glob/ FuzzPath || bad=1
  fuzz ./report/ FuzzFilter || bad=1
  fuzz ./compile/ FuzzSplice || bad=1
  fuzz . FuzzRedactSkipsOnlyWhatCannotMatch || bad=1
  fuzz . FuzzSecretKeyIsTheExpression || bad=1
  fuzz ./internal/hookd/ FuzzDecodeResponse || bad=1
  fuzz ./internal/reqbody/ FuzzDecodeDecide || bad=1
  fuzz ./internal/onereading/ FuzzCheck || bad=1
  fuzz ./sandbox/confine/ FuzzDecodeSpec || bad=1
  return $bad
}

bench_module() {
  [ -f bench/go.mod ] || return 0
  (cd bench && go vet ./... && go test -count=1 -timeout 10m ./...)
}

serve_load() {
  # The table of bench/README.md in short (1,000 requests a row), with warden's
  # requests/s at 16 clients as a multiple of OPA's, on SQLite and (when
  # reachable) PostgreSQL, the loopback floor's (a server that does
  # nothing: the most any server can answer this client here), the file
  # floor's (the floor and a file's append and sync a group: the most any
  # server that makes each call durable can answer), the
  # durable floor's (the floor and a SQLite row a request) and the store
  # floors' (the floor and warden's store, SQLite and PostgreSQL, no
  # decision). It fails when a server answers an error or a row is
  # missing; speed is reported, not asserted (a loaded machine is no verdict).
  # OPA comes from $OPA_BIN or PATH (.ci/run installs it); without it the run
  # is skipped, unless CI is set.
  opa_bin="${OPA_BIN:-$(command -v opa || true)}"
  if [ -z "$opa_bin" ] && [ -x "$HOME/go/bin/opa" ]; then opa_bin="$HOME/go/bin/opa"; fi
  if [ -z "$opa_bin" ]; then
    if [ -n "${CI:-}" ]; then
      echo "serve load: no opa binary in CI (.ci/run installs it: go install github.com/open-policy-agent/opa@v1.22.2)"; return 1
    fi
    echo "serve load: SKIPPED: no opa binary (go install github.com/open-policy-agent/opa@v1.22.2, or set OPA_BIN)"
    return 0
  fi
  if ! table=$(OPA_BIN="$opa_bin" bash e2e/servebench.sh 1000 2>&1); then
    echo "$table"; echo "serve load: the load test failed"; return 1
  fi
  echo "$table"
  echo "$table" | awk -F'|' '
    { gsub(/[ ,]/, "", $2); gsub(/[ ,]/, "", $3); gsub(/[ ,]/, "", $4) }
    $3 == "16" { rate[$2] = $4 }
    END {
      if (!("opa" in rate) || !("warden-sqlite" in rate)) { print "serve load: the 16-client rows are missing"; exit 1 }
      for (k in rate) if (k != "opa" && k !~ /^floor/) {
        printf "serve load: %s at 16 clients: %.2fx OPA'"'"'s requests/s (target: %s)\n", k, rate[k] / rate["opa"], (k == "warden-postgres" ? "0.7x" : "1.0x")
      }
      if ("floor" in rate) printf "serve load: the loopback floor (a server that does nothing) at 16 clients: %.2fx OPA'"'"'s requests/s\n", rate["floor"] / rate["opa"]
      if ("floor-file" in rate) printf "serve load: the file floor (the floor and a file'"'"'s append and sync) at 16 clients: %.2fx OPA'"'"'s requests/s\n", rate["floor-file"] / rate["opa"]
      if ("floor-sqlite" in rate) printf "serve load: the durable floor (the floor and a SQLite row a request) at 16 clients: %.2fx OPA'"'"'s requests/s\n", rate["floor-sqlite"] / rate["opa"]
      if ("floor-store" in rate) printf "serve load: the store floor (the floor and warden'"'"'s SQLite store, no decision) at 16 clients: %.2fx OPA'"'"'s requests/s; warden on SQLite %.2f of it\n", rate["floor-store"] / rate["opa"], rate["warden-sqlite"] / rate["floor-store"]
      if ("floor-store-postgres" in rate && "warden-postgres" in rate) printf "serve load: the store floor on PostgreSQL at 16 clients: %.2fx OPA'"'"'s requests/s; warden on PostgreSQL %.2f of it\n", rate["floor-store-postgres"] / rate["opa"], rate["warden-postgres"] / rate["floor-store-postgres"]
    }'
}

# The packages other than e2e, and then the end-to-end tests on the real
# hosts (the longest step: it runs the hosts' independent tests in parallel).
# The race step's packages run once, under the race detector (the same
# tests, with more checked); the unit step runs every other package, and
# those with tests that skip under the race detector (raceEnabled: shell's
# differential tests against the real programs, session's fifty processes).
# Both lists begin with their longest packages: go test starts packages in
# the order given, -p at a time (two on a 2-core machine unless set, as in
# the unit step), and a long one started last ran alone
# (the race step took 161s in the order of the list, 118s longest first;
# the unit step 108s and 93s). The race step runs four packages at a time
# (-p 4): its tests wait on processes, sockets and deadlines more than
# they compute, and two at a time left a third of a 2-core machine idle
# (116 s with the build cached, 91 s at four).
race_pkgs="./internal/cli/ ./serve/ ./mcpproxy/ ./sqlite/ ./session/ ./engine/ ./client/ ./mcpserve/ ./shell/ ./report/ ./internal/scripted/ ./internal/hookd/ ./workspace/ ./gate/ ./replay/"
unit_first="sandbox gate/gatetest hook/handler"
unit_tests() {
  local mod skip first
  mod=$(go list -m)
  skip=$(for p in $race_pkgs; do
    [ -n "$(grep -l 'raceEnabled' "$p"*_test.go 2>/dev/null)" ] && continue
    p=${p#./}; echo "$mod/${p%/}"
  done)
  first=$(for p in $unit_first; do echo "$mod/$p"; done)
  go test -count=1 -timeout 20m $first $(go list ./... | grep -v '/e2e$' | grep -vxF "$skip" | grep -vxF "$first")
}
e2e_tests() { go test -count=1 -timeout 45m -parallel 3 ./e2e/; }

step "go vet and gofmt" vet_and_format
step "race tests on the concurrent code" env CGO_ENABLED=1 go test -race -p 4 -count=1 -timeout 20m $race_pkgs
step "fuzz targets, ${fuzztime} each" fuzz_all
step "bench module: correctness of warden, OPA and cedar-go" bench_module
step "serve load: warden serve beside opa run --server (e2e/servebench.sh, short)" serve_load
step "unit tests (every package but e2e and the race step's)" unit_tests
step "end-to-end tests on the real hosts (e2e)" e2e_tests
summary
