#!/usr/bin/env bash
# Lookups by fingerprint through REST on HBase and on the embedded store, in
# the same run: requests/s, p50/p99, and the CPU each process spends per
# request (server, HBase JVM by thread group, loadgen), closed loop at
# several connection counts and open loop at fixed rates.
#
#   scripts/bench/hbrest.sh N [DURATION] [CONNS] [RATES]
#       defaults: N=1000000 DURATION=15s CONNS="1 4 16" RATES="2000 3000"
#
# Needs an HBase at SIMDEX_HBASE_ZK (its JVM pid in SIMDEX_HBASE_PID for the
# CPU figures). Loads N random fingerprints (scripts/bench/hbsrvload, same
# seed for both stores) into the namespace hbrest<N> and a directory under
# SIMDEX_BENCH_DIR (default: a temporary one) unless they exist already
# (set SIMDEX_BENCH_KEEP=1 to keep them for the next run). SIMDEX_BENCH_NS
# and SIMDEX_BENCH_PEBBLE name an existing namespace and directory instead
# (e.g. loaded with hbsrvload --index-only; never dropped). Random queries
# have no hits, so each request is one lookup: one Multi of T=4 gets on
# HBase (concurrent ones share MultiRequests: the server's
# --hbase-multi-inflight). Last, insert-if-unique of new random documents
# at SIMDEX_BENCH_INSERT_CONNS connections (default 16; "" skips it). The
# inserted documents stay: a rerun on a kept namespace flushes them into
# more HFiles (and compactions rewrite them at the family's BLOCKSIZE: check
# `simdexctl schema describe` for the index family's 4096 first); for
# comparable reruns, skip inserts or run them last (CONNS and RATES ""). SIMDEX_BENCH_SERVER_ARGS adds server flags (both stores). Output also goes to scripts/bench/out/hbrest-<time>.txt.
#
# Before measuring, the namespace's tables are flushed (scripts/hbase/peer.sh
# flush: memstore to HFiles, as in production; SIMDEX_BENCH_FLUSH=0 skips
# it) and each store gets SIMDEX_BENCH_WARMUP (default 5s) of lookups at 16
# connections; after an HBase restart use 60s or more (the JIT compiles the
# read path for minutes: the region server's CPU per lookup is 2-5x higher
# at first). SIMDEX_BENCH_STORES (default "hbase pebble") picks the stores measured.
# SIMDEX_BENCH_ROUNDS (default 1) repeats the closed and open
# loops that many times per store: on a 2-core VM one 15 s run's p99 varies
# by 2x from run to run (benchmarks/2026-11-25-hbase-lookups.md), so judge a tail by
# several rounds. Each run prints loadgen's own lateness (open loop) and
# the server's histograms: the handler, the store call and the HBase Multi
# RPC, to see where a request's time went. Then, with the server stopped,
# scripts/bench/storelookup runs the same loads at the store level
# (kvindex.Index.Lookup of random fingerprints, no HTTP; 30,000 lookups per
# closed loop; SIMDEX_BENCH_STORE_LEVEL=0 skips it).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
n="${1:-1000000}"
dur="${2:-15s}"
conns="${3-1 4 16}"
rates="${4-2000 3000}"
inserts="${SIMDEX_BENCH_INSERT_CONNS-16}"
: "${SIMDEX_HBASE_ZK:?set SIMDEX_HBASE_ZK to the HBase ZooKeeper (host:port)}"
hbase_pid="${SIMDEX_HBASE_PID:-}"
bin="$(mktemp -d)"
dir="${SIMDEX_BENCH_DIR:-$bin}"
ns="${SIMDEX_BENCH_NS:-hbrest$n}"
pebble="${SIMDEX_BENCH_PEBBLE:-$dir/pebble$n}"
[ -n "${SIMDEX_BENCH_NS:-}${SIMDEX_BENCH_PEBBLE:-}" ] && SIMDEX_BENCH_KEEP=1
port=18591
pprof_port=18592
bench_trap
bench_on_exit 'if [ "${SIMDEX_BENCH_KEEP:-0}" != 1 ]; then
	"$bin/simdexctl" schema drop --yes --hbase-zk "$SIMDEX_HBASE_ZK" --hbase-namespace "$ns" >/dev/null 2>&1 || true
	rm -rf "$pebble"
fi'
bench_on_exit 'rm -rf "$bin"'
bench_build "$bin" cmd/server cmd/simdexctl scripts/bench/hbsrvload scripts/bench/loadgen scripts/bench/storelookup
bench_out hbrest

threads() { # pid: CPU ticks per thread group (digits folded), "name<TAB>ticks"
	[ -n "$1" ] && [ -d "/proc/$1/task" ] || return 0
	for t in /proc/"$1"/task/*; do
		n="$(sed 's/[0-9][0-9]*/N/g' "$t/comm" 2>/dev/null)" || continue
		awk -v n="$n" '{print n "\t" ($14+$15)}' "$t/stat" 2>/dev/null || true
	done | awk -F'\t' '{a[$1]+=$2} END {for (k in a) print k "\t" a[k]}' | sort
}
gc() { # pid: stop-the-world GC pauses so far (young + full) and their seconds, "count<TAB>seconds"
	if [ -n "$1" ] && command -v jstat >/dev/null; then
		jstat -gc "$1" 2>/dev/null | awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { printf "%d\t%s\n", $c["YGC"] + $c["FGC"], $c["YGCT"] + $c["FGCT"] }'
	fi
}
serve() { # args...: start the server, wait for /readyz
	: >"$bin/server.log"
	# shellcheck disable=SC2086 # word splitting of the extra flags is wanted
	bench_serve "$bin/server.log" "$port" "$bin/server" --addr "127.0.0.1:$port" --pprof-addr "127.0.0.1:$pprof_port" --log-level warn "$@" ${SIMDEX_BENCH_SERVER_ARGS:-}
}
measure() { # store label loadgen-args...
	local store="$1" label="$2"
	shift 2
	local s0 h0 t0 reqs
	s0="$(bench_cpu "$server_pid")"
	h0="$(bench_cpu "$hbase_pid")"
	[ "$store" = hbase ] && threads "$hbase_pid" >"$bin/t0"
	[ "$store" = hbase ] && gc "$hbase_pid" >"$bin/gc0"
	"$bin/loadgen" --addr "127.0.0.1:$port" --mode "${mode:-check-fp}" --duration "$dur" --fp-seed "$RANDOM" --id-prefix "hbrest-$RANDOM-" "$@" >"$bin/lg.txt"
	reqs="$(sed -n 's/.*requests=\([0-9]*\).*/\1/p' "$bin/lg.txt")"
	echo "## $store $label: $(head -n 1 "$bin/lg.txt")"
	sed -n '2,$p' "$bin/lg.txt"
	awk -v s0="$s0" -v s1="$(bench_cpu "$server_pid")" -v h0="$h0" -v h1="$(bench_cpu "$hbase_pid")" -v n="$reqs" -v st="$store" 'BEGIN {
		printf "cpu per request: server %.0f µs", (s1-s0)/n*1e6
		if (st == "hbase") printf ", hbase-jvm %.0f µs", (h1-h0)/n*1e6
		printf " (load %s)\n", "'"$(cut -d' ' -f1-3 /proc/loadavg)"'" }'
	if [ "$store" = hbase ] && [ -n "$hbase_pid" ]; then
		gc "$hbase_pid" | paste "$bin/gc0" - | awk -v d="$dur" '$1 != "" && $3 != "" {
			n = $3 - $1; t = $4 - $2
			if (n > 0) printf "  hbase GC (stop-the-world young/mixed/full): %d pauses, %.0f ms in all, %.1f ms mean, in %s\n", n, t*1000, t*1000/n, d
			else printf "  hbase GC: no pause in %s\n", d }'
		threads "$hbase_pid" >"$bin/t1"
		join -t "$(printf '\t')" "$bin/t0" "$bin/t1" | awk -F'\t' -v n="$reqs" -v hz="$(getconf CLK_TCK)" \
			'{d=$3-$2; if (d > 0) printf "  hbase threads %-22s %6.0f µs/request\n", $1, d/hz/n*1e6}' | sort -k4 -rn | head -n 6
	fi
}

{
	echo "# N=$n namespace=$ns duration=$dur conns=($conns) rates=($rates) HBase at $SIMDEX_HBASE_ZK, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u), commit $(git rev-parse --short HEAD)"
	if ! "$bin/simdexctl" schema describe --hbase-zk "$SIMDEX_HBASE_ZK" --hbase-namespace "$ns" >/dev/null 2>&1; then
		"$bin/hbsrvload" --store hbase --hbase-zk "$SIMDEX_HBASE_ZK" --namespace "$ns" -n "$n"
	fi
	if [ "${SIMDEX_BENCH_FLUSH:-1}" = 1 ]; then
		scripts/hbase/peer.sh flush "$SIMDEX_HBASE_ZK" "$ns" | wc -l | xargs printf "flushed %s tables of $ns (lookups read HFiles)\n"
	fi
	if [ ! -d "$pebble" ]; then
		"$bin/hbsrvload" --store pebble --data-dir "$pebble" -n "$n"
	fi
	for store in ${SIMDEX_BENCH_STORES:-hbase pebble}; do
		if [ "$store" = hbase ]; then
			serve --store hbase --hbase-zk "$SIMDEX_HBASE_ZK" --hbase-namespace "$ns"
		else
			serve --store pebble --data-dir "$pebble"
		fi
		"$bin/loadgen" --addr "127.0.0.1:$port" --mode check-fp --duration "${SIMDEX_BENCH_WARMUP:-5s}" --concurrency 16 >/dev/null # warm-up
		for round in $(seq 1 "${SIMDEX_BENCH_ROUNDS:-1}"); do
			for c in $conns; do
				measure "$store" "closed loop, $c connections (round $round)" --concurrency "$c"
			done
			for r in $rates; do
				measure "$store" "open loop, $r/s (round $round)" --concurrency 32 --rate "$r"
			done
		done
		for c in $inserts; do
			mode=insert-if-unique measure "$store" "insert-if-unique, closed loop, $c connections" --concurrency "$c"
		done
		bench_stop
		if [ "${SIMDEX_BENCH_STORE_LEVEL:-1}" = 1 ] && [ -n "$conns$rates" ]; then
			# The same loads at the store level (kvindex.Index.Lookup, no HTTP),
			# after the server is gone (the embedded store's directory is
			# single-process): what REST adds is the difference.
			echo "## $store store level: closed loops at ($conns) goroutines, open loops at ($rates)/s"
			if [ "$store" = hbase ]; then where=(-hbase-zk "$SIMDEX_HBASE_ZK" -hbase-namespace "$ns"); else where=(-data-dir "$pebble"); fi
			"$bin/storelookup" "${where[@]}" -random -warm 5000 -ops 30000 -duration "$dur" \
				-goroutines "$(tr -s ' ' ',' <<<"$conns" | sed 's/^,//; s/,$//')" -rates "$(tr -s ' ' ',' <<<"$rates" | sed 's/^,//; s/,$//')"
		fi
	done
} 2>&1 | tee "$out"
