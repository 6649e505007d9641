#!/usr/bin/env bash
# The whole simdex test suite: formatting, vet, and every test under the race
# detector. It installs what the tests need (Go modules; Apache HBase through
# scripts/hbase/ once the HBase tests exist) and starts what they talk to.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go modules"
go mod download

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test -race"
go test -race -count=1 -timeout 30m ./... "$@"

# Single-goroutine oracle tests at full size are skipped under -race (it only
# slows them tenfold); run them natively.
echo "== go test (exactness against brute force, no -race)"
go test -count=1 -timeout 20m -run 'TestExactnessAgainstBruteForce' ./kvindex/ "$@"
