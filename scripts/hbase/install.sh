#!/usr/bin/env bash
# Installs Apache HBase 2.6.4 (hadoop3 build) for the simdex tests: Maven
# resolves hbase-server and hbase-compression-snappy from Maven Central into the
# local Maven repository (~/.m2) and writes their runtime classpath to
# $SIMDEX_HBASE_HOME/cp.txt. Idempotent: when cp.txt exists and every entry on
# it is present, it does nothing.
#
# Env: SIMDEX_HBASE_HOME (default: <repo>/.hbase, gitignored).
# Needs: java (17) and mvn on PATH.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
home="${SIMDEX_HBASE_HOME:-$repo/.hbase}"
mkdir -p "$home"
cp_file="$home/cp.txt"

for tool in java mvn; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "install.sh: $tool not found on PATH (HBase needs Java 17 and Maven)" >&2
		exit 1
	fi
done

complete() {
	[ -s "$cp_file" ] || return 1
	# The pom may have changed since the classpath was written.
	[ "$cp_file" -nt "$here/pom.xml" ] || return 1
	local IFS=:
	for jar in $(cat "$cp_file"); do
		[ -e "$jar" ] || return 1
	done
}

if complete; then
	echo "install.sh: HBase already installed ($cp_file)"
	exit 0
fi

echo "install.sh: resolving HBase 2.6.4 from Maven Central (first time ~140 MB)"
tmp="$cp_file.tmp.$$"
trap 'rm -f "$tmp"' EXIT
mvn -B -q -Dstyle.color=never -f "$here/pom.xml" dependency:build-classpath \
	-Dmdep.outputFile="$tmp" -Dmdep.includeScope=runtime
if [ ! -s "$tmp" ]; then
	echo "install.sh: maven wrote no classpath" >&2
	exit 1
fi
mv "$tmp" "$cp_file"
echo "install.sh: classpath in $cp_file ($(tr ':' '\n' <"$cp_file" | wc -l) jars)"
