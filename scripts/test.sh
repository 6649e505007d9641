#!/usr/bin/env bash
# The whole simdex test suite: formatting, vet, the Prometheus alerting rules,
# and every test under the race detector. It installs what the tests need (Go
# modules; Apache HBase through scripts/hbase/; promtool through
# scripts/prometheus/) and starts what they talk to.
#
# HBase: unless SIMDEX_HBASE_ZK already names a running HBase (host:port of its
# ZooKeeper), this installs and starts a throwaway standalone HBase when java
# and mvn are on PATH, exports SIMDEX_HBASE_ZK for the tests, and kills it on
# exit. Under CI (CI=true) a missing Java/Maven or a failed start fails the
# run; elsewhere the HBase tests then skip with a message. SIMDEX_HBASE=off
# skips HBase outside CI.
set -euo pipefail
cd "$(dirname "$0")/.."

# missing STEP WHAT: the step needs WHAT, which is not here: under CI that
# fails the run, elsewhere the step skips.
missing() {
	if [ "${CI:-}" = true ]; then
		echo "== $1: CI=true but $2 is missing" >&2
		exit 1
	fi
	echo "== $1: $2 missing; skipped"
}

echo "== go modules"
go mod download

# The test instance has its own data dir (wiped each run) and ports, so it
# collides neither with scripts/hbase/start.sh's defaults nor a user's HBase.
hbase_log=""
if [ -z "${SIMDEX_HBASE_ZK:-}" ]; then
	if [ "${CI:-}" != true ] && [ "${SIMDEX_HBASE:-}" = off ]; then
		echo "== hbase: off (SIMDEX_HBASE=off); HBase tests will skip"
	elif command -v java >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; then
		export SIMDEX_HBASE_HOME="${SIMDEX_HBASE_HOME:-$PWD/.hbase}"
		export SIMDEX_HBASE_DATA="$SIMDEX_HBASE_HOME/test-data"
		export SIMDEX_HBASE_ZK_PORT="${SIMDEX_HBASE_TEST_ZK_PORT:-22281}"
		export SIMDEX_HBASE_MASTER_PORT="${SIMDEX_HBASE_TEST_MASTER_PORT:-26100}"
		export SIMDEX_HBASE_RS_PORT="${SIMDEX_HBASE_TEST_RS_PORT:-26120}"
		SIMDEX_HBASE_STOP_KILL=1 scripts/hbase/stop.sh 2>/dev/null || true
		rm -rf "$SIMDEX_HBASE_DATA"
		mkdir -p "$SIMDEX_HBASE_HOME"
		hbase_log="$SIMDEX_HBASE_HOME/test-start.log"
		echo "== hbase: installing and starting in the background (log $hbase_log)"
		# Started now so the JVM boots while gofmt, vet and the test
		# binaries build; waited for just before go test.
		scripts/hbase/start.sh >"$hbase_log" 2>&1 &
		hbase_start_job=$!
		# On any exit: let a start still under way finish (it is bounded
		# by its own timeout) so no JVM outlives us, then kill HBase.
		trap 'wait "$hbase_start_job" 2>/dev/null || true; SIMDEX_HBASE_STOP_KILL=1 scripts/hbase/stop.sh || true' EXIT
	elif [ "${CI:-}" = true ]; then
		echo "== hbase: CI=true but java or mvn is missing; the HBase tests cannot run" >&2
		exit 1
	else
		echo "== hbase: java or mvn missing; HBase tests will skip"
	fi
fi

# Chromium for the browser test of the editor's page (internal/server,
# TestEditorPageInChromium): Debian's chromium, and a Chinese font for the
# page's Chinese text, installed with apt-get when missing (as root, or with
# sudo that needs no password). SIMDEX_BROWSER_TEST=require makes that test
# fail, not skip, without a browser: it is set when Chromium is there, and
# always under CI.
echo "== chromium"
if ! command -v chromium >/dev/null 2>&1 || ! { fc-list :lang=zh 2>/dev/null | grep -q .; }; then
	apt_get=()
	if command -v apt-get >/dev/null 2>&1; then
		if [ "$(id -u)" = 0 ]; then
			apt_get=(env DEBIAN_FRONTEND=noninteractive apt-get)
		elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
			apt_get=(sudo -n env DEBIAN_FRONTEND=noninteractive apt-get)
		fi
	fi
	if [ ${#apt_get[@]} -gt 0 ]; then
		echo "== chromium: installing Debian's chromium and fonts-wqy-zenhei"
		{ "${apt_get[@]}" update -qq && "${apt_get[@]}" install -y -qq chromium fonts-wqy-zenhei; } >/dev/null ||
			echo "== chromium: apt-get install failed" >&2
	fi
fi
if command -v chromium >/dev/null 2>&1; then
	export SIMDEX_BROWSER_TEST=require
	echo "== chromium: $(chromium --version 2>/dev/null || echo installed)"
elif [ "${CI:-}" = true ]; then
	export SIMDEX_BROWSER_TEST=require
	echo "== chromium: missing under CI; the browser test will fail" >&2
else
	echo "== chromium: missing and not installable here; the browser test will skip"
fi

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi

echo "== go vet"
go vet ./...

# The alerting rules operators load (deploy/prometheus/): promtool's own
# checks and the rules' unit tests. Installs promtool (Debian's prometheus
# package, its daemon not started) when it is missing; see the script.
echo "== prometheus rules"
scripts/prometheus/check-rules.sh

if [ -n "$hbase_log" ]; then
	go test -race -count=1 -run '^$' ./... >/dev/null # build test binaries while HBase boots
	echo "== hbase: waiting for it to serve"
	if wait "$hbase_start_job"; then
		export SIMDEX_HBASE_ZK="$(tail -n 1 "$hbase_log")"
		echo "== hbase: serving at $SIMDEX_HBASE_ZK"
	else
		cat "$hbase_log" >&2
		if [ "${CI:-}" = true ]; then
			echo "== hbase: failed to start under CI" >&2
			exit 1
		fi
		echo "== hbase: failed to start; HBase tests will skip" >&2
	fi
fi

echo "== go test -race"
go test -race -count=1 -timeout 30m ./... "$@"

# ---- Secured HBase ------------------------------------------------------
# scripts/hbase/secure.sh starts a second, throwaway HBase that requires
# Kerberos (offering privacy, integrity and authentication, so that the client
# is tested with each) and TLS, with a local MIT KDC (krb5-kdc, installed with
# apt-get as root when missing) and a CA of its own, on ports 24100-24288
# apart from the suite's HBase; its ZooKeeper requires SASL too, and HBase
# checks permissions (the AccessController, one principal granted nothing). The secured
# tests (TestSecure*: the client's round trips, error cases, ticket renewal,
# ZooKeeper SASL, Java peer and bulk load; the store contract suite; the
# server end to end; simdexctl schema; cmd/bulkload's HFile import) run
# against it, with the suite's plain HBase for the mismatch cases, and fail
# rather than skip here. 4.5 to 5.5 minutes on a shared 2-core machine (start
# 30-50 s, tests under -race).
# Needs the HBase install; SIMDEX_SECURE=off skips it outside CI.
echo "== secured hbase (scripts/hbase/secure.sh)"
if [ "${CI:-}" != true ] && [ "${SIMDEX_SECURE:-}" = off ]; then
	echo "== secured hbase: off (SIMDEX_SECURE=off)"
elif [ -n "$hbase_log" ] || [ "${CI:-}" = true ]; then
	(
		export SIMDEX_HBASE_SECURE_DIR="${SIMDEX_HBASE_HOME:-$PWD/.hbase}/secure-test-data"
		export SIMDEX_HBASE_ZK_PORT=24281 SIMDEX_HBASE_MASTER_PORT=24100 SIMDEX_HBASE_RS_PORT=24120
		export SIMDEX_HBASE_KDC_PORT=24188 SIMDEX_HBASE_SHORT_LIFE=20
		export SIMDEX_HBASE_RPC_PROTECTION=privacy,integrity,authentication
		mkdir -p "$(dirname "$SIMDEX_HBASE_SECURE_DIR")"
		trap 'scripts/hbase/secure.sh stop >/dev/null 2>&1 || true' EXIT
		if ! scripts/hbase/secure.sh start >"$SIMDEX_HBASE_SECURE_DIR.log" 2>&1; then
			cat "$SIMDEX_HBASE_SECURE_DIR.log" >&2
			echo "== secured hbase: failed to start" >&2
			exit 1
		fi
		# shellcheck disable=SC1091 # written by secure.sh
		. "$SIMDEX_HBASE_SECURE_DIR/secure.env"
		SIMDEX_SECURE_REQUIRED=1 go test -race -count=1 -timeout 15m -run 'TestSecure' \
			./hbase/ ./storage/hbasestore/ ./internal/server/ ./internal/ctl/ ./internal/bulkload/
	)
else
	echo "== secured hbase: no HBase install; skipped"
fi

# ---- HBase cluster chaos -------------------------------------------------
# scripts/hbase/chaos.sh starts a throwaway multi-process HBase on HDFS
# (scripts/hbase/cluster.sh: NameNode, DataNode, ZooKeeper, an active and a
# backup master, three region servers; ports 23500-23700, data wiped in
# .hbase/cluster-test-data) and runs internal/chaos's region-server kill and
# region moves under insert-if-unique and check traffic from two servers; it
# fails rather than skips here. About five minutes on a shared 2-core machine
# (4 min 46 s, the cluster's start 50 s of it). Then the region-server kill
# again on an index whose writers take turns (--hbase-writer-lease; about two
# minutes more). The other events (split and merge, rolling restart, master
# kill) run with scripts/hbase/chaos.sh alone. Needs the HBase install;
# SIMDEX_CHAOS=off skips it outside CI.
echo "== hbase cluster chaos (scripts/hbase/chaos.sh: rs-kill, move; rs-kill with the writer lease)"
if [ "${CI:-}" != true ] && [ "${SIMDEX_CHAOS:-}" = off ]; then
	echo "== hbase cluster chaos: off (SIMDEX_CHAOS=off)"
elif [ -n "$hbase_log" ] || [ "${CI:-}" = true ]; then
	SIMDEX_CHAOS_EVENTS=rs-kill,move scripts/hbase/chaos.sh
	SIMDEX_CHAOS_WRITER_LEASE=1 SIMDEX_CHAOS_EVENTS=rs-kill scripts/hbase/chaos.sh
else
	echo "== hbase cluster chaos: no HBase install; skipped"
fi

# Single-goroutine oracle tests at full size are skipped under -race (it only
# slows them tenfold); run them natively.
echo "== go test (exactness against brute force, no -race)"
go test -count=1 -timeout 20m -run 'TestExactnessAgainstBruteForce' ./kvindex/ "$@"

# The Python client (clients/python) against the real server: installed with
# pip into a virtualenv under .cache/ (git-ignored, kept between runs), its
# tests run with unittest on a server built from ./cmd/server. Without
# python3 (or its venv module) this step skips, except under CI.
echo "== python client"
py_cache="$PWD/.cache/python-client"
if python3 -c 'import venv, ensurepip' 2>/dev/null; then
	[ -x "$py_cache/venv/bin/python" ] || python3 -m venv "$py_cache/venv"
	"$py_cache/venv/bin/python" -m pip install --quiet --disable-pip-version-check ./clients/python
	go build -o "$py_cache/server" ./cmd/server
	(cd clients/python && SIMDEX_SERVER_BIN="$py_cache/server" "$py_cache/venv/bin/python" -m unittest discover -s tests -t .)
else
	missing "python client" "python3 with venv"
fi

# ---- OpenAPI contract ---------------------------------------------------
# scripts/openapi/schemathesis.sh runs schemathesis (installed into a
# virtualenv under .cache/, git-ignored, kept between runs) against a server
# built from ./cmd/server: any difference between /openapi.json and what the
# server does fails the run (about a minute). Without python3 (or its venv
# module) this step skips, except under CI.
echo "== openapi contract (scripts/openapi/schemathesis.sh)"
if python3 -c 'import venv, ensurepip' 2>/dev/null; then
	scripts/openapi/schemathesis.sh
else
	missing "openapi contract" "python3 with venv"
fi

# ---- Spark backfill -----------------------------------------------------
# scripts/spark/test.sh runs the Spark job (spark/) on a local master and
# compares the index it builds with cmd/bulkload's, cell for cell, with task
# failures retried: on the embedded store and on the suite's HBase
# (SIMDEX_HBASE_ZK, still running here), into empty and non-empty indexes;
# then the batch self-dedup against its reference. About 10 minutes on a
# shared 2-core machine. It needs java and python3 (it installs PySpark into
# .spark/ itself). Under CI a missing one fails the run; elsewhere the step
# then skips, and SIMDEX_SPARK=off skips it.
echo "== spark backfill (scripts/spark/test.sh)"
if [ "${CI:-}" != true ] && [ "${SIMDEX_SPARK:-}" = off ]; then
	echo "== spark: off (SIMDEX_SPARK=off)"
elif command -v java >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
	scripts/spark/test.sh
else
	missing "spark" "java or python3"
fi
