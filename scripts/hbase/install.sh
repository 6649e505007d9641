#!/usr/bin/env bash
# Installs Apache HBase for the simdex tests: Maven resolves hbase-server (and,
# for the default 2.6.4, hbase-compression-snappy) from Maven Central into the
# local Maven repository (~/.m2) and writes their runtime classpath to a file
# in $SIMDEX_HBASE_HOME: cp.txt for the default 2.6.4 (hadoop3 build),
# cp-<version>.txt for another SIMDEX_HBASE_VERSION (see version.sh).
# Idempotent: when the classpath file exists and every entry on it is
# present, it does nothing.
#
# Env: SIMDEX_HBASE_HOME (default: <repo>/.hbase, gitignored);
#      SIMDEX_HBASE_VERSION (2.6.4, 2.5.11, 3.0.0 or 3.0.0-alpha-4; default 2.6.4).
# Needs: java (17) and mvn on PATH.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
home="${SIMDEX_HBASE_HOME:-$repo/.hbase}"
mkdir -p "$home"
# shellcheck source=version.sh
. "$here/version.sh"

for tool in java mvn; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "install.sh: $tool not found on PATH (HBase needs Java 17 and Maven)" >&2
		exit 1
	fi
done

complete() {
	[ -s "$cp_file" ] || return 1
	# The pom may have changed since the classpath was written.
	[ "$cp_file" -nt "$hbase_pom" ] || return 1
	# So may a version's settings (the default's live in pom.xml alone).
	[ "$hbase_version" = 2.6.4 ] || [ "$cp_file" -nt "$here/version.sh" ] || return 1
	local IFS=:
	for jar in $(cat "$cp_file"); do
		[ -e "$jar" ] || return 1
	done
}

if complete; then
	echo "install.sh: HBase $hbase_version already installed ($cp_file)"
	exit 0
fi

echo "install.sh: resolving HBase $hbase_artifact from Maven Central (first time ~140 MB)"
tmp="$cp_file.tmp.$$"
trap 'rm -f "$tmp"' EXIT
mvn_args=(-B -q -Dstyle.color=never -f "$hbase_pom" dependency:build-classpath
	-Dmdep.outputFile="$tmp" -Dmdep.includeScope=runtime)
# pom.xml names its version itself; the other pom takes it from here.
if [ "$hbase_pom" != "$here/pom.xml" ]; then
	mvn_args+=("-Dhbase.version=$hbase_artifact")
fi
if [ -n "$hadoop_pin" ]; then
	mvn_args+=("-Dhadoop.version=$hadoop_pin")
fi
if ! mvn "${mvn_args[@]}"; then
	echo "install.sh: Maven could not resolve HBase $hbase_artifact (see version.sh for what Maven Central lacks)" >&2
	exit 1
fi
if [ ! -s "$tmp" ]; then
	echo "install.sh: maven wrote no classpath" >&2
	exit 1
fi
mv "$tmp" "$cp_file"
echo "install.sh: classpath in $cp_file ($(tr ':' '\n' <"$cp_file" | wc -l) jars)"
