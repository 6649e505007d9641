#!/usr/bin/env bash
# kvindex on HBase vs the embedded Pebble store, in the same run: lookups
# (p50/p99, lookups/s, one goroutine) and insert-if-unique/s (HBase with its
# lease Locker) over an index of N random fingerprints loaded through the
# bulk path (storage/hbasestore/bench_test.go).
#
#   scripts/bench/hbstore.sh [N] [OPS]   (defaults 1000000 and 2000)
#
# Uses the HBase at SIMDEX_HBASE_ZK, else starts scripts/hbase/start.sh's
# (left running; stop it with scripts/hbase/stop.sh). Output also goes to
# scripts/bench/out/hbstore-<time>.txt (gitignored).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
n="${1:-1000000}"
ops="${2:-2000}"
bench_hbase || true
bench_out hbstore
{
	echo "# HBase at $SIMDEX_HBASE_ZK, N=$n, OPS=$ops, $(nproc) cores, $(date -u)"
	go test -run '^$' -bench 'BenchmarkStore(Lookup|InsertIfUnique)$' -benchtime "${ops}x" -count 1 -timeout 60m ./storage/hbasestore/ -args -hbstore.n="$n"
} 2>&1 | tee "$out"
