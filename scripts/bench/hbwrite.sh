#!/usr/bin/env bash
# Writes through REST on HBase and on the embedded store, in the same run:
# batch inserts of ~1 KB text documents (/v1/documents/batch) and concurrent
# single insert-if-unique, the two stores' runs interleaved round by round.
#
#   scripts/bench/hbwrite.sh [DURATION] [ROUNDS]
#       defaults: DURATION=15s ROUNDS=2
#
# Needs an HBase at SIMDEX_HBASE_ZK (its JVM pid in SIMDEX_HBASE_PID for the
# CPU figures). Both servers run at once (ports 18691 and 18693, pprof on
# 18692 and 18694) on a fresh namespace hbwrite<time> and a fresh embedded
# store, both dropped at the end (SIMDEX_BENCH_KEEP=1 keeps them). Each
# round measures, per store: SIMDEX_BENCH_BATCH (default 200) text documents
# per batch at SIMDEX_BENCH_BATCH_CONNS connections (default "1 2"; mode
# insert), then single insert-if-unique at SIMDEX_BENCH_IU_CONNS connections
# (default 16) of random fingerprints and, with SIMDEX_BENCH_IU_TEXT=1, of
# text documents. Every loadgen line gives requests/s (docs/s for batches),
# the latencies and the server's histograms (handler, store get and mutate,
# HBase Multi); after it the CPU per document of the server and the HBase
# JVM. SIMDEX_BENCH_SERVER_ARGS adds flags to every server,
# SIMDEX_BENCH_HBASE_ARGS to the HBase server of this tree only (e.g.
# --hbase-writer-lease, against the same build without it as BEFORE). Output also goes
# to scripts/bench/out/hbwrite-<time>.txt.
#
# SIMDEX_BENCH_BEFORE=<commit> adds a third server on HBase built from that
# commit (port 18695, namespace hbwrite<time>b), measured in the same
# rounds between the other two: the A/B of a change on a shared machine.
#
# SIMDEX_BENCH_STANDBY=1 (with SIMDEX_BENCH_HBASE_ARGS=--hbase-writer-lease)
# adds a second server of this tree on the first one's namespace (port
# 18697), started after it, so a standby: its writes are sent on to the
# first, the lease holder; measured in the same rounds ("standby", its CPU
# figure is the standby's own).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
dur="${1:-15s}"
rounds="${2:-2}"
batch="${SIMDEX_BENCH_BATCH:-200}"
batch_conns="${SIMDEX_BENCH_BATCH_CONNS-1 2}"
iu_conns="${SIMDEX_BENCH_IU_CONNS-16}"
: "${SIMDEX_HBASE_ZK:?set SIMDEX_HBASE_ZK to the HBase ZooKeeper (host:port)}"
hbase_pid="${SIMDEX_HBASE_PID:-}"
bin="$(mktemp -d)"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
ns="hbwrite${stamp//[!0-9]/}"
pebble="$bin/pebble"
declare -A port=([hbase]=18691 [pebble]=18693 [before]=18695 [standby]=18697) pid=()
stores="hbase pebble"
[ -n "${SIMDEX_BENCH_BEFORE:-}" ] && stores="hbase before pebble"
[ "${SIMDEX_BENCH_STANDBY:-0}" = 1 ] && stores="hbase standby ${stores#hbase }"
bench_trap
bench_on_exit 'if [ "${SIMDEX_BENCH_KEEP:-0}" != 1 ]; then
	"$bin/simdexctl" schema drop --yes --hbase-zk "$SIMDEX_HBASE_ZK" --hbase-namespace "$ns" >/dev/null 2>&1 || true
	"$bin/simdexctl" schema drop --yes --hbase-zk "$SIMDEX_HBASE_ZK" --hbase-namespace "${ns}b" >/dev/null 2>&1 || true
	rm -rf "$bin"
fi'
go build -o "$bin/server" ./cmd/server
go build -o "$bin/simdexctl" ./cmd/simdexctl
go build -o "$bin/loadgen" ./scripts/bench/loadgen
if [ -n "${SIMDEX_BENCH_BEFORE:-}" ]; then
	mkdir "$bin/before-src"
	git archive "$SIMDEX_BENCH_BEFORE" | tar -x -C "$bin/before-src"
	(cd "$bin/before-src" && go build -o "$bin/server-before" ./cmd/server)
fi
mkdir -p scripts/bench/out
out="scripts/bench/out/hbwrite-$stamp.txt"

serve() { # store args...
	local store="$1" exe="$bin/server"
	shift
	[ "$store" = before ] && exe="$bin/server-before"
	# shellcheck disable=SC2086 # word splitting of the extra flags is wanted
	bench_serve "$bin/$store.log" "${port[$store]}" "$exe" --addr "127.0.0.1:${port[$store]}" \
		--pprof-addr "127.0.0.1:$((port[$store] + 1))" --log-level warn "$@" ${SIMDEX_BENCH_SERVER_ARGS:-}
	pid[$store]="$server_pid"
}
measure() { # store label docs-per-request loadgen-args...
	local store="$1" label="$2" per="$3" s0 h0 reqs
	shift 3
	s0="$(bench_cpu "${pid[$store]}")"
	h0="$(bench_cpu "$hbase_pid")"
	"$bin/loadgen" --addr "127.0.0.1:${port[$store]}" --duration "$dur" --fp-seed "$RANDOM" --id-prefix "w$RANDOM" "$@" >"$bin/lg.txt" || true
	reqs="$(sed -n 's/.*requests=\([0-9]*\).*/\1/p' "$bin/lg.txt")"
	echo "## $store $label: $(head -n 1 "$bin/lg.txt")"
	sed -n '2,$p' "$bin/lg.txt"
	[ -n "$reqs" ] && [ "$reqs" -gt 0 ] || return 0
	awk -v s0="$s0" -v s1="$(bench_cpu "${pid[$store]}")" -v h0="$h0" -v h1="$(bench_cpu "$hbase_pid")" -v n="$((reqs * per))" -v st="$store" 'BEGIN {
		printf "cpu per document: server %.0f µs", (s1-s0)/n*1e6
		if (st != "pebble" && h1 > 0) printf ", hbase-jvm %.0f µs", (h1-h0)/n*1e6
		printf " (load %s)\n", "'"$(cut -d' ' -f1-3 /proc/loadavg)"'" }'
}

# The measurements run in a subshell (the pipe to tee): its own trap stops
# its servers however it ends.
{
	bench_trap
	echo "# hbwrite: namespace=$ns duration=$dur rounds=$rounds batch=$batch batch conns=($batch_conns) insert-if-unique conns=($iu_conns), HBase at $SIMDEX_HBASE_ZK, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u), commit $(git rev-parse --short HEAD)"
	# shellcheck disable=SC2086 # word splitting of the extra flags is wanted
	serve hbase --store hbase --hbase-zk "$SIMDEX_HBASE_ZK" --hbase-namespace "$ns" --hbase-create-tables ${SIMDEX_BENCH_HBASE_ARGS:-}
	serve pebble --store pebble --data-dir "$pebble"
	[ "${SIMDEX_BENCH_STANDBY:-0}" = 1 ] && serve standby --store hbase --hbase-zk "$SIMDEX_HBASE_ZK" --hbase-namespace "$ns"
	[ -n "${SIMDEX_BENCH_BEFORE:-}" ] && serve before --store hbase --hbase-zk "$SIMDEX_HBASE_ZK" --hbase-namespace "${ns}b" --hbase-create-tables
	for round in $(seq 1 "$rounds"); do
		for c in $batch_conns; do
			for store in $stores; do
				measure "$store" "batch insert of $batch text documents, $c connections (round $round)" "$batch" \
					--mode insert --docs text --batch "$batch" --concurrency "$c"
			done
		done
		for c in $iu_conns; do
			for store in $stores; do
				measure "$store" "insert-if-unique by fingerprint, $c connections (round $round)" 1 \
					--mode insert-if-unique --concurrency "$c"
				if [ "${SIMDEX_BENCH_IU_TEXT:-0}" = 1 ]; then
					measure "$store" "insert-if-unique of text documents, $c connections (round $round)" 1 \
						--mode insert-if-unique --docs text --concurrency "$c"
				fi
			done
		done
	done
	for store in $stores; do
		curl -s --max-time 60 "http://127.0.0.1:${port[$store]}/v1/stats" | head -c 60
		echo " ($store)"
		bench_stop "${pid[$store]}"
	done
} 2>&1 | tee "$out"
