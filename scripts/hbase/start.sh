#!/usr/bin/env bash
# Starts a standalone Apache HBase (master, region server and ZooKeeper in one
# JVM) on loopback for simdex, in the background, and waits until it really
# serves: the reference peer (Peer.java, HBase's own Java client) must list the
# namespaces through the master and scan hbase:meta on the region server. Prints
# the ZooKeeper address (host:port) on stdout as its last line.
#
# Runs install.sh first (a no-op once installed). If an instance started by
# this script is already running on the same data directory, it only waits.
#
# Env (defaults chosen not to collide with a user's own HBase on 2181/16000/16020):
#   SIMDEX_HBASE_VERSION       2.6.4, 2.5.11 or 3.0.0-alpha-4 (2.6.4; version.sh)
#   SIMDEX_HBASE_HOME          install dir holding cp.txt  (<repo>/.hbase)
#   SIMDEX_HBASE_DATA          data, config, logs, pid     ($SIMDEX_HBASE_HOME/data,
#                              data-<version> for a version other than 2.6.4)
#   SIMDEX_HBASE_ZK_PORT       ZooKeeper client port       (22181)
#   SIMDEX_HBASE_MASTER_PORT   master RPC port             (26000)
#   SIMDEX_HBASE_RS_PORT       region server RPC port      (26020)
#   SIMDEX_HBASE_HEAP          JVM -Xmx                    (1g)
#   SIMDEX_HBASE_START_TIMEOUT seconds to wait for an RPC  (180)
#   SIMDEX_HBASE_HANDLERS      hbase.regionserver.handler.count (30, HBase's)
#   SIMDEX_HBASE_GC            g1, parallel or zgc: the JVM's collector (g1)
#   SIMDEX_HBASE_NETTY_THREADS hbase.netty.eventloop.rpcserver.thread.count (0: Netty's 2 x cores)
#   SIMDEX_HBASE_RPC_SERVER    netty or simple: hbase.rpc.server.impl (netty, HBase's default)
#   SIMDEX_HBASE_JAVA_OPTS     extra JVM flags, appended (none)
#   SIMDEX_HBASE_SITE_EXTRA    file of <property> elements added to hbase-site.xml
#                              (none; scripts/hbase/secure.sh writes Kerberos and TLS there)
#
# The handler, Netty, RPC server and collector knobs are for experiments; the
# defaults stay HBase's (benchmarks/2026-11-23-hbase-rest.md and
# benchmarks/2026-11-26-hbase-lookups.md: 8 handlers instead of 30 and ZGC
# instead of G1 made no measurable difference to lookups on a 2-core machine;
# SimpleRpcServer spent ~10% less region-server CPU per lookup at 2,000/s,
# with no difference in p99 that the host's noise let show).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export SIMDEX_HBASE_HOME="${SIMDEX_HBASE_HOME:-$repo/.hbase}"
home="$SIMDEX_HBASE_HOME"
# shellcheck source=version.sh
. "$here/version.sh"
# shellcheck source=common.sh
. "$here/common.sh" # hbase_jvm_flags, hbase_loopback_site, hbase_log4j
data="${SIMDEX_HBASE_DATA:-$(default_data)}"
zk_port="${SIMDEX_HBASE_ZK_PORT:-22181}"
master_port="${SIMDEX_HBASE_MASTER_PORT:-26000}"
rs_port="${SIMDEX_HBASE_RS_PORT:-26020}"
heap="${SIMDEX_HBASE_HEAP:-1g}"
timeout="${SIMDEX_HBASE_START_TIMEOUT:-180}"
handlers="${SIMDEX_HBASE_HANDLERS:-30}"
netty_threads="${SIMDEX_HBASE_NETTY_THREADS:-0}"
case "${SIMDEX_HBASE_GC:-g1}" in
g1) gc_flag=-XX:+UseG1GC ;;
parallel) gc_flag=-XX:+UseParallelGC ;;
zgc) gc_flag=-XX:+UseZGC ;;
*) echo "start.sh: SIMDEX_HBASE_GC must be g1, parallel or zgc" >&2; exit 2 ;;
esac
case "${SIMDEX_HBASE_RPC_SERVER:-netty}" in
netty) rpc_server=org.apache.hadoop.hbase.ipc.NettyRpcServer ;;
simple) rpc_server=org.apache.hadoop.hbase.ipc.SimpleRpcServer ;;
*) echo "start.sh: SIMDEX_HBASE_RPC_SERVER must be netty or simple" >&2; exit 2 ;;
esac

"$here/install.sh" >&2
mkdir -p "$data/conf" "$data/logs"
data="$(cd "$data" && pwd)"
pid_file="$data/hbase.pid"

running() {
	[ -s "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null
}

if running; then
	echo "start.sh: HBase already running (pid $(cat "$pid_file"))" >&2
else
	cat >"$data/conf/hbase-site.xml" <<XML
<?xml version="1.0"?>
<!-- Written by scripts/hbase/start.sh; rewritten on every start. -->
<configuration>
  <property><name>hbase.cluster.distributed</name><value>false</value></property>
  <property><name>hbase.rootdir</name><value>file://$data/root</value></property>
  <property><name>hbase.tmp.dir</name><value>$data/tmp</value></property>
  <property><name>hbase.zookeeper.property.dataDir</name><value>$data/zk</value></property>
  <property><name>hbase.zookeeper.quorum</name><value>127.0.0.1</value></property>
  <property><name>hbase.zookeeper.property.clientPort</name><value>$zk_port</value></property>
  <property><name>hbase.localcluster.assign.random.ports</name><value>false</value></property>
  <property><name>hbase.master.port</name><value>$master_port</value></property>
  <property><name>hbase.regionserver.port</name><value>$rs_port</value></property>
$(hbase_loopback_site)
  <property><name>hbase.unsafe.stream.capability.enforce</name><value>false</value></property>
  <property><name>hbase.io.compress.snappy.codec</name><value>$snappy_codec</value></property>
  <property><name>hbase.regionserver.handler.count</name><value>$handlers</value></property>
  <property><name>hbase.netty.eventloop.rpcserver.thread.count</name><value>$netty_threads</value></property>
  <property><name>hbase.rpc.server.impl</name><value>$rpc_server</value></property>
  <!-- A loaded 2-core machine stalls the JVM for seconds at a time (JvmPauseMonitor
       saw 8.5 s); with the default session limits the in-process ZooKeeper expired
       the master's and region server's sessions and HBase aborted. tickTime 6 s lets
       sessions negotiate up to 120 s (20 ticks). -->
  <property><name>hbase.zookeeper.property.tickTime</name><value>6000</value></property>
  <property><name>zookeeper.session.timeout</name><value>90000</value></property>
$(if [ -n "${SIMDEX_HBASE_SITE_EXTRA:-}" ]; then cat "$SIMDEX_HBASE_SITE_EXTRA"; fi)
</configuration>
XML
	{
		echo "# Written by scripts/hbase/start.sh (HBase on Maven's classpath logs through"
		echo "# reload4j, Hadoop's slf4j binding, in every version of version.sh)."
		hbase_log4j "$data/logs/hbase.log" 64MB 2
	} >"$data/conf/log4j.properties"
	java_flags=(
		"-Xmx$heap" "$gc_flag"
		"${hbase_jvm_flags[@]}"
		"-Dhbase.log.dir=$data/logs"
		"-Dlog4j.configuration=file:$data/conf/log4j.properties"
	)
	# shellcheck disable=SC2206 # word splitting of the extra flags is wanted
	java_flags+=(${SIMDEX_HBASE_JAVA_OPTS:-})
	# setsid: the JVM must outlive this script and not get the caller's
	# terminal signals; stop.sh ends it through the pid file.
	setsid java "${java_flags[@]}" -cp "$data/conf:$(cat "$cp_file")" \
		org.apache.hadoop.hbase.master.HMaster start \
		>"$data/logs/stdout.log" 2>&1 </dev/null &
	echo $! >"$pid_file"
	echo "start.sh: HBase $hbase_version starting (pid $(cat "$pid_file"), data $data, logs $data/logs)" >&2
fi

# Ready means an RPC succeeds, not a port that is open.
if ! SIMDEX_HBASE_PID="$(cat "$pid_file")" "$here/peer.sh" wait "127.0.0.1:$zk_port" "$timeout" >&2; then
	echo "start.sh: HBase did not serve within ${timeout}s; last log lines:" >&2
	tail -n 30 "$data/logs/stdout.log" "$data/logs/hbase.log" >&2 2>/dev/null || true
	exit 1
fi
echo "127.0.0.1:$zk_port"
