#!/usr/bin/env bash
# The bulk loader's numbers of BENCHMARKS.md on the embedded store, in one
# run (each measured once):
#
#   1. N precomputed fingerprints (scripts/bench/bulkload's generator: times
#      over a year, 2% near-copies): wall time, CPU (user + sys) and CPU per
#      fingerprint, peak RSS against --memory, bytes per fingerprint per
#      table, and sampled lookups checked against brute force
#      (scripts/bench/storelookup -sizes -check);
#   2. compaction of that index after N/9 online-style inserts (delta cells),
#      so that 10% of the fingerprints are deltas (scripts/bench/compaction):
#      time and bytes before/after;
#   3. D ~1 KB text documents, half Chinese, half English: docs/s and the
#      share of the CPU profile spent fingerprinting, bytes per document per
#      table (the index gets LSH band rows, bulkload's default --bands auto);
#      with SIMDEX_BENCH_BANDS_AB=1 the same load with --bands off after it
#      (what the band cells cost).
#
#   scripts/bench/bulkload.sh [N] [D] [MEMORY] [STEPS]
#
# (defaults 10000000, 1000000, 1GiB, fp,compaction,docs). STEPS is a comma
# list of the steps above to run: "fp" alone is the 10^7 fingerprint load
# and its lookup check (about a minute on a quiet 2-core machine, plus the
# input's generation the first time); "compaction" needs the index "fp"
# left behind. The fp step also writes an allocation profile.
#
# Work files (inputs, stores, profiles) go to SIMDEX_BENCH_DIR (default
# /tmp/simdex-bulkbench); the output also goes to
# scripts/bench/out/bulkload-<time>.txt (gitignored). The machine's load
# average is printed before and after each step: on a shared machine CPU per
# fingerprint is the figure that compares across runs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
n="${1:-10000000}"
d="${2:-1000000}"
mem="${3:-1GiB}"
steps=",${4:-fp,compaction,docs},"
step() { [[ "$steps" == *",$1,"* ]]; }
work="${SIMDEX_BENCH_DIR:-/tmp/simdex-bulkbench}"
mkdir -p "$work"
bench_out bulkload
exec > >(tee "$out") 2>&1

go build -o "$work/bulkload" ./cmd/bulkload
go build -o "$work/gen" ./scripts/bench/bulkload
go build -o "$work/storelookup" ./scripts/bench/storelookup
go build -o "$work/compaction" ./scripts/bench/compaction
fps="$work/fp$n.csv"
docs="$work/docs$d.jsonl"
if step fp || step compaction; then
	[ -s "$fps" ] || "$work/gen" -n "$n" -kind fp >"$fps"
fi
if step docs; then
	[ -s "$docs" ] || "$work/gen" -n "$d" -kind docs >"$docs"
fi
tm() { /usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KB peak RSS" "$@"; }

if step fp; then
	echo "== $n precomputed fingerprints, --memory $mem ($(nproc) cores; $(uptime))"
	rm -rf "$work/dfp" "$work/dfp.bulkload"
	tm "$work/bulkload" --data-dir "$work/dfp" --memory "$mem" --progress none --cpuprofile "$work/fp.prof" --memprofile "$work/fp.mem" "$fps"
	echo "CPU per fingerprint = (user + sys) / $n"
	"$work/storelookup" -data-dir "$work/dfp" -input "$fps" -sizes -check 100 -goroutines ''
	echo "(load after: $(uptime))"
fi

if step compaction; then
	echo "== compaction with $((n / 9)) delta documents ($(uptime))"
	tm "$work/compaction" -data-dir "$work/dfp" -deltas $((n / 9)) | grep -v level=INFO
	echo "(load after: $(uptime))"
fi

step docs || exit 0
echo "== $d text documents ($(uptime))"
rm -rf "$work/ddocs" "$work/ddocs.bulkload"
tm "$work/bulkload" --data-dir "$work/ddocs" --memory "$mem" --progress none --cpuprofile "$work/docs.prof" "$docs"
go tool pprof -top -cum "$work/bulkload" "$work/docs.prof" 2>/dev/null |
	grep -E 'Total samples|fingerprint\.\(\*Fingerprinter\)\.Fingerprint$|processBatch.func1$' || true
echo "(load after: $(uptime))"
"$work/storelookup" -data-dir "$work/ddocs" -input "$docs" -sizes -goroutines ''
if [ "${SIMDEX_BENCH_BANDS_AB:-}" = 1 ]; then
	echo "== $d text documents, --bands off ($(uptime))"
	rm -rf "$work/ddocs" "$work/ddocs.bulkload"
	tm "$work/bulkload" --data-dir "$work/ddocs" --memory "$mem" --progress none --bands off "$docs"
	"$work/storelookup" -data-dir "$work/ddocs" -input "$docs" -sizes -goroutines ''
	echo "(load after: $(uptime))"
fi
