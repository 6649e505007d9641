# shellcheck shell=bash
# Sourced by start.sh, cluster.sh and peer.sh: sets hbase_jvm_flags, the
# flags every JVM of HBase (its servers, ClusterAdmin and the Java peer)
# runs with on Java 17 and later: IPv4, netty's reflection, and the JDK
# internals HBase and its netty reach into. Heap, GC and logging flags are
# each script's own.
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
