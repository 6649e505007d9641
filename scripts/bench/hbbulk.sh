#!/usr/bin/env bash
# The bulk loader on HBase, through HFiles (HBase's bulk-load path) and through
# batched puts, against the embedded store, in the same run, at N
# precomputed fingerprints (scripts/bench/bulkload's generator: times over a
# year, 2% near-copies): load wall time and the time of each write phase
# (index rows, then fp/docs cells), client CPU (the loader's user+sys) and
# HBase's CPU (the JVM's, from /proc), then store-level lookups on each
# loaded index (scripts/bench/storelookup: p50/p99, lookups/s with 1, 4 and
# 16 goroutines, every query checked to find its document).
#
#   scripts/bench/hbbulk.sh [N] [BUCKET]   (defaults 1000000 and 720h, the
#                                          index's default bucket width)
#
# SIMDEX_BENCH_IMPORTS lists the HBase import modes to run (default
# "hfile puts"); SIMDEX_BENCH_LOOKUPS=0 skips the lookups on HBase,
# SIMDEX_BENCH_PEBBLE=0 the embedded store.
#
# Uses the HBase at SIMDEX_HBASE_ZK (its JVM's pid from SIMDEX_HBASE_PID or
# $SIMDEX_HBASE_DATA/hbase.pid, for the CPU figure), else starts
# scripts/hbase/start.sh's. Work files go to SIMDEX_BENCH_DIR (default
# /tmp/simdex-hbbulk); the HBase namespace hbbulk_<N>_<time> is left for
# inspection (drop them with `simdexctl schema drop --yes`). Output also goes
# to scripts/bench/out/hbbulk-<time>.txt (gitignored).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
n="${1:-1000000}"
bucket="${2:-720h}"
work="${SIMDEX_BENCH_DIR:-/tmp/simdex-hbbulk}"
bench_hbase || true
pid="${SIMDEX_HBASE_PID:-}"
if [ -z "$pid" ]; then
	pidf="${SIMDEX_HBASE_DATA:-${SIMDEX_HBASE_HOME:-.hbase}/data}/hbase.pid"
	[ -s "$pidf" ] && pid="$(cat "$pidf")"
fi
mkdir -p "$work" scripts/bench/out
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="scripts/bench/out/hbbulk-$stamp.txt"
ns="hbbulk_${n}_${stamp//[^0-9]/}"

{
	echo "# N=$n bucket=$bucket, HBase at $SIMDEX_HBASE_ZK (pid ${pid:-unknown}), $(nproc) cores, $(date -u), load: $(cut -d' ' -f1-3 /proc/loadavg)"
	bench_build "$work" cmd/bulkload scripts/bench/storelookup
	in="$work/fp$n.csv"
	[ -s "$in" ] || go run ./scripts/bench/bulkload -n "$n" -kind fp >"$in"

	if [ "${SIMDEX_BENCH_PEBBLE:-1}" = 1 ]; then
		echo "## embedded store (Pebble)"
		rm -rf "$work/pebble$n" "$work/pebble$n.bulkload"
		/usr/bin/time -f "wall %e s, client CPU %U user + %S sys s, peak RSS %M KB" \
			"$work/bulkload" --data-dir "$work/pebble$n" --bucket "$bucket" --memory 1GiB --progress none "$in" 2>&1 |
			grep -E 'input read|index rows written|bulk load done|wall|error' || true
		"$work/storelookup" -data-dir "$work/pebble$n" -input "$in"
	fi

	for mode in ${SIMDEX_BENCH_IMPORTS:-hfile puts}; do
		echo "## HBase, --hbase-import $mode (namespace ${ns}_$mode)"
		rm -rf "$work/cp$n"
		before="$(bench_cpu "$pid")"
		/usr/bin/time -f "wall %e s, client CPU %U user + %S sys s, peak RSS %M KB" \
			"$work/bulkload" --store hbase --hbase-namespace "${ns}_$mode" --hbase-create-tables --checkpoint-dir "$work/cp$n" \
			--hbase-import "$mode" --bucket "$bucket" --memory 1GiB --progress none "$in" 2>&1 |
			grep -E 'input read|index tables written|fp and docs cells written|HFiles imported|index rows written|bulk load done|summary|wall|error' || true
		after="$(bench_cpu "$pid")"
		echo "HBase JVM CPU during the load: $(awk -v a="$before" -v b="$after" 'BEGIN{print b-a}') s"
		if [ "${SIMDEX_BENCH_LOOKUPS:-1}" = 1 ]; then
			"$work/storelookup" -hbase-zk "$SIMDEX_HBASE_ZK" -hbase-namespace "${ns}_$mode" -input "$in"
		fi
	done
	echo "# done $(date -u), load: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$out"
