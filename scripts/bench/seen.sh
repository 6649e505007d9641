#!/usr/bin/env bash
# Per-user seen sets (package seen) on the embedded store against Redis
# holding the same data as one set per user, in the same run
# (scripts/bench/internal/seenbench says what is measured).
#
#   scripts/bench/seen.sh [USERS] [ITEMS] [QUERIES] [ROUNDS]   (defaults 100000 1000 4000 5)
#
# ROUNDS interleaves the REST forms, the net/http floor and Redis that many
# times and also reports each one's percentiles pooled over the rounds: on
# a shared 2-core VM one round's p99 moves by +-15% from round to round.
#
# Installs Debian's redis-server with apt-get when it is missing, starts it
# on 127.0.0.1 with a throwaway directory and port (no persistence), and
# stops it at the end. Output also goes to scripts/bench/out/seen-<time>.txt
# (gitignored). Needs ~8 GB of free memory at the default size (Redis holds
# 10^8 set members).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
users="${1:-100000}"
items="${2:-1000}"
queries="${3:-4000}"
rounds="${4:-5}"
if ! command -v redis-server >/dev/null 2>&1; then
	echo "seen.sh: installing redis-server (apt-get)" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server >&2
fi
tmp="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
redis-server --bind 127.0.0.1 --port "$port" --dir "$tmp" --save '' --appendonly no --daemonize yes \
	--pidfile "$tmp/redis.pid" --logfile "$tmp/redis.log"
bench_trap
bench_on_exit 'redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1 || kill "$(cat "$tmp/redis.pid")" 2>/dev/null || true'
bench_on_exit 'rm -rf "$tmp"'
for _ in $(seq 50); do
	redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && break
	sleep 0.1
done
mkdir -p scripts/bench/out
out="scripts/bench/out/seen-$(date -u +%Y%m%dT%H%M%SZ).txt"
{
	echo "# $(nproc) cores, $(redis-server --version)"
	go run ./scripts/bench/seen -redis "127.0.0.1:$port" -users "$users" -items "$items" -queries "$queries" -rounds "$rounds" -rest-forms full,kept,indexes,check,floor
} 2>&1 | tee "$out"
