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
go test -race -count=1 ./client/ ./mcpproxy/ ./engine/ ./shell/ ./session/ ./sqlite/ ./report/ ./internal/scripted/ ./internal/cli/ ./internal/hookd/

echo "== fuzz targets, ${fuzztime} each"
fuzz() { go test "$1" -run '^$' -fuzz "^$2\$" -fuzztime "$fuzztime" >/dev/null || { echo "fuzz $2 failed"; go test "$1" -run "$2" ; exit 1; }; echo "fuzz $2: ok"; }
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

if [ -f bench/go.mod ]; then
  echo "== bench module: correctness of warden, OPA and cedar-go"
  (cd bench && go vet ./... && go test -count=1 ./...)
fi

echo "== all tests"
go test -count=1 ./...
