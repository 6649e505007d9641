#!/usr/bin/env bash
# A/B of check by text with LSH band rows on and off (benchmarks/2026-11-23-rest.md,
# "Check by text with LSH band rows", and benchmarks/2026-11-23-lsh-cost.md), runs interleaved so
# that every variant sees the same minutes of machine load. Each run: a fresh embedded
# store of SEED documents seeded by fingerprint through the batch endpoint, one server
# process, then `loadgen --mode check-text` (the ~1.2 KB Chinese article, varied per
# request) with 16 connections, 5 s warm-up, 20 s measured.
#
#   scripts/bench/bandsab.sh [ROUNDS] [SEED] [BASE_REV]
#
# Variants per round: this tree with --bands on, this tree with --bands off and, when
# BASE_REV is given (e.g. a commit of main before the change), that revision's server
# with --bands on (built from `git archive`, so the work tree is untouched). Run from
# the repository root. ~1 minute per run (seeding 10^5 takes ~25 s).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
rounds=${1:-3}
seed=${2:-100000}
base=${3:-}
d=$(mktemp -d)
bench_trap
bench_on_exit 'rm -rf "$d"'
go build -o $d/server ./cmd/server
go build -o $d/loadgen ./scripts/bench/loadgen
variants="on off"
if [ -n "$base" ]; then
  mkdir $d/base
  git archive "$base" | tar -x -C $d/base
  (cd $d/base && go build -o $d/server-base ./cmd/server)
  variants="on off base"
fi
for r in $(seq 1 $rounds); do
  for v in $variants; do
    bin=$d/server bands=$v
    if [ $v = base ]; then bin=$d/server-base bands=on; fi
    rm -rf $d/data
    : > $d/server.log
    bench_serve $d/server.log 18092 $bin --addr 127.0.0.1:18092 --data-dir $d/data --log-level warn --bands $bands
    $d/loadgen --addr 127.0.0.1:18092 --seed $seed --mode none > /dev/null
    echo "== round $r variant $v (bands $bands): $(uptime)"
    $d/loadgen --addr 127.0.0.1:18092 --mode check-text --warmup 5s --duration 20s --concurrency 16
    bench_stop
  done
done
