# shellcheck shell=bash
# Sourced by start.sh, stop.sh, cluster.sh and peer.sh: what the HBase
# processes they start and stop share. hbase_jvm_flags are the flags every JVM of HBase (its
# servers, ClusterAdmin and the Java peer) runs with on Java 17 and later:
# IPv4, netty's reflection, and the JDK internals HBase and its netty reach
# into (heap, GC and logging flags are each script's own);
# hbase_loopback_site prints the hbase-site.xml properties that keep the
# servers on loopback; hbase_log4j their logging configuration.
hbase_jvm_flags=(
	-Djava.net.preferIPv4Stack=true
	-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
	--add-modules jdk.unsupported
	--add-opens java.base/java.lang=ALL-UNNAMED
	--add-opens java.base/java.lang.reflect=ALL-UNNAMED
	--add-opens java.base/java.io=ALL-UNNAMED
	--add-opens java.base/java.nio=ALL-UNNAMED
	--add-opens java.base/sun.nio.ch=ALL-UNNAMED
	--add-opens java.base/java.util=ALL-UNNAMED
	--add-opens java.base/java.util.concurrent=ALL-UNNAMED
	--add-opens java.base/jdk.internal.ref=ALL-UNNAMED
	--add-exports java.base/jdk.internal.misc=ALL-UNNAMED
)

# hbase_loopback_site prints the hbase-site.xml properties that bind the
# master and region servers to loopback, name them localhost and turn
# their web UIs off.
hbase_loopback_site() {
	cat <<'XML'
  <property><name>hbase.master.ipc.address</name><value>127.0.0.1</value></property>
  <property><name>hbase.regionserver.ipc.address</name><value>127.0.0.1</value></property>
  <property><name>hbase.master.hostname</name><value>localhost</value></property>
  <property><name>hbase.unsafe.regionserver.hostname</name><value>localhost</value></property>
  <property><name>hbase.master.info.port</name><value>-1</value></property>
  <property><name>hbase.regionserver.info.port</name><value>-1</value></property>
XML
}

# hbase_log4j FILE MAXSIZE BACKUPS prints a log4j.properties (reload4j,
# which HBase and Hadoop log through) that logs to the rolling FILE of at
# most MAXSIZE with BACKUPS old ones, ZooKeeper and Hadoop at WARN and
# HBase at INFO; the caller may add loggers after it.
hbase_log4j() {
	cat <<PROPS
log4j.rootLogger=INFO,FILE
log4j.appender.FILE=org.apache.log4j.RollingFileAppender
log4j.appender.FILE.File=$1
log4j.appender.FILE.MaxFileSize=$2
log4j.appender.FILE.MaxBackupIndex=$3
log4j.appender.FILE.layout=org.apache.log4j.PatternLayout
log4j.appender.FILE.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n
log4j.logger.org.apache.zookeeper=WARN
log4j.logger.org.apache.hadoop=WARN
log4j.logger.org.apache.hadoop.hbase=INFO
PROPS
}

# signal_wait PID SIGNAL SECONDS sends SIGNAL to PID and waits up to
# SECONDS for it to exit; it fails when PID is still up then.
signal_wait() {
	local i
	kill "-$2" "$1" 2>/dev/null || true
	for ((i = 0; i < $3 * 5; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.2
	done
	! kill -0 "$1" 2>/dev/null
}
