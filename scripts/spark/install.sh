#!/usr/bin/env bash
# Installs what the Spark backfill needs on this machine: a Python virtual
# environment with PySpark from PyPI (which carries Spark's own jars and
# spark-submit) under a git-ignored cache directory. Idempotent: when the
# environment already has the pinned PySpark it does nothing.
#
# Env: SIMDEX_SPARK_HOME (default: <repo>/.spark; a .gitignore inside keeps
# it out of git), SIMDEX_PYSPARK_VERSION (default below), PYTHON (default
# python3).
# Needs: python3 (3.10 or later) with venv, and java 17 on PATH.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
home="${SIMDEX_SPARK_HOME:-$repo/.spark}"
version="${SIMDEX_PYSPARK_VERSION:-4.0.1}"
python="${PYTHON:-python3}"
venv="$home/venv"

for tool in "$python" java; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "install.sh: $tool not found on PATH (the Spark job needs Python 3 and Java 17)" >&2
		exit 1
	fi
done

mkdir -p "$home"
[ -e "$home/.gitignore" ] || printf '*\n' >"$home/.gitignore"

installed() {
	[ -x "$venv/bin/python" ] && [ -x "$venv/bin/spark-submit" ] || return 1
	[ "$("$venv/bin/python" -c 'import pyspark; print(pyspark.__version__)' 2>/dev/null)" = "$version" ]
}

if installed; then
	echo "install.sh: PySpark $version already installed ($venv)"
	exit 0
fi

echo "install.sh: installing PySpark $version into $venv (first time ~400 MB)"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "pyspark==$version"
if ! installed; then
	echo "install.sh: PySpark $version did not install into $venv" >&2
	exit 1
fi
echo "install.sh: PySpark $version in $venv ($venv/bin/spark-submit)"
