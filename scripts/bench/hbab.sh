#!/usr/bin/env bash
# Interleaved A/B of server settings on HBase: lookups by fingerprint through
# REST, one fresh server per round and setting, settings alternating, so that
# the host's drift (on a 2-core VM one 15 s run's p99 varies by 2x) falls on
# every setting alike.
#
#   scripts/bench/hbab.sh ROUNDS "SETTING" ["SETTING" ...]
#
# A SETTING is "server env|server flags", e.g. "|--hbase-multi-inflight 1" or
# "GOGC=100|". Each round: the server starts on the namespace SIMDEX_BENCH_NS
# (default hbrest1000000, as loaded by hbrest.sh with SIMDEX_BENCH_KEEP=1),
# gets 5 s of warm-up at 16 connections, then DURATION (default 15s) of load:
# an open loop at RATE lookups/s (default 2000; 32 connections) or, with
# RATE=0, a closed loop at CONNS connections (default 16). One line per run:
# the client's rate and latencies, the server's store call and HBase Multi
# RPC histograms, and CPU per lookup of the server, of the JVM whose pid is
# in SIMDEX_HBASE_PID (if set), and of loadgen.
#
# Needs an HBase at SIMDEX_HBASE_ZK. Right after an HBase restart, run a few
# rounds first and drop them: the JIT compiles the read path for minutes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
rounds="${1:?usage: hbab.sh ROUNDS SETTING...}"
shift
[ $# -gt 0 ] || { echo "hbab.sh: give at least one SETTING" >&2; exit 2; }
: "${SIMDEX_HBASE_ZK:?set SIMDEX_HBASE_ZK to the HBase ZooKeeper (host:port)}"
ns="${SIMDEX_BENCH_NS:-hbrest1000000}"
dur="${DURATION:-15s}"
rate="${RATE:-2000}"
if [ "$rate" = 0 ]; then load=(--concurrency "${CONNS:-16}"); else load=(--concurrency 32 --rate "$rate"); fi
port=18591
bin="$(mktemp -d)"
bench_trap
bench_on_exit 'rm -rf "$bin"'
go build -o "$bin/server" ./cmd/server
go build -o "$bin/loadgen" ./scripts/bench/loadgen
for r in $(seq 1 "$rounds"); do
	for setting in "$@"; do
		IFS='|' read -r senv sflags <<<"$setting"
		# shellcheck disable=SC2086 # word splitting of the setting is wanted
		: >"$bin/server.log"
		bench_serve "$bin/server.log" "$port" env $senv "$bin/server" --addr "127.0.0.1:$port" --log-level warn --store hbase \
			--hbase-zk "$SIMDEX_HBASE_ZK" --hbase-namespace "$ns" $sflags ||
			{ echo "hbab.sh: the server [$setting] did not start (port $port taken?)" >&2; exit 1; }
		"$bin/loadgen" --addr "127.0.0.1:$port" --mode check-fp --duration 5s --concurrency 16 >/dev/null
		s0=$(bench_cpu "$server_pid") h0=$(bench_cpu "${SIMDEX_HBASE_PID:-}")
		out="$("$bin/loadgen" --addr "127.0.0.1:$port" --mode check-fp --duration "$dur" "${load[@]}" --fp-seed "$RANDOM")"
		s1=$(bench_cpu "$server_pid") h1=$(bench_cpu "${SIMDEX_HBASE_PID:-}")
		n="$(grep -o 'requests=[0-9]*' <<<"$out" | head -1 | cut -d= -f2)"
		lg="$(grep -o 'loadgen [^(]*([^,]*, [0-9.]* µs/request' <<<"$out" | grep -o '[0-9.]* µs/request' | cut -d' ' -f1)"
		echo "$r [$setting] $(head -1 <<<"$out" | grep -o 'rate=[^ ]* p50=[^ ]* p90=[^ ]* p99=[^ ]* p99.9=[^ ]*')" \
			"| $(grep -o 'store get p50=[^;]*' <<<"$out") | $(grep -o 'HBase Multi p50=.*' <<<"$out")" \
			"| CPU µs per lookup: server $(bench_per_us "$s0" "$s1" "$n") HBase $(bench_per_us "$h0" "$h1" "$n") loadgen ${lg:-?}"
		bench_stop
	done
done
