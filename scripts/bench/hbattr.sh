#!/usr/bin/env bash
# HBase CPU per request by variant: for measuring what an index-family
# attribute (or a read layout, or a server build) costs HBase, with
# namespaces created by scripts/bench/hbattr and loaded by
# scripts/bench/hbsrvload --index-only. Runs the REST server on each variant
# in turn, ROUNDS times round-robin (alternating, so a change in the
# machine's load hits every variant alike), drives loadgen (CONNS
# connections, DURATION each; mode SIMDEX_BENCH_MODE, default check-fp, or
# insert-if-unique with new ids per run) and prints per run: requests/s,
# p50/p99, and µs of CPU per request of the server, the HBase JVM and its
# RPC handler threads. SIMDEX_BENCH_LOADGEN_ARGS adds loadgen arguments
# (e.g. "--rate 2000" for an open loop at 2,000 requests/s, CONNS then
# being the most requests outstanding).
#
# A variant is a namespace, or NAMESPACE,SERVER-BINARY to run another build
# of cmd/server (e.g. the base commit's) on it.
#
#   SIMDEX_HBASE_ZK=127.0.0.1:23281 SIMDEX_HBASE_PID=<jvm pid> \
#     scripts/bench/hbattr.sh "v0 v1 v2" [ROUNDS=3] [DURATION=10s] [CONNS=16]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
nss="$1"
rounds="${2:-3}"
dur="${3:-10s}"
conns="${4:-16}"
: "${SIMDEX_HBASE_ZK:?set SIMDEX_HBASE_ZK}"
: "${SIMDEX_HBASE_PID:?set SIMDEX_HBASE_PID to the HBase JVM pid}"
bin="$(mktemp -d)"
port=18691
bench_trap
bench_on_exit 'rm -rf "$bin"'
go build -o "$bin/server" ./cmd/server
go build -o "$bin/loadgen" ./scripts/bench/loadgen
handler_cpu() { # CPU seconds of the RPC handler threads of the JVM (comm "RpcServer.default.FPBQ.Fifo.handler=N", cut to 15 bytes)
	for t in /proc/"$1"/task/*; do
		case "$(cat "$t/comm" 2>/dev/null)" in RpcServer.defau*) awk '{print $14+$15}' "$t/stat" 2>/dev/null ;; esac
	done | awk -v hz="$(getconf CLK_TCK)" '{s+=$1} END {printf "%.2f\n", s/hz}'
}
mode="${SIMDEX_BENCH_MODE:-check-fp}"
for r in $(seq 1 "$rounds"); do
	for v in $nss; do
		ns="${v%%,*}"
		server="$bin/server"
		label="$ns"
		if [ "$v" != "$ns" ]; then
			server="${v#*,}"
			label="$ns,$(basename "$server")"
		fi
		: >"$bin/server.log"
		bench_serve "$bin/server.log" "$port" "$server" --addr "127.0.0.1:$port" --log-level warn --store hbase --hbase-zk "$SIMDEX_HBASE_ZK" --hbase-namespace "$ns"
		"$bin/loadgen" --addr "127.0.0.1:$port" --mode "$mode" --duration 3s --concurrency 4 --id-prefix "w$r-$RANDOM-" >/dev/null
		s0="$(bench_cpu "$server_pid")" h0="$(bench_cpu "$SIMDEX_HBASE_PID")" k0="$(handler_cpu "$SIMDEX_HBASE_PID")"
		# shellcheck disable=SC2086 # word splitting of the extra arguments is wanted
		"$bin/loadgen" --addr "127.0.0.1:$port" --mode "$mode" --duration "$dur" --concurrency "$conns" --fp-seed "$RANDOM" --id-prefix "m$r-$RANDOM-" ${SIMDEX_BENCH_LOADGEN_ARGS:-} >"$bin/lg.txt"
		s1="$(bench_cpu "$server_pid")" h1="$(bench_cpu "$SIMDEX_HBASE_PID")" k1="$(handler_cpu "$SIMDEX_HBASE_PID")"
		n="$(sed -n 's/.*requests=\([0-9]*\).*/\1/p' "$bin/lg.txt")"
		awk -v ns="$label" -v r="$r" -v n="$n" -v s0="$s0" -v s1="$s1" -v h0="$h0" -v h1="$h1" -v k0="$k0" -v k1="$k1" \
			-v line="$(head -n 1 "$bin/lg.txt")" -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
			printf "round %d %-8s %s | cpu µs/request: server %.0f, hbase %.0f (handlers %.0f) | load %s\n", r, ns, line, (s1-s0)/n*1e6, (h1-h0)/n*1e6, (k1-k0)/n*1e6, load }'
		grep -m1 '^first error' "$bin/lg.txt" || true
		bench_stop
	done
done
