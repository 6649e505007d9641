#!/usr/bin/env bash
# Runs simdex's HBase test suites and a short lookup benchmark against each
# HBase version of version.sh, one version at a time, and writes the table
# (version x suite: pass, FAIL or why it did not run; lookup p99) into
# docs/OPERATIONS.md between its hbase-matrix markers.
#
#   scripts/hbase/matrix.sh [VERSION...]   (default: 2.5.11 2.6.4 3.0.0 3.0.0-alpha-4)
#
# Per version: install.sh (a failure fills the row with its reason), a fresh
# standalone HBase through start.sh on the matrix's own ports and data dir,
# then
#   client    go test ./hbase/... (simdex's HBase client against the live
#             server and the Java reference peer, Peer.java compiled against
#             the same version; the HFile tests read simdex's HFiles with that
#             version's HFile tool)
#   contract  go test ./storage/hbasestore/ (storage/storetest's contract
#             suite on HBase, the index and the lease locker)
#   server    go test -run HBase ./internal/server/ (the REST service end to
#             end on HBase, two servers racing on one namespace)
#   faults    the tests that start, kill and restart an HBase of their own
#             (hbase TestRestartUnderTraffic, internal/server TestHBaseFaults),
#             run after the shared instance stops, on the same ports
#             (SIMDEX_HBASE_PRIVATE_PORTS)
#   secured   the same version secured by scripts/hbase/secure.sh (Kerberos
#             with privacy, ZooKeeper by SASL, authorization with a principal
#             that is no superuser; TLS where the version has RPC TLS, from
#             2.6 on) on the matrix's secured ports: every TestSecure test of
#             the client, the store, the server, simdexctl and the bulk loader
#   lookup    storage/hbasestore's BenchmarkStoreLookup (scripts/bench/hbstore.sh's
#             lookups, short): p99 of single-goroutine lookups (k=3) on an
#             index of MATRIX_N random fingerprints, HBase and, in the same
#             run, the embedded store as the machine's reference
#
# Tests run without -race (SIMDEX_MATRIX_TEST_FLAGS adds flags, e.g. -race):
# the matrix checks what each version does on the wire; scripts/test.sh runs
# everything under -race against the default.
#
# Env:
#   SIMDEX_HBASE_HOME          install dir (<repo>/.hbase)
#   SIMDEX_MATRIX_ZK_PORT      ZooKeeper port         (22681)
#   SIMDEX_MATRIX_MASTER_PORT  master RPC port        (26600)
#   SIMDEX_MATRIX_RS_PORT      region server RPC port (26620)
#   SIMDEX_MATRIX_SECURE_PORTS the secured HBase's ZooKeeper, master, region
#                              server and KDC ports (22781,26700,26720,26788)
#   SIMDEX_MATRIX_N            fingerprints in the lookup benchmark's index (100000)
#   SIMDEX_MATRIX_OPS          lookups measured per store (2000)
#   SIMDEX_MATRIX_TEST_FLAGS   extra go test flags (none)
#   SIMDEX_MATRIX_DOC          the file the table goes into (docs/OPERATIONS.md)
# Data: $SIMDEX_HBASE_HOME/matrix-<version>-data (wiped before each start);
# logs: $SIMDEX_HBASE_HOME/matrix-logs/<version>/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"
export SIMDEX_HBASE_HOME="${SIMDEX_HBASE_HOME:-$repo/.hbase}"
zk_port="${SIMDEX_MATRIX_ZK_PORT:-22681}"
master_port="${SIMDEX_MATRIX_MASTER_PORT:-26600}"
rs_port="${SIMDEX_MATRIX_RS_PORT:-26620}"
IFS=, read -r sec_zk_port sec_master_port sec_rs_port sec_kdc_port <<<"${SIMDEX_MATRIX_SECURE_PORTS:-22781,26700,26720,26788}"
bench_n="${SIMDEX_MATRIX_N:-100000}"
bench_ops="${SIMDEX_MATRIX_OPS:-2000}"
doc="${SIMDEX_MATRIX_DOC:-$repo/docs/OPERATIONS.md}"
# shellcheck disable=SC2206 # the flags are words
test_flags=(${SIMDEX_MATRIX_TEST_FLAGS:-})
versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then
	versions=(2.5.11 2.6.4 3.0.0 3.0.0-alpha-4)
fi
# As under CI, a test that finds no HBase (or no installed HBase for its
# peer or HFile tool) fails instead of skipping: a pass means it ran. The
# secured-HBase tests skip, as they do without scripts/hbase/secure.sh.
export CI=true
grep -q '<!-- hbase-matrix:begin -->' "$doc" && grep -q '<!-- hbase-matrix:end -->' "$doc" ||
	{ echo "matrix.sh: $doc has no hbase-matrix markers" >&2; exit 1; }

# instance_env VERSION: the environment of the matrix's HBase for VERSION.
instance_env() {
	export SIMDEX_HBASE_VERSION="$1"
	export SIMDEX_HBASE_DATA="$SIMDEX_HBASE_HOME/matrix-$1-data"
	export SIMDEX_HBASE_ZK_PORT="$zk_port" SIMDEX_HBASE_MASTER_PORT="$master_port" SIMDEX_HBASE_RS_PORT="$rs_port"
}

stop_instance() {
	SIMDEX_HBASE_STOP_KILL=1 "$here/stop.sh" >/dev/null 2>&1 || true
}
secure_dir() { echo "$SIMDEX_HBASE_HOME/matrix-$1-secure"; }
stop_secure() {
	[ -n "${SIMDEX_HBASE_VERSION:-}" ] || return 0
	SIMDEX_HBASE_SECURE_DIR="$(secure_dir "$SIMDEX_HBASE_VERSION")" "$here/secure.sh" stop >/dev/null 2>&1 || true
}
trap 'stop_instance; stop_secure' EXIT

# secured VERSION LOGS: "pass (Kerberos, TLS)", "FAIL (...)" or why it did
# not run, for the version secured by secure.sh on the matrix's secured
# ports; the output in LOGS/secured.log.
secured() {
	local v="$1" logs="$2" dir
	dir="$(secure_dir "$v")"
	if ! SIMDEX_HBASE_SECURE_DIR="$dir" SIMDEX_HBASE_ZK_PORT="$sec_zk_port" SIMDEX_HBASE_MASTER_PORT="$sec_master_port" \
		SIMDEX_HBASE_RS_PORT="$sec_rs_port" SIMDEX_HBASE_KDC_PORT="$sec_kdc_port" SIMDEX_HBASE_SHORT_LIFE=20 \
		"$here/secure.sh" start >"$logs/secure-start.log" 2>&1; then
		echo "secured HBase did not start (secure-start.log)"
		return
	fi
	local what="Kerberos, TLS"
	grep -q 'SIMDEX_SECURE_TLS=0' "$dir/secure.env" && what="Kerberos; $v has no RPC TLS"
	local r
	r="$(run_suite "$logs/secured.log" bash -c '. "$1/secure.env"; shift; SIMDEX_SECURE_REQUIRED=1 "$@"' _ "$dir" \
		go test -count=1 "${test_flags[@]}" -run TestSecure ./hbase/ ./storage/hbasestore/ ./internal/server/ ./internal/ctl/ ./internal/bulkload/)"
	stop_secure
	echo "$r ($what)"
}

# A port in use would not fail a start (HBase's ZooKeeper takes the next
# one), and the tests would then talk to somebody else's HBase.
ports_free() {
	local p
	for p in "$zk_port" "$master_port" "$rs_port"; do
		if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "matrix.sh: port $p is in use" >&2
			return 1
		fi
	done
}

# run_suite LOG CMD...: "pass" or "FAIL" on stdout, the output in LOG.
run_suite() {
	local log="$1"
	shift
	if "$@" >"$log" 2>&1; then
		echo pass
	else
		echo FAIL
	fi
}

# p99 SUB LOG: the p99 in ms of BenchmarkStoreLookup's sub-benchmark SUB.
p99() {
	awk -v sub_="store=$1/" '$1 ~ "^BenchmarkStoreLookup/" sub_ {
		for (i = 2; i < NF; i++) if ($(i + 1) == "p99-µs") { printf "%.2f ms", $i / 1000; exit }
	}' "$2"
}

rows=()
for v in "${versions[@]}"; do
	logs="$SIMDEX_HBASE_HOME/matrix-logs/$v"
	rm -rf "$logs"
	mkdir -p "$logs"
	instance_env "$v"
	echo "== HBase $v (logs $logs)" >&2
	if ! "$here/install.sh" >"$logs/install.log" 2>&1; then
		# Maven's own words: the first artifact Maven Central does not have.
		why="$(grep -oE '(Could not find artifact|could not be resolved:) [^ ]+|[^ ]+ was not found in' "$logs/install.log" |
			head -n 1 | sed -E 's/^(Could not find artifact|could not be resolved:) //; s/ was not found in$//; s/,$//')" || true
		if [ -n "$why" ]; then
			why="not installable: Maven Central has no \`$why\` (install.log)"
		else
			why="install.sh failed (install.log)"
		fi
		rows+=("| $v | $why | | | | | |")
		echo "   $why" >&2
		continue
	fi
	stop_instance
	ports_free
	rm -rf "$SIMDEX_HBASE_DATA"
	if ! zk="$("$here/start.sh" 2>"$logs/start.log" | tail -n 1)"; then
		rows+=("| $v | HBase did not start (start.sh) | | | | | |")
		echo "   did not start; see $logs/start.log" >&2
		continue
	fi
	export SIMDEX_HBASE_ZK="$zk"
	client="$(run_suite "$logs/client.log" go test -count=1 "${test_flags[@]}" -skip 'TestRestartUnderTraffic' ./hbase/...)"
	echo "   client $client" >&2
	contract="$(run_suite "$logs/contract.log" go test -count=1 "${test_flags[@]}" ./storage/hbasestore/)"
	echo "   contract $contract" >&2
	server="$(run_suite "$logs/server.log" go test -count=1 "${test_flags[@]}" -run HBase -skip 'TestHBaseFaults' ./internal/server/)"
	echo "   server $server" >&2
	go test -count=1 -run '^$' -bench 'BenchmarkStoreLookup$' -benchtime "${bench_ops}x" -timeout 30m \
		./storage/hbasestore/ -args -hbstore.n="$bench_n" >"$logs/lookup.log" 2>&1 || true
	lookup_hbase="$(p99 hbase "$logs/lookup.log")"
	lookup_pebble="$(p99 pebble "$logs/lookup.log")"
	echo "   lookup p99 ${lookup_hbase:-none} (embedded ${lookup_pebble:-none})" >&2
	stop_instance
	unset SIMDEX_HBASE_ZK
	# The private instances take the matrix's ports, one package at a
	# time; SIMDEX_HBASE_ZK only tells the tests that HBase tests run.
	faults=pass
	for t in 'TestRestartUnderTraffic ./hbase/' 'TestHBaseFaults ./internal/server/'; do
		read -r name pkg <<<"$t"
		r="$(run_suite "$logs/faults-$name.log" env SIMDEX_HBASE_ZK="127.0.0.1:$zk_port" \
			SIMDEX_HBASE_PRIVATE_PORTS="$zk_port,$master_port,$rs_port" \
			go test -count=1 "${test_flags[@]}" -run "^$name\$" "$pkg")"
		[ "$r" = pass ] || faults=FAIL
	done
	echo "   faults $faults" >&2
	sec="$(secured "$v" "$logs")"
	echo "   secured $sec" >&2
	rows+=("| $v | $client | $contract | $server | $faults | $sec | ${lookup_hbase:-none} (embedded ${lookup_pebble:-none}) |")
done

table="$(mktemp)"
{
	echo '<!-- hbase-matrix:begin -->'
	echo "| HBase | client | contract | server | faults | secured | lookup p99 (n=$bench_n, $bench_ops lookups) |"
	echo '|---|---|---|---|---|---|---|'
	printf '%s\n' "${rows[@]}"
	echo '<!-- hbase-matrix:end -->'
} >"$table"
awk -v table="$table" '
	/<!-- hbase-matrix:begin -->/ { while ((getline line < table) > 0) print line; skip = 1; next }
	/<!-- hbase-matrix:end -->/ { skip = 0; next }
	!skip { print }
' "$doc" >"$doc.tmp"
mv "$doc.tmp" "$doc"
rm -f "$table"
echo "matrix.sh: table written to $doc" >&2
