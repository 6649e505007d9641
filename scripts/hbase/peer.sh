#!/usr/bin/env bash
# Runs the reference peer (Peer.java, HBase's own Java client) with HBase's
# classpath: scripts/hbase/peer.sh COMMAND ARGS... (see Peer.java). Compiles it
# once into $SIMDEX_HBASE_HOME/peer/ (peer-<version>/ for a SIMDEX_HBASE_VERSION
# other than 2.6.4) and recompiles when Peer.java changes.
#
# For a secured cluster (scripts/hbase/secure.sh): SIMDEX_HBASE_PEER_CONF is a
# directory whose hbase-site.xml (Kerberos principal and keytab, TLS stores) the
# peer's HBase configuration reads, SIMDEX_HBASE_PEER_JAVA_OPTS extra JVM flags
# (-Djava.security.krb5.conf=...).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
home="${SIMDEX_HBASE_HOME:-$repo/.hbase}"
# shellcheck source=version.sh
. "$here/version.sh" # cp_file, peer_classes: SIMDEX_HBASE_VERSION's install
# shellcheck source=common.sh
. "$here/common.sh" # hbase_jvm_flags
if [ ! -s "$cp_file" ]; then
	echo "peer.sh: $cp_file missing; run scripts/hbase/install.sh (SIMDEX_HBASE_VERSION=$hbase_version)" >&2
	exit 1
fi
classes="$peer_classes"
if [ ! -f "$classes/Peer.class" ] || [ "$here/Peer.java" -nt "$classes/Peer.class" ]; then
	mkdir -p "$classes"
	javac -nowarn -d "$classes" -cp "$(cat "$cp_file")" "$here/Peer.java"
fi
read -r -a peer_opts <<<"${SIMDEX_HBASE_PEER_JAVA_OPTS:-}"
exec java -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "${hbase_jvm_flags[@]}" \
	"-Dlog4j.configuration=file:$here/peer-log4j.properties" \
	"${peer_opts[@]}" \
	-cp "${SIMDEX_HBASE_PEER_CONF:+$SIMDEX_HBASE_PEER_CONF:}$classes:$(cat "$cp_file")" Peer "$@"
