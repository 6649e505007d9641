#!/usr/bin/env bash
# The REST numbers of BENCHMARKS.md (detail: benchmarks/2026-11-24-rest.md): a fresh embedded store
# of 10^6 documents seeded through the batch endpoint, then check by fingerprint
# (8 and 16 connections), check by text, and the fingerprinting ceiling, all with
# scripts/bench/loadgen on loopback. Run from the repository root; takes ~7 minutes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d)
bench_trap
bench_on_exit 'rm -rf "$d"'
go build -o $d/server ./cmd/server
go build -o $d/loadgen ./scripts/bench/loadgen
bench_serve $d/server.log 18092 $d/server --addr 127.0.0.1:18092 --data-dir $d/data --log-level warn
echo "== uptime: $(uptime)"
$d/loadgen --addr 127.0.0.1:18092 --seed 1000000 --mode none
for c in 8 16; do
  echo "== check-fp c=$c: $(uptime)"
  $d/loadgen --addr 127.0.0.1:18092 --mode check-fp --warmup 40s --duration 20s --concurrency $c
done
echo "== check-text c=16: $(uptime)"
$d/loadgen --addr 127.0.0.1:18092 --mode check-text --warmup 5s --duration 20s --concurrency 16
bench_stop
echo "== fp-ceiling: $(uptime)"
$d/loadgen --mode fp-ceiling --duration 20s
# Inserts on a fresh server over the same 10^6 documents.
bench_serve $d/server.log 18092 $d/server --addr 127.0.0.1:18092 --data-dir $d/data --log-level warn
echo "== insert c=8: $(uptime)"
$d/loadgen --addr 127.0.0.1:18092 --mode insert --warmup 5s --duration 20s --concurrency 8
echo "== insert-if-unique c=8: $(uptime)"
$d/loadgen --addr 127.0.0.1:18092 --mode insert-if-unique --id-prefix iu --warmup 5s --duration 20s --concurrency 8
