#!/usr/bin/env bash
# Stops the HBase that start.sh started on the same data directory: SIGTERM,
# wait up to SIMDEX_HBASE_STOP_TIMEOUT seconds (default 40; a clean stop takes
# ~26 s), then SIGKILL. SIMDEX_HBASE_STOP_KILL=1 skips straight to SIGKILL
# (for test instances whose data is thrown away; HBase recovers acknowledged
# writes from its WAL after a kill). Does nothing if it is not running.
# SIMDEX_HBASE_HOME, SIMDEX_HBASE_VERSION and SIMDEX_HBASE_DATA name the
# instance as for start.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
home="${SIMDEX_HBASE_HOME:-$repo/.hbase}"
# shellcheck source=version.sh
. "$here/version.sh"
# shellcheck source=common.sh
. "$here/common.sh" # signal_wait
data="${SIMDEX_HBASE_DATA:-$(default_data)}"
pid_file="$data/hbase.pid"
timeout="${SIMDEX_HBASE_STOP_TIMEOUT:-40}"

if [ ! -s "$pid_file" ]; then
	echo "stop.sh: no pid file at $pid_file; nothing to stop" >&2
	exit 0
fi
pid="$(cat "$pid_file")"
if ! kill -0 "$pid" 2>/dev/null; then
	echo "stop.sh: pid $pid is not running" >&2
	rm -f "$pid_file"
	exit 0
fi
if [ "${SIMDEX_HBASE_STOP_KILL:-0}" = 1 ]; then
	kill -KILL "$pid" 2>/dev/null || true
else
	if ! signal_wait "$pid" TERM "$timeout"; then
		echo "stop.sh: pid $pid still up after ${timeout}s; SIGKILL" >&2
		kill -KILL "$pid" 2>/dev/null || true
	fi
fi
for _ in $(seq 1 50); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.2
done
rm -f "$pid_file"
echo "stop.sh: HBase (pid $pid) stopped" >&2
