# shellcheck shell=bash
# Helpers shared by the scripts/bench/*.sh scripts; source it, do not run it:
#
#   . "$(dirname "$0")/lib.sh"
#
# bench_serve starts a server in the background and waits for its /readyz;
# bench_stop stops it; bench_cleanup (the EXIT trap bench_trap installs)
# stops every server still running and then runs the commands given to
# bench_on_exit; bench_cpu reads a process's CPU time in seconds.
# bench_hbase, bench_build and bench_out take the repository's root as the
# working directory.

bench_pids=()
bench_exit_cmds=()

# bench_trap installs bench_cleanup as the EXIT trap.
bench_trap() { trap bench_cleanup EXIT; }

# bench_on_exit CMD: run CMD (with eval) on exit, after the servers are
# stopped, in the order given.
bench_on_exit() { bench_exit_cmds+=("$1"); }

bench_cleanup() {
	local p c
	for p in "${bench_pids[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	bench_pids=()
	for c in "${bench_exit_cmds[@]}"; do eval "$c" || true; done
}

# bench_wait_ready PORT [SECONDS] [PID]: wait until http://127.0.0.1:PORT/readyz
# answers 2xx, polling every 0.2 s for at most SECONDS (default 120); fails
# earlier when PID is given and has exited.
bench_wait_ready() {
	local port="$1" secs="${2:-120}" pid="${3:-}" i
	for ((i = 0; i < secs * 5; i++)); do
		curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && return 0
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then return 1; fi
		sleep 0.2
	done
	return 1
}

# bench_serve LOG PORT CMD...: start CMD in the background, its stdout and
# stderr appended to LOG, and wait for its /readyz on 127.0.0.1:PORT. Sets
# server_pid; on failure prints LOG to stderr and returns 1.
bench_serve() {
	local log="$1" port="$2"
	shift 2
	"$@" >>"$log" 2>&1 &
	server_pid=$!
	bench_pids+=("$server_pid")
	if ! bench_wait_ready "$port" 120 "$server_pid"; then
		echo "${0##*/}: the server on port $port did not get ready:" >&2
		cat "$log" >&2
		return 1
	fi
}

# bench_stop [PID]: stop PID (default server_pid) and wait for it.
bench_stop() {
	local p="${1:-$server_pid}" i
	[ -n "$p" ] || return 0
	kill "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
	for i in "${!bench_pids[@]}"; do
		[ "${bench_pids[$i]}" = "$p" ] && unset 'bench_pids[i]'
	done
	if [ "$p" = "${server_pid:-}" ]; then server_pid=""; fi
}

# bench_cpu PID: the user+system CPU seconds PID has used so far (two
# decimals), 0 when PID is empty or gone.
bench_cpu() {
	if [ -n "${1:-}" ] && [ -r "/proc/$1/stat" ]; then
		awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f\n", ($14+$15)/hz}' "/proc/$1/stat"
	else
		echo 0
	fi
}

# bench_per_us CPU0 CPU1 N: microseconds of CPU per operation between two
# bench_cpu readings over N operations, rounded.
bench_per_us() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { if (n > 0) printf "%.0f\n", (b-a)/n*1e6; else print "?" }'; }

# bench_hbase: export SIMDEX_HBASE_ZK, the HBase to measure: the one it
# names, else scripts/hbase/start.sh's (started and left running; stop it
# with scripts/hbase/stop.sh). Returns 0 when it named one, 1 when
# start.sh's was started.
bench_hbase() {
	local rc=0
	if [ -z "${SIMDEX_HBASE_ZK:-}" ]; then
		SIMDEX_HBASE_ZK="$(scripts/hbase/start.sh | tail -n 1)"
		rc=1
	fi
	export SIMDEX_HBASE_ZK
	return "$rc"
}

# bench_build DIR PACKAGE...: go build each package (a path from the
# repository's root) into DIR, named as its last element.
bench_build() {
	local dir="$1" p
	shift
	for p in "$@"; do go build -o "$dir/${p##*/}" "./$p"; done
}

# bench_out NAME: set out to scripts/bench/out/NAME-<UTC time>.txt
# (gitignored), the file the run's output also goes to, and make its
# directory.
bench_out() {
	mkdir -p scripts/bench/out
	out="scripts/bench/out/$1-$(date -u +%Y%m%dT%H%M%SZ).txt"
}
