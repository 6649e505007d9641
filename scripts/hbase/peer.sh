#!/usr/bin/env bash
# Runs the reference peer (Peer.java, HBase's own Java client) with HBase's
# classpath: scripts/hbase/peer.sh COMMAND ARGS... (see Peer.java). Compiles it
# once into $SIMDEX_HBASE_HOME/peer/ and recompiles when Peer.java changes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
home="${SIMDEX_HBASE_HOME:-$repo/.hbase}"
cp_file="$home/cp.txt"
if [ ! -s "$cp_file" ]; then
	echo "peer.sh: $cp_file missing; run scripts/hbase/install.sh" >&2
	exit 1
fi
classes="$home/peer"
if [ ! -f "$classes/Peer.class" ] || [ "$here/Peer.java" -nt "$classes/Peer.class" ]; then
	mkdir -p "$classes"
	javac -nowarn -d "$classes" -cp "$(cat "$cp_file")" "$here/Peer.java"
fi
exec java -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
	-Djava.net.preferIPv4Stack=true \
	-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true \
	--add-modules jdk.unsupported \
	--add-opens java.base/java.lang=ALL-UNNAMED \
	--add-opens java.base/java.nio=ALL-UNNAMED \
	--add-opens java.base/sun.nio.ch=ALL-UNNAMED \
	--add-opens java.base/java.util.concurrent=ALL-UNNAMED \
	--add-exports java.base/jdk.internal.misc=ALL-UNNAMED \
	"-Dlog4j.configuration=file:$here/peer-log4j.properties" \
	-cp "$classes:$(cat "$cp_file")" Peer "$@"
