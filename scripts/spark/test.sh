#!/usr/bin/env bash
# The Spark backfill's CI test: on a local master (local[2,4]), the index the
# Spark job builds on the embedded store must equal cmd/bulkload's from the
# same input, cell for cell (simdex-spark compare scans every table of both
# stores), for JSON Lines documents (ids repeated within and across files,
# bad lines) and for CSV fingerprint lines; the documents' run has its first
# map task and its first write task fail halfway (the worker exits non-zero),
# which Spark retries, and the result must not change.
#
# Installs PySpark (scripts/spark/install.sh) when needed. Everything it
# makes is under a temporary directory, removed at the end.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
home="${SIMDEX_SPARK_HOME:-$repo/.spark}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/simdex-spark-test.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

"$here/install.sh"
(cd "$repo" && go build -o "$tmp/simdex-spark" ./cmd/simdex-spark && go build -o "$tmp/bulkload" ./cmd/bulkload)

# Input: two files of documents (near-copies, short notes, ids repeated
# within a file and across the files, bad lines) and fingerprint lines.
"$home/venv/bin/python" - "$tmp" <<'PY'
import json, random, sys
d = sys.argv[1]
r = random.Random(7)
vocab = ["".join(r.choice("bcdfghjklmnprstvz") + r.choice("aeiou") for _ in range(r.randint(2, 4))) for _ in range(2000)]
texts = []
def doc(i, docid):
    if i % 7 == 3 and texts:
        w = r.choice(texts).split()
        w[r.randrange(len(w))] = r.choice(vocab)
        text = " ".join(w)
    elif i % 11 == 5:
        text = "A short note about " + r.choice(vocab) + "."
    else:
        text = " ".join(r.choice(vocab) for _ in range(r.randint(30, 250))) + "."
    texts.append(text)
    m = {"id": docid, "text": text, "time": "2026-%02d-%02dT%02d:00:00Z" % (1 + i % 6, 1 + i % 28, i % 24)}
    if i % 3 == 0:
        m["title"] = " ".join(text.split()[:4])
        m["attrs"] = {"source": "feed-%d" % (i % 4)}
    return json.dumps(m, ensure_ascii=False)
with open(d + "/docs-a.jsonl", "w") as f:
    for i in range(800):
        f.write(doc(i, "doc-%05d" % i) + "\n")
        if i % 41 == 7:
            f.write(doc(i + 5000, "doc-%05d" % (i - 3)) + "\n")  # repeats an earlier id
        if i % 97 == 13:
            f.write('{"id":"bad-%d","text":"x","time":"tomorrow"}\n' % i)
            f.write('not json\n')
with open(d + "/docs-b.jsonl", "w") as f:
    for i in range(300):
        docid = "doc-%05d" % (i * 2 if i % 9 == 0 else 10000 + i)  # some repeat ids of docs-a
        f.write(doc(i + 9000, docid) + "\n")
with open(d + "/fps.csv", "w") as f:
    for i in range(5000):
        docid = "fp-%06d" % (i if i % 53 else i - 7)
        f.write("%s,%016x,%d\n" % (docid, r.getrandbits(64), 1767225600 + r.randrange(200 * 86400)))
    f.write("x,notafingerprint,1\n# a comment\n")
PY

run_job() { # name format inputs...
	local name="$1" format="$2"
	shift 2
	SIMDEX_SPARK_WORKER="$tmp/simdex-spark" "$here/run.sh" --data-dir "$tmp/$name.spark" --work-dir "$tmp/$name.work" \
		--format "$format" --partitions 2 --sample 1000 ${FAIL_ONCE:+--fail-once "$FAIL_ONCE"} "$@" \
		>"$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log" >&2; echo "spark test: the $name job failed" >&2; exit 1; }
	grep '^simdex-backfill summary' "$tmp/$name.log"
}

check() { # name inputs...
	local name="$1"
	shift
	"$tmp/bulkload" --data-dir "$tmp/$name.bulk" "$@" 2>&1 | grep '^summary' || { echo "spark test: bulkload of $name failed" >&2; exit 1; }
	if ! "$tmp/simdex-spark" compare "$tmp/$name.bulk" "$tmp/$name.spark"; then
		echo "spark test: FAIL: the Spark job's $name index differs from cmd/bulkload's" >&2
		exit 1
	fi
	local want got
	want=$(grep -c . "$tmp/$name.bulk.bulkload/rejects.jsonl" || true)
	got=$(cat "$tmp/$name.work"/rejects/*.json | grep -c . || true)
	if [ "$want" != "$got" ]; then
		echo "spark test: FAIL: $name: $got rejects from the Spark job, $want from cmd/bulkload" >&2
		exit 1
	fi
}

passed=0
echo "== spark: documents (first map and write tasks fail once and are retried)"
FAIL_ONCE="$tmp/fail" run_job docs docs "$tmp/docs-a.jsonl" "$tmp/docs-b.jsonl"
for stage in map write; do
	if [ ! -e "$tmp/fail.$stage" ]; then
		echo "spark test: FAIL: no $stage task was made to fail" >&2
		exit 1
	fi
done
if ! grep -q 'simdex-spark map exited with status' "$tmp/docs.log" || ! grep -q 'simdex-spark write of part' "$tmp/docs.log"; then
	echo "spark test: FAIL: the log shows no failed task" >&2
	exit 1
fi
check docs "$tmp/docs-a.jsonl" "$tmp/docs-b.jsonl"
passed=$((passed + 1))
echo "== spark: fingerprint lines"
run_job fps fp "$tmp/fps.csv"
check fps "$tmp/fps.csv"
passed=$((passed + 1))
echo "spark: $passed passed, 0 failed"
