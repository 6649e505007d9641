#!/usr/bin/env bash
# Runs simdex's chaos tests (internal/chaos, TestChaos) on a throwaway
# cluster: cluster.sh starts one on its own data directory (wiped first) and
# ports, the test starts two simdex servers on it and puts them through the
# events under traffic, and the cluster is stopped on exit, whatever happened.
# Each event's longest unavailability and p99 are printed as "chaos: EVENT
# ..." lines.
#
#   scripts/hbase/chaos.sh [go test flags...]
#
# Env:
#   SIMDEX_CHAOS_EVENTS  events to run, comma-separated, in order (default all:
#                        rs-kill,move,split-merge,rolling-restart,master-kill);
#                        scripts/test.sh runs rs-kill,move
#   SIMDEX_CHAOS_WRITER_LEASE=1  an index whose writers take turns
#                        (--hbase-writer-lease): one server writes, the other
#                        sends its writes on to it; bulk loads are guests
#   SIMDEX_CHAOS_DATA    the cluster's data directory, wiped at the start
#                        (<repo>/.hbase/cluster-test-data)
#   SIMDEX_CHAOS_PORT_BASE  its port base (23500; see cluster.sh for the offsets)
# Needs: java (17), mvn and go on PATH.
set -euo pipefail
cd "$(dirname "$0")/../.."
export SIMDEX_CLUSTER_DATA="${SIMDEX_CHAOS_DATA:-$PWD/.hbase/cluster-test-data}"
export SIMDEX_CLUSTER_PORT_BASE="${SIMDEX_CHAOS_PORT_BASE:-23500}"
scripts/hbase/cluster.sh wipe
trap 'scripts/hbase/cluster.sh stop || true' EXIT
started=$SECONDS
zk="$(scripts/hbase/cluster.sh start | tail -n 1)"
echo "chaos.sh: cluster serving at $zk after $((SECONDS - started))s"
SIMDEX_HBASE_CLUSTER="$zk" SIMDEX_CHAOS_REQUIRE=1 \
	go test -race -count=1 -v -timeout 60m -run '^TestChaos$' ./internal/chaos "$@"
