#!/usr/bin/env bash
# A multi-process HBase cluster on HDFS, on loopback, for simdex's chaos tests
# and for trying simdex as it runs in production. Separate JVMs: an HDFS
# NameNode and DataNode (Hadoop's own daemons; the NameNode is formatted on the
# first start), ZooKeeper, an active and a backup HMaster, and three region
# servers, with hbase.rootdir on HDFS. Everything comes from Maven Central
# through install.sh (hbase-server 2.6.4-hadoop3 brings hadoop-hdfs 3.4.2,
# whose jar holds the NameNode and DataNode).
#
#   cluster.sh start           start what is not running, wait until the cluster
#                              serves (3 live region servers, a backup master,
#                              hbase:meta readable); prints the ZooKeeper
#                              address (host:port) as its last line on stdout
#   cluster.sh stop            SIGKILL every process it started (the data stays;
#                              HBase recovers from its WAL on the next start)
#   cluster.sh status          one line per process: ROLE PID up|down
#   cluster.sh kill ROLE       SIGKILL one process (chaos: kill -9)
#   cluster.sh term ROLE       SIGTERM one process and wait until it exits (a
#                              region server closes its regions first)
#   cluster.sh start-role ROLE start one process again (not waiting)
#   cluster.sh pid ROLE        its pid, if it runs
#   cluster.sh admin [CMD...]  ClusterAdmin.java with the cluster's address:
#                              one command, or commands read from stdin (see
#                              ClusterAdmin.java)
#   cluster.sh zk              the ZooKeeper address
#   cluster.sh wipe            stop, then delete the data directory
#
# Roles: nn dn zk master1 master2 rs1 rs2 rs3.
#
# A start that fails (a process dies, or the cluster does not serve within
# SIMDEX_CLUSTER_START_TIMEOUT) stops everything it started.
#
# Env:
#   SIMDEX_HBASE_HOME             install dir holding cp.txt     (<repo>/.hbase)
#   SIMDEX_HBASE_VERSION          the installed HBase to run     (2.6.4; version.sh;
#                                 the cluster is tested on the default only)
#   SIMDEX_CLUSTER_DATA           data, config, logs, pids       ($SIMDEX_HBASE_HOME/cluster-data)
#   SIMDEX_CLUSTER_PORT_BASE      every port is base + offset    (23000)
#       ZooKeeper +181, NameNode RPC +20 and HTTP +70, DataNode transfer +66,
#       IPC +67 and HTTP +75, masters +100 and +101, region servers +120..+122;
#       the HBase web UIs are off
#   SIMDEX_CLUSTER_ZK_SESSION_MS  zookeeper.session.timeout      (10000)
#       how long a killed region server's regions wait before the master
#       reassigns them; a live server whose JVM stalls longer than this is
#       declared dead and aborts, so it cannot go much lower on a loaded host
#   SIMDEX_CLUSTER_RS_HEAP        region server -Xmx             (512m)
#   SIMDEX_CLUSTER_HEAP           -Xmx of the other processes    (256m)
#   SIMDEX_CLUSTER_START_TIMEOUT  seconds to wait for serving    (300)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export SIMDEX_HBASE_HOME="${SIMDEX_HBASE_HOME:-$repo/.hbase}"
home="$SIMDEX_HBASE_HOME"
data="${SIMDEX_CLUSTER_DATA:-$home/cluster-data}"
base="${SIMDEX_CLUSTER_PORT_BASE:-23000}"
session_ms="${SIMDEX_CLUSTER_ZK_SESSION_MS:-10000}"
rs_heap="${SIMDEX_CLUSTER_RS_HEAP:-512m}"
heap="${SIMDEX_CLUSTER_HEAP:-256m}"
timeout="${SIMDEX_CLUSTER_START_TIMEOUT:-300}"

zk_port=$((base + 181))
nn_port=$((base + 20))
nn_http=$((base + 70))
dn_port=$((base + 66))
dn_ipc=$((base + 67))
dn_http=$((base + 75))
master_ports=($((base + 100)) $((base + 101)))
rs_ports=($((base + 120)) $((base + 121)) $((base + 122)))
roles=(nn dn zk master1 master2 rs1 rs2 rs3)
zk_addr="127.0.0.1:$zk_port"
# shellcheck source=version.sh
. "$here/version.sh" # cp_file: SIMDEX_HBASE_VERSION's install
# shellcheck source=common.sh
. "$here/common.sh" # hbase_jvm_flags, hbase_loopback_site, hbase_log4j, signal_wait

die() {
	echo "cluster.sh: $*" >&2
	exit 1
}

pid_of() { # ROLE -> pid on stdout if it runs
	local f="$data/pids/$1.pid" pid args
	[ -s "$f" ] || return 1
	pid="$(cat "$f")"
	# The pid must still be this role's JVM (its command line names its log
	# file), not a process that got the number after it ended.
	args="$({ tr '\0' '\n' <"/proc/$pid/cmdline"; } 2>/dev/null)" || return 1
	[[ $'\n'"$args"$'\n' == *$'\n'"-Dsimdex.log.file=$data/logs/$1.log"$'\n'* ]] || return 1
	echo "$pid"
}

check_role() {
	local r
	for r in "${roles[@]}"; do
		[ "$r" = "$1" ] && return 0
	done
	die "unknown role $1 (roles: ${roles[*]})"
}

# write_conf writes the configuration every process reads: HDFS (core-site,
# hdfs-site), HBase (hbase-site), ZooKeeper (zoo.cfg) and logging. Rewritten on
# every start so a changed script takes effect.
write_conf() {
	local conf="$data/conf"
	mkdir -p "$conf" "$data/logs" "$data/pids" "$data/nn" "$data/dn" "$data/zk" "$data/tmp"
	# The NameNode's and DataNode's web servers look up webapps/<name> on the
	# classpath, which the hadoop-hdfs jar on Maven Central leaves out; empty
	# ones serve what the scripts use (/jmx).
	mkdir -p "$conf/webapps/hdfs" "$conf/webapps/datanode"
	cat >"$conf/core-site.xml" <<XML
<?xml version="1.0"?>
<!-- Written by scripts/hbase/cluster.sh; rewritten on every start. -->
<configuration>
  <property><name>fs.defaultFS</name><value>hdfs://127.0.0.1:$nn_port</value></property>
  <property><name>hadoop.tmp.dir</name><value>$data/tmp</value></property>
</configuration>
XML
	cat >"$conf/hdfs-site.xml" <<XML
<?xml version="1.0"?>
<!-- Written by scripts/hbase/cluster.sh; rewritten on every start. -->
<configuration>
  <property><name>dfs.namenode.name.dir</name><value>file://$data/nn</value></property>
  <property><name>dfs.datanode.data.dir</name><value>file://$data/dn</value></property>
  <property><name>dfs.namenode.rpc-address</name><value>127.0.0.1:$nn_port</value></property>
  <property><name>dfs.namenode.http-address</name><value>127.0.0.1:$nn_http</value></property>
  <property><name>dfs.datanode.address</name><value>127.0.0.1:$dn_port</value></property>
  <property><name>dfs.datanode.ipc.address</name><value>127.0.0.1:$dn_ipc</value></property>
  <property><name>dfs.datanode.http.address</name><value>127.0.0.1:$dn_http</value></property>
  <property><name>dfs.namenode.secondary.http-address</name><value>127.0.0.1:0</value></property>
  <property><name>dfs.replication</name><value>1</value></property>
  <property><name>dfs.permissions.enabled</name><value>false</value></property>
  <property><name>dfs.namenode.safemode.extension</name><value>0</value></property>
  <property><name>dfs.namenode.datanode.registration.ip-hostname-check</name><value>false</value></property>
  <property><name>dfs.heartbeat.interval</name><value>1</value></property>
  <!-- One DataNode: a write pipeline has no other node to replace a failed one with. -->
  <property><name>dfs.client.block.write.replace-datanode-on-failure.enable</name><value>false</value></property>
  <property><name>dfs.datanode.handler.count</name><value>4</value></property>
  <property><name>dfs.namenode.handler.count</name><value>8</value></property>
</configuration>
XML
	cat >"$conf/hbase-site.xml" <<XML
<?xml version="1.0"?>
<!-- Written by scripts/hbase/cluster.sh; rewritten on every start. Each
     process's ports come as -D arguments on its command line. -->
<configuration>
  <property><name>hbase.cluster.distributed</name><value>true</value></property>
  <property><name>hbase.rootdir</name><value>hdfs://127.0.0.1:$nn_port/hbase</value></property>
  <property><name>hbase.tmp.dir</name><value>$data/tmp</value></property>
  <property><name>hbase.zookeeper.quorum</name><value>127.0.0.1</value></property>
  <property><name>hbase.zookeeper.property.clientPort</name><value>$zk_port</value></property>
  <property><name>zookeeper.session.timeout</name><value>$session_ms</value></property>
$(hbase_loopback_site)
  <property><name>hbase.io.compress.snappy.codec</name><value>org.apache.hadoop.hbase.io.compress.xerial.SnappyCodec</value></property>
  <!-- Small thread pools: eight JVMs share two cores with other work. -->
  <property><name>hbase.regionserver.handler.count</name><value>12</value></property>
  <property><name>hbase.master.handler.count</name><value>8</value></property>
  <property><name>hbase.netty.eventloop.rpcserver.thread.count</name><value>2</value></property>
  <!-- Region servers report every second, so a move or an open is seen soon. -->
  <property><name>hbase.regionserver.msginterval</name><value>1000</value></property>
  <property><name>hbase.master.wait.on.regionservers.mintostart</name><value>1</value></property>
  <property><name>hbase.master.wait.on.regionservers.timeout</name><value>3000</value></property>
  <!-- The tests balance by hand (cluster.sh admin balance); the master's own
       five-minute balancer would move regions at times no test chose. -->
  <property><name>hbase.balancer.period</name><value>3600000</value></property>
  <!-- Split and merge only when asked: the tests choose when regions change.
       (DisabledRegionSplitPolicy would refuse the splits asked for too.) -->
  <property><name>hbase.hregion.max.filesize</name><value>107374182400</value></property>
  <property><name>hbase.normalizer.period</name><value>3600000</value></property>
  <!-- The catalog janitor forgets split and merge parents once their
       daughters no longer refer to them; only then can a daughter split or
       merge again. Every 10 s instead of every 5 minutes. -->
  <property><name>hbase.catalogjanitor.interval</name><value>10000</value></property>
  <!-- A compaction's replaced files (a daughter's references to its parents
       among them) are archived by the discharger: every 5 s instead of 2 min. -->
  <property><name>hbase.hfile.compaction.discharger.interval</name><value>5000</value></property>
</configuration>
XML
	cat >"$conf/zoo.cfg" <<CFG
# Written by scripts/hbase/cluster.sh; rewritten on every start.
tickTime=1000
dataDir=$data/zk
clientPort=$zk_port
clientPortAddress=127.0.0.1
maxClientCnxns=0
minSessionTimeout=2000
maxSessionTimeout=60000
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr
CFG
	{
		echo "# Written by scripts/hbase/cluster.sh (HBase 2.6 and Hadoop log through reload4j)."
		# shellcheck disable=SC2016 # the JVM's property, not a shell variable
		hbase_log4j '${simdex.log.file}' 32MB 1
		echo "log4j.logger.org.apache.hadoop.hdfs.server.namenode=INFO"
	} >"$conf/log4j.properties"
}

# launch ROLE XMX MAIN ARGS...: start one JVM in its own session (it outlives
# this script and gets none of the caller's terminal signals), log to
# logs/ROLE.log, pid in pids/ROLE.pid.
launch() {
	local role="$1" xmx="$2"
	shift 2
	local flags=(
		"-Xmx$xmx" -XX:+UseSerialGC -XX:CICompilerCount=2
		"${hbase_jvm_flags[@]}"
		"-Dhbase.log.dir=$data/logs" "-Dhadoop.log.dir=$data/logs"
		"-Dsimdex.log.file=$data/logs/$role.log"
		"-Dlog4j.configuration=file:$data/conf/log4j.properties"
		-Dzookeeper.admin.enableServer=false
	)
	case "$role" in
	rs*) ;; # region servers serve the traffic: full JIT
	*) flags+=(-XX:TieredStopAtLevel=1) ;;
	esac
	setsid java "${flags[@]}" -cp "$data/conf:$(cat "$cp_file")" "$@" \
		>>"$data/logs/$role.out" 2>&1 </dev/null &
	local pid=$!
	echo "$pid" >"$data/pids/$role.pid"
	# Until the forked shell has exec'd the JVM, pid_of does not know it
	# (it checks the command line): wait for that, up to 10 s.
	for _ in $(seq 1 100); do
		pid_of "$role" >/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "cluster.sh: $role started (pid $pid)" >&2
}

start_role() {
	local role="$1" i
	if pid="$(pid_of "$role")"; then
		echo "cluster.sh: $role already running (pid $pid)" >&2
		return 0
	fi
	case "$role" in
	nn)
		if [ ! -d "$data/nn/current" ]; then
			echo "cluster.sh: formatting the NameNode" >&2
			java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
				"-Dsimdex.log.file=$data/logs/nn-format.log" \
				"-Dlog4j.configuration=file:$data/conf/log4j.properties" \
				-cp "$data/conf:$(cat "$cp_file")" \
				org.apache.hadoop.hdfs.server.namenode.NameNode -format -force -nonInteractive \
				>"$data/logs/nn-format.out" 2>&1 || die "NameNode format failed (see $data/logs/nn-format.*)"
		fi
		launch nn "$heap" org.apache.hadoop.hdfs.server.namenode.NameNode
		;;
	dn) launch dn "$heap" org.apache.hadoop.hdfs.server.datanode.DataNode ;;
	zk) launch zk 128m org.apache.zookeeper.server.ZooKeeperServerMain "$data/conf/zoo.cfg" ;;
	master1 | master2)
		i=$((${role#master} - 1))
		launch "$role" "$heap" org.apache.hadoop.hbase.master.HMaster \
			-D "hbase.master.port=${master_ports[$i]}" start
		;;
	rs1 | rs2 | rs3)
		i=$((${role#rs} - 1))
		launch "$role" "$rs_heap" org.apache.hadoop.hbase.regionserver.HRegionServer \
			-D "hbase.regionserver.port=${rs_ports[$i]}" start
		;;
	esac
}

kill_role() { # ROLE SIGNAL: signal it and wait (up to 120 s) until it is gone
	local pid
	if ! pid="$(pid_of "$1")"; then
		rm -f "$data/pids/$1.pid"
		return 0
	fi
	if ! signal_wait "$pid" "$2" 120; then
		echo "cluster.sh: $1 (pid $pid) ignored SIG$2 for 120 s; SIGKILL" >&2
		kill -KILL "$pid" 2>/dev/null || true
		sleep 0.5
	fi
	rm -f "$data/pids/$1.pid"
}

stop_all() {
	local r
	# All at once: nothing of the cluster's data needs a clean shutdown,
	# and a region server that loses its master or HDFS first only waits.
	for r in "${roles[@]}"; do
		if pid="$(pid_of "$r")"; then
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	for r in "${roles[@]}"; do
		kill_role "$r" KILL
	done
}

# wait_for SECONDS WHAT CMD...: poll CMD every second until it succeeds; fail
# (naming WHAT) if it does not, or if a started process died meanwhile.
wait_for() {
	local secs="$1" what="$2" r
	shift 2
	local deadline=$((SECONDS + secs))
	until "$@" >/dev/null 2>&1; do
		for r in "${started[@]}"; do
			pid_of "$r" >/dev/null || {
				echo "cluster.sh: $r died while waiting for $what; last lines of its log:" >&2
				tail -n 20 "$data/logs/$r.out" "$data/logs/$r.log" >&2 2>/dev/null || true
				return 1
			}
		done
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "cluster.sh: no $what after ${secs}s" >&2
			return 1
		fi
		sleep 1
	done
}

zk_ok() {
	local reply
	exec 3<>"/dev/tcp/127.0.0.1/$zk_port" || return 1
	printf ruok >&3
	read -r -t 5 reply <&3 || true
	exec 3<&- 3>&-
	[ "$reply" = imok ]
}

datanode_live() {
	curl -fsS "http://127.0.0.1:$nn_http/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState" |
		grep -q '"NumLiveDataNodes" *: *[1-9]'
}

admin() {
	local classes
	classes="$(versioned cluster-admin)"
	if [ ! -f "$classes/ClusterAdmin.class" ] || [ "$here/ClusterAdmin.java" -nt "$classes/ClusterAdmin.class" ]; then
		mkdir -p "$classes"
		javac -nowarn -d "$classes" -cp "$(cat "$cp_file")" "$here/ClusterAdmin.java"
	fi
	# exec: a long-lived admin (the tests' `admin -`) must not leave bash
	# reading this file after java, which may have changed meanwhile.
	exec java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "${hbase_jvm_flags[@]}" \
		"-Dlog4j.configuration=file:$here/peer-log4j.properties" \
		-cp "$classes:$(cat "$cp_file")" ClusterAdmin "$zk_addr" "$@"
}

run_admin() { (admin "$@"); } # admin execs java: in a subshell, to come back

start_all() {
	"$here/install.sh" >&2
	write_conf
	started=()
	# From here on any exit but the last line's stops everything this start
	# launched: a crashed start leaves nothing running.
	trap 'echo "cluster.sh: start failed; stopping what it started" >&2; for r in "${started[@]}"; do kill_role "$r" KILL; done' EXIT
	local r
	for r in nn dn zk; do
		pid_of "$r" >/dev/null || started+=("$r")
		start_role "$r"
	done
	wait_for 120 "ZooKeeper answering" zk_ok
	wait_for 180 "live DataNode" datanode_live
	# master1 first, so it is the active one and master2 the backup.
	for r in master1 rs1 rs2 rs3; do
		pid_of "$r" >/dev/null || started+=("$r")
		start_role "$r"
	done
	wait_for "$timeout" "active master with 3 region servers" run_admin wait-servers 3 0 30
	pid_of master2 >/dev/null || started+=(master2)
	start_role master2
	wait_for "$timeout" "backup master" run_admin wait-servers 3 1 30
	trap - EXIT
	echo "cluster.sh: serving (data $data, logs $data/logs)" >&2
	echo "$zk_addr"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
start) start_all ;;
stop)
	stop_all
	echo "cluster.sh: stopped" >&2
	;;
status)
	for r in "${roles[@]}"; do
		if pid="$(pid_of "$r")"; then echo "$r $pid up"; else echo "$r - down"; fi
	done
	;;
kill)
	check_role "${1:?role}"
	kill_role "$1" KILL
	;;
term)
	check_role "${1:?role}"
	kill_role "$1" TERM
	;;
start-role)
	check_role "${1:?role}"
	write_conf
	start_role "$1"
	;;
pid)
	check_role "${1:?role}"
	pid_of "$1"
	;;
admin) admin "$@" ;;
zk) echo "$zk_addr" ;;
wipe)
	stop_all
	rm -rf "$data"
	echo "cluster.sh: wiped $data" >&2
	;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
	;;
esac
