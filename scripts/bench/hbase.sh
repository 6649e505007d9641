#!/usr/bin/env bash
# Go client vs HBase's own Java client, side by side against the same HBase
# and the same rows, one thread each: p50/p99 of a 4-row multi-get (a simdex
# lookup), single puts/s (N each), and puts/s in max(20, N/100) Multi batches
# of 1,000.
#
#   scripts/bench/hbase.sh [N]     (N operations per figure, default 2000)
#
# Uses the HBase at SIMDEX_HBASE_ZK, else starts scripts/hbase/start.sh's
# (left running; stop it with scripts/hbase/stop.sh). Output also goes to
# scripts/bench/out/hbase-<time>.txt (gitignored).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
n="${1:-2000}"
bench_hbase || true
bench_out hbase
{
	echo "# HBase at $SIMDEX_HBASE_ZK, N=$n, $(nproc) cores, $(date -u)"
	echo "## Go client (hbase/bench_test.go)"
	# -count 1: benchmarks create and load simdex_bench:kv on first use.
	go test -run '^$' -bench 'BenchmarkHBase(MultiGet4|Put)$' -benchtime "${n}x" -count 1 ./hbase/
	go test -run '^$' -bench 'BenchmarkHBaseMulti1000Puts$' -benchtime "$(( n / 100 > 20 ? n / 100 : 20 ))x" -count 1 ./hbase/
	echo "## Java client (scripts/hbase/Peer.java bench, after a 2,000-op warm-up)"
	scripts/hbase/peer.sh bench "$SIMDEX_HBASE_ZK" simdex_bench:kv "$n"
} 2>&1 | tee "$out"
