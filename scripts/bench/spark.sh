#!/usr/bin/env bash
# The Spark backfill against cmd/bulkload on the same machine and inputs:
#
#   docs:  D ~1 KB text documents (scripts/bench/bulkload's generator: half
#          Chinese, half English, 2% near-copies), loaded into a new
#          embedded store by cmd/bulkload, then by the Spark job on local[2];
#   fp:    N precomputed fingerprints ("id,fingerprint,time" lines), the
#          same two ways;
#   scale: the first S of the D documents by cmd/bulkload and by the Spark
#          job on local[2] and on local[1] (how the job grows with cores).
#
#   scripts/bench/spark.sh [D] [N] [S] [STEPS]
#
# (defaults 1000000, 10000000, 200000, docs,fp,scale). Each load reports wall time and the
# CPU the whole machine spent meanwhile (busy jiffies of /proc/stat, so the
# JVM, the Python workers and the Go workers all count; run it on a quiet
# machine, nothing else beside it), documents per second and CPU per
# document. Every Spark-built store is compared cell for cell with
# cmd/bulkload's (simdex-spark compare), so a fast wrong load cannot pass.
# Spark's own start (JVM, context) is inside its wall time, as a user
# meets it.
#
# SIMDEX_BENCH_SPARK_ARGS adds arguments to every Spark run (e.g.
# "--partitions 32"); SIMDEX_SPARK_DRIVER_MEMORY (scripts/spark/run.sh) sizes
# the local master's one JVM, which holds the shuffled runs of a part.
#
# Work files go to SIMDEX_BENCH_DIR (default /tmp/simdex-sparkbench); the
# output also goes to scripts/bench/out/spark-<time>.txt (gitignored).
set -euo pipefail
cd "$(dirname "$0")/../.."
d="${1:-1000000}"
n="${2:-10000000}"
s="${3:-200000}"
steps=",${4:-docs,fp,scale},"
step() { [[ "$steps" == *",$1,"* ]]; }
work="${SIMDEX_BENCH_DIR:-/tmp/simdex-sparkbench}"
mkdir -p "$work" scripts/bench/out
out="scripts/bench/out/spark-$(date -u +%Y%m%dT%H%M%SZ).txt"
exec > >(tee "$out") 2>&1

scripts/spark/install.sh >/dev/null
go build -o "$work/bulkload" ./cmd/bulkload
go build -o "$work/gen" ./scripts/bench/bulkload
go build -o "$work/simdex-spark" ./cmd/simdex-spark
export SIMDEX_SPARK_WORKER="$work/simdex-spark"
hz="$(getconf CLK_TCK)"

# busy prints the machine's busy CPU time so far in jiffies (user, nice,
# system, irq, softirq, steal of /proc/stat's cpu line).
busy() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9; exit}' /proc/stat; }

# measure NAME COUNT CMD...: runs CMD, prints its wall time, the machine's
# CPU meanwhile, and both per document.
measure() {
	local name="$1" count="$2" t0 t1 c0 c1 wall cpu
	shift 2
	c0="$(busy)"
	t0="$(date +%s.%N)"
	"$@" >"$work/$name.log" 2>&1 || {
		tail -n 40 "$work/$name.log"
		echo "$name: failed" >&2
		exit 1
	}
	t1="$(date +%s.%N)"
	c1="$(busy)"
	wall="$(echo "$t1 - $t0" | bc -l)"
	cpu="$(echo "($c1 - $c0) / $hz" | bc -l)"
	printf '%-16s %10d docs %9.1f s wall %9.1f s CPU %10.0f docs/s %9.1f µs CPU/doc  (load %s)\n' \
		"$name" "$count" "$wall" "$cpu" "$(echo "$count / $wall" | bc -l)" "$(echo "$cpu * 1000000 / $count" | bc -l)" \
		"$(cut -d' ' -f1-3 /proc/loadavg)"
}

# run KIND INPUT COUNT MASTERS [SPARK-ARGS...]: the loads of one input, by
# cmd/bulkload and by Spark on local[m] for each m in MASTERS.
run() {
	local kind="$1" in="$2" count="$3" masters="$4"
	shift 4
	echo "== $kind: $count records from $in ($(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg))"
	rm -rf "$work/$kind.bulk" "$work/$kind.bulk.bulkload"
	measure "$kind-bulkload" "$count" "$work/bulkload" --data-dir "$work/$kind.bulk" --progress none "$in"
	for m in $masters; do
		rm -rf "$work/$kind.spark$m" "$work/$kind.work$m"
		# shellcheck disable=SC2086 # SIMDEX_BENCH_SPARK_ARGS is a list of arguments
		SIMDEX_SPARK_MASTER="local[$m]" measure "$kind-spark-local$m" "$count" \
			scripts/spark/run.sh --data-dir "$work/$kind.spark$m" --work-dir "$work/$kind.work$m" \
			${SIMDEX_BENCH_SPARK_ARGS:-} "$@" "$in"
		"$work/simdex-spark" compare "$work/$kind.bulk" "$work/$kind.spark$m" >"$work/$kind.compare$m.log" 2>&1 || {
			cat "$work/$kind.compare$m.log"
			echo "$kind-spark-local$m: the store differs from cmd/bulkload's" >&2
			exit 1
		}
		rm -rf "$work/$kind.spark$m" "$work/$kind.work$m"
	done
	echo "(every Spark store equal to cmd/bulkload's, cell for cell)"
	rm -rf "$work/$kind.bulk" "$work/$kind.bulk.bulkload"
}

docs="$work/docs$d.jsonl"
if step docs || step scale; then
	[ -s "$docs" ] || "$work/gen" -n "$d" -kind docs >"$docs"
fi
if step docs; then
	run docs "$docs" "$d" 2
fi
if step fp; then
	fps="$work/fp$n.csv"
	[ -s "$fps" ] || "$work/gen" -n "$n" -kind fp >"$fps"
	run fp "$fps" "$n" 2 --format fp
fi
if step scale; then
	head -n "$s" "$docs" >"$work/scale$s.jsonl"
	run scale "$work/scale$s.jsonl" "$s" "2 1"
fi
