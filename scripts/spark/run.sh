#!/usr/bin/env bash
# Runs the Spark backfill (spark/simdex_backfill.py) with spark-submit on a
# local master: installs PySpark (scripts/spark/install.sh) and builds the
# simdex-spark worker when needed, then passes every argument to the job.
#
#   scripts/spark/run.sh --data-dir simdex-data --work-dir backfill.work 'archive/*.jsonl'
#   scripts/spark/run.sh --store hbase --hbase-zk HOST:PORT --work-dir backfill.work 'archive/*.jsonl'
#
# Env: SIMDEX_SPARK_MASTER (default local[2,4]: two cores, a failed task is
# tried up to 4 times), SIMDEX_SPARK_DRIVER_MEMORY (default 1g),
# SIMDEX_SPARK_WORKER (a prebuilt simdex-spark binary; default: built into
# .spark/bin), SIMDEX_SPARK_HOME (see install.sh). On a cluster run
# spark-submit yourself with the same application and arguments
# (docs/OPERATIONS.md, "Backfill with Spark").
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
home="${SIMDEX_SPARK_HOME:-$repo/.spark}"
"$here/install.sh" >&2
worker="${SIMDEX_SPARK_WORKER:-}"
if [ -z "$worker" ]; then
	worker="$home/bin/simdex-spark"
	(cd "$repo" && go build -o "$worker" ./cmd/simdex-spark)
fi
export PYSPARK_PYTHON="$home/venv/bin/python"
export PYSPARK_DRIVER_PYTHON="$home/venv/bin/python"
exec "$home/venv/bin/spark-submit" \
	--master "${SIMDEX_SPARK_MASTER:-local[2,4]}" \
	--driver-memory "${SIMDEX_SPARK_DRIVER_MEMORY:-1g}" \
	--conf spark.ui.enabled=false \
	--conf spark.log.level="${SIMDEX_SPARK_LOG_LEVEL:-WARN}" \
	--conf spark.sql.shuffle.partitions=8 \
	"$repo/spark/simdex_backfill.py" --worker "$worker" "$@"
