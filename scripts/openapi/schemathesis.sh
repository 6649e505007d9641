#!/usr/bin/env bash
# Checks that the server does what its OpenAPI document (/openapi.json,
# internal/server/openapi.json) says, with schemathesis against a live
# server and every check it has: documented status codes, content types,
# response headers and schemas; schema-valid requests accepted and
# schema-invalid ones refused; 405 with Allow for undeclared methods; links
# between operations (a stored document can be read and deleted). Any
# finding fails the run.
#
# Installs schemathesis (pinned below) into a virtualenv under
# .cache/schemathesis (git-ignored, kept between runs), builds ./cmd/server,
# starts it on a free loopback port over an embedded store in a temporary
# directory with an API key (sent on every request, so the write endpoints
# are exercised), runs schemathesis with a fixed seed and a bounded number
# of examples per operation (about a minute on two cores), and stops the
# server. schemathesis.toml and hooks.py beside this script say where the
# run departs from schemathesis' defaults, and why.
#
# Environment: SIMDEX_SCHEMATHESIS_EXAMPLES (examples per operation and
# phase, default 150), SIMDEX_SCHEMATHESIS_SEED (default 1),
# SIMDEX_SCHEMATHESIS_WORKERS (default 2). Extra arguments go to
# `schemathesis run` (e.g. --include-path /v1/check).
set -euo pipefail
cd "$(dirname "$0")/../.."

version=4.32.5
cache="$PWD/.cache/schemathesis"
venv="$cache/venv"
examples="${SIMDEX_SCHEMATHESIS_EXAMPLES:-150}"
seed="${SIMDEX_SCHEMATHESIS_SEED:-1}"
workers="${SIMDEX_SCHEMATHESIS_WORKERS:-2}"
api_key="schemathesis-test-key-0123456789"
config="$PWD/scripts/openapi/schemathesis.toml"
hooks="$PWD/scripts/openapi/hooks.py"

if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -qx "schemathesis, version $version"; then
	echo "== schemathesis: installing $version into $venv"
	[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
	"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "schemathesis==$version"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/simdex-schemathesis.XXXXXX")
server_pid=""
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "== schemathesis: building ./cmd/server"
go build -o "$tmp/server" ./cmd/server

# Port 0: the kernel picks a free port, which the server logs when it
# serves. SIMDEX_* variables of the caller must not reach the server.
log="$tmp/server.log"
: >"$log"
env $(env | sed -n 's/^\(SIMDEX_[A-Za-z0-9_]*\)=.*/-u \1/p') \
	"$tmp/server" --addr 127.0.0.1:0 --data-dir "$tmp/data" --api-keys "$api_key" \
	--log-format json --log-level info >/dev/null 2>"$log" &
server_pid=$!
addr=""
for _ in $(seq 1 1800); do # 180 s: the dictionaries load in a few
	if ! kill -0 "$server_pid" 2>/dev/null; then
		echo "== schemathesis: the server exited:" >&2
		tail -n 20 "$log" >&2
		exit 1
	fi
	addr=$(sed -n 's/.*"msg":"serving".*"addr":"\([^"]*\)".*/\1/p' "$log" | head -n 1)
	[ -n "$addr" ] && break
	sleep 0.1
done
if [ -z "$addr" ]; then
	echo "== schemathesis: the server did not start within 180 s:" >&2
	tail -n 20 "$log" >&2
	exit 1
fi
echo "== schemathesis: server at http://$addr"

start=$(date +%s)
status=0
(cd "$tmp" && SCHEMATHESIS_HOOKS="$hooks" "$venv/bin/schemathesis" --config-file "$config" run "http://$addr/openapi.json" \
	--checks all \
	--header "Authorization: Bearer $api_key" \
	--max-examples "$examples" \
	--seed "$seed" \
	--workers "$workers" \
	--generation-database none \
	--request-timeout 30 \
	--no-color \
	"$@") || status=$?
echo "== schemathesis: $(($(date +%s) - start)) s, exit status $status"
if [ "$status" -ne 0 ]; then
	echo "== schemathesis: the server's log (last lines other than requests):" >&2
	grep -v '"msg":"request"' "$log" | tail -n 20 >&2
fi
exit "$status"
