#!/usr/bin/env bash
# Runs HBase's own HFile tool (`hbase hfile`, HFilePrettyPrinter) with the
# installed HBase's classpath: scripts/hbase/hfile.sh -v -m -p -f <file>.
# A plain path is read from the local filesystem. The hbase/hfile tests use
# it to check that HBase reads the files simdex writes. SIMDEX_HBASE_VERSION
# picks the installed version (version.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
home="${SIMDEX_HBASE_HOME:-$repo/.hbase}"
# shellcheck source=version.sh
. "$here/version.sh" # cp_file: SIMDEX_HBASE_VERSION's install
if [ ! -s "$cp_file" ]; then
	echo "hfile.sh: $cp_file missing; run scripts/hbase/install.sh (SIMDEX_HBASE_VERSION=$hbase_version)" >&2
	exit 1
fi
exec java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
	--add-opens java.base/java.lang=ALL-UNNAMED \
	--add-opens java.base/java.nio=ALL-UNNAMED \
	"-Dlog4j.configuration=file:$here/peer-log4j.properties" \
	-cp "$(cat "$cp_file")" org.apache.hadoop.hbase.io.hfile.HFilePrettyPrinter "$@"
