#!/usr/bin/env bash
# The REST service on HBase vs on the embedded store, in the same run:
# check-by-fingerprint requests/s and latency, and insert-if-unique/s with
# group commit off (--hbase-insert-group 0, "before") and on (the default,
# "after"), through scripts/bench/loadgen against cmd/server on loopback.
# Both indexes hold the same N random fingerprints, loaded through the bulk
# path by scripts/bench/hbsrvload.
#
#   scripts/bench/hbsrv.sh [N] [DURATION] [CONCURRENCY]   (defaults 1000000 20s 16)
#
# SIMDEX_HBASE_PID (optional): the HBase JVM's pid, to report its CPU use.
# SIMDEX_BENCH_BASE_SERVER (optional): a cmd/server binary built from an
# earlier commit, measured on the same index as "before" for insert-if-unique.
# Uses the HBase at SIMDEX_HBASE_ZK, else starts scripts/hbase/start.sh's
# (left running; stop it with scripts/hbase/stop.sh). Loads into a fresh
# namespace (dropped at the end) and a temporary directory. Output also goes
# to scripts/bench/out/hbsrv-<time>.txt (gitignored).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
n="${1:-1000000}"
dur="${2:-20s}"
conc="${3:-16}"
if ! bench_hbase; then
	SIMDEX_HBASE_PID="$(cat "${SIMDEX_HBASE_DATA:-.hbase/data}/hbase.pid" 2>/dev/null || true)"
fi
work="$(mktemp -d)"
ns="hbsrv$$"
port_h=18391
port_p=18392
bench_trap
bench_on_exit '"$work/simdexctl" schema drop --yes --hbase-zk "$SIMDEX_HBASE_ZK" --hbase-namespace "$ns" >/dev/null 2>&1 || true'
bench_on_exit 'rm -rf "$work"'
bench_build "$work" cmd/server cmd/simdexctl scripts/bench/hbsrvload scripts/bench/loadgen
bench_out hbsrv

serve() { # name port args...: start a server, wait for /readyz
	local name="$1" port="$2"
	shift 2
	local bin="$work/server"
	if [ "$name" = hbase-base ]; then bin="$SIMDEX_BENCH_BASE_SERVER"; fi
	: >"$work/$name.log"
	bench_serve "$work/$name.log" "$port" "$bin" --addr "127.0.0.1:$port" --log-level warn "$@"
}
hbase_pid="${SIMDEX_HBASE_PID:-}"
load() { # port mode concurrency prefix; also prints the CPU seconds the server and HBase used
	local s0 h0
	s0="$(bench_cpu "$server_pid")"
	h0="$(bench_cpu "$hbase_pid")"
	"$work/loadgen" --addr "127.0.0.1:$1" --mode "$2" --concurrency "$3" --duration "$dur" --id-prefix "$4" --fp-seed "$RANDOM"
	echo "cpu-seconds: server $(awk -v a="$s0" -v b="$(bench_cpu "$server_pid")" 'BEGIN{printf "%.1f", b-a}') hbase-jvm $(awk -v a="$h0" -v b="$(bench_cpu "$hbase_pid")" 'BEGIN{printf "%.1f", b-a}') (over $dur; loadgen runs too)"
}

{
	echo "# N=$n duration=$dur concurrency=$conc HBase at $SIMDEX_HBASE_ZK, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u)"
	"$work/hbsrvload" --store hbase --namespace "$ns" -n "$n"
	"$work/hbsrvload" --store pebble --data-dir "$work/pebble" -n "$n"

	for store in pebble hbase; do
		if [ "$store" = pebble ]; then
			port=$port_p
			args=(--store pebble --data-dir "$work/pebble")
		else
			port=$port_h
			args=(--store hbase --hbase-zk "$SIMDEX_HBASE_ZK" --hbase-namespace "$ns")
		fi
		serve "$store" "$port" "${args[@]}"
		echo "## $store: check by fingerprint"
		load "$port" check-fp "$conc" x
		echo "## $store: insert-if-unique, $conc clients"
		load "$port" insert-if-unique "$conc" "a$store"
		echo "## $store: insert-if-unique, 1 client"
		load "$port" insert-if-unique 1 "b$store"
		bench_stop
		if [ "$store" = hbase ]; then
			serve hbase-nogroup "$port" "${args[@]}" --hbase-insert-group 0
			echo "## hbase, group commit off: insert-if-unique, $conc clients"
			load "$port" insert-if-unique "$conc" c
			echo "## hbase, group commit off: insert-if-unique, 1 client"
			load "$port" insert-if-unique 1 d
			bench_stop
			if [ -n "${SIMDEX_BENCH_BASE_SERVER:-}" ]; then
				serve hbase-base "$port" "${args[@]}"
				echo "## hbase, base server ($SIMDEX_BENCH_BASE_SERVER): insert-if-unique, $conc clients"
				load "$port" insert-if-unique "$conc" e
				echo "## hbase, base server: insert-if-unique, 1 client"
				load "$port" insert-if-unique 1 f
				bench_stop
			fi
		fi
	done
} 2>&1 | tee "$out"
