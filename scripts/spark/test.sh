#!/usr/bin/env bash
# The Spark backfill's CI test: on a local master (local[2,4]), the index the
# Spark job builds on the embedded store must equal cmd/bulkload's from the
# same input, cell for cell (simdex-spark compare scans every table of both
# stores), for JSON Lines documents (ids repeated within and across files,
# bad lines) and for CSV fingerprint lines; the documents' run has its first
# map task and its first write task fail halfway (the worker exits non-zero),
# which Spark retries, and the result must not change. A second load (new
# ids, copies of stored documents under new ids, stored ids with another
# text, ids repeated within it) into the embedded index the documents' run
# built must equal cmd/bulkload's second load into its index. The fingerprint
# lines are loaded into a new index without source-scoped rows
# (--source-attr -), which both must record alike, in as many parts as
# their count and --records-per-part give (the summary must say so).
#
# On HBase (the suite's, SIMDEX_HBASE_ZK, as scripts/test.sh exports it; in
# namespaces of its own, pre-split by simdexctl schema create, dropped at the
# end): the Spark job's documents load (its parts cut at the regions, the
# first map and write tasks failing once, a region of each table split
# before its HFiles are imported) must equal cmd/bulkload's HFile import of
# the same input, cell for cell with the index and band cells' timestamps,
# and so must the second load into the non-empty tables. Without
# SIMDEX_HBASE_ZK these runs skip, except under CI (CI=true), where they
# fail. About 3 minutes on a shared 2-core machine.
#
# The batch self-dedup (spark/simdex_dedup.py), on a generated corpus with
# planted near-duplicate groups (edited copies, copies of copies, a
# sentence added, truncations) among unrelated documents, short notes,
# one author's mails that share a long footer (only a restyled copy is a
# duplicate: the footer is template), quotations of a first sentence
# (found with --bands through the text key they share), a site's pages
# that share its header and footer (template among the site's pages, not
# overall: another site quotes one page's body; no two of them are a pair,
# though with --bands, which makes them candidates through the footer's text
# keys, the reference without the source attribute pairs the quoted page
# with every other),
# repeated ids and bad lines: its confirmed pairs and cluster ids must
# equal those of the single-process reference (simdex-spark
# dedup-reference: every pair of documents compared by brute force, judged
# by the same rule, clusters by union-find), every pair within k; once
# with components by label propagation on Spark, small input splits and
# the first dedup-map and dedup-judge tasks failing once, and once with
# LSH band pairs and union-find on the driver.
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
(cd "$repo" && go build -o "$tmp/simdex-spark" ./cmd/simdex-spark && go build -o "$tmp/bulkload" ./cmd/bulkload &&
	go build -o "$tmp/simdexctl" ./cmd/simdexctl)

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
with open(d + "/docs-c.jsonl", "w") as f:  # the second load
    stored = [json.loads(l) for l in open(d + "/docs-a.jsonl") if l.startswith("{") and '"text"' in l]
    for i in range(200):
        if i % 4 == 0:  # a copy of a stored document: its fingerprint and index entries are stored
            m = dict(stored[i * 3 % len(stored)])
            m["id"] = "more-%05d" % i
            f.write(json.dumps(m, ensure_ascii=False) + "\n")
        elif i % 10 == 7:  # a stored id with another text: the stored document is replaced
            f.write(doc(i + 20000, "doc-%05d" % (i * 3)) + "\n")
        else:
            f.write(doc(i + 20000, "more-%05d" % i) + "\n")
        if i % 23 == 5:
            f.write(doc(i + 30000, "more-%05d" % (i - 2)) + "\n")  # repeats an id of this load
with open(d + "/fps.csv", "w") as f:
    for i in range(5000):
        docid = "fp-%06d" % (i if i % 53 else i - 7)
        f.write("%s,%016x,%d\n" % (docid, r.getrandbits(64), 1767225600 + r.randrange(200 * 86400)))
    f.write("x,notafingerprint,1\n# a comment\n")
PY

spark_job() { # name args...: the job with its work directory and log named by name
	local name="$1"
	shift
	SIMDEX_SPARK_WORKER="$tmp/simdex-spark" "$here/run.sh" --work-dir "$tmp/$name.work" \
		--partitions 2 --sample 1000 ${FAIL_ONCE:+--fail-once "$FAIL_ONCE"} "$@" \
		>"$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log" >&2; echo "spark test: the $name job failed" >&2; exit 1; }
	grep '^simdex-backfill summary' "$tmp/$name.log"
}

run_job() { # name format inputs...: into the embedded store $tmp/name.spark
	local name="$1" format="$2"
	shift 2
	spark_job "$name" --data-dir "$tmp/$name.spark" --format "$format" "$@"
}

same_rejects() { # name bulkload-rejects-file
	local want got
	want=$(grep -c . "$2" || true)
	got=$(cat "$tmp/$1.work"/rejects/*.json | grep -c . || true)
	if [ "$want" != "$got" ]; then
		echo "spark test: FAIL: $1: $got rejects from the Spark job, $want from cmd/bulkload" >&2
		exit 1
	fi
}

check() { # name inputs...
	local name="$1"
	shift
	"$tmp/bulkload" --data-dir "$tmp/$name.bulk" "$@" 2>&1 | grep '^summary' || { echo "spark test: bulkload of $name failed" >&2; exit 1; }
	if ! "$tmp/simdex-spark" compare "$tmp/$name.bulk" "$tmp/$name.spark"; then
		echo "spark test: FAIL: the Spark job's $name index differs from cmd/bulkload's" >&2
		exit 1
	fi
	same_rejects "$name" "$tmp/$name.bulk.bulkload/rejects.jsonl"
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
echo "== spark: a second load into the non-empty embedded index"
spark_job more --data-dir "$tmp/docs.spark" "$tmp/docs-c.jsonl"
"$tmp/bulkload" --data-dir "$tmp/docs.bulk" --checkpoint-dir "$tmp/more.bulk.cp" "$tmp/docs-c.jsonl" 2>&1 | grep '^summary' ||
	{ echo "spark test: bulkload of the second load failed" >&2; exit 1; }
if ! "$tmp/simdex-spark" compare "$tmp/docs.bulk" "$tmp/docs.spark"; then
	echo "spark test: FAIL: the Spark job's second load differs from cmd/bulkload's" >&2
	exit 1
fi
passed=$((passed + 1))
echo "== spark: fingerprint lines (parts chosen from the input's size: 5002 lines with an id, 1200 per part)"
run_job fps fp --source-attr - --partitions 0 --records-per-part 1200 "$tmp/fps.csv"
check fps --source-attr - "$tmp/fps.csv"
"$home/venv/bin/python" - "$repo/spark" "$tmp/fps.work/summary.json" <<'PY' || { echo "spark test: FAIL: the part count" >&2; exit 1; }
import json, sys
sys.path.insert(0, sys.argv[1])
import io
from simdex_backfill import BATCH_BYTES, MapBatches, choose_parts
# Map outputs: small records batched, each run in a batch of its own, read back unchanged.
out = [("r", 0, "id-%d" % i, i, i, "f", 0, 0, None, None) for i in range(5000)]
out += [("b", p, None, 0, 0, None, 0, 0, None, b"c" * BATCH_BYTES * 2) for p in range(8)] + [("e", 0, None, 0, 0, None, 0, 0, "{}", None)]
batches = list(MapBatches()._batched(iter(out)))
assert [len(b) for b in batches if b[0][0] == "b"] == [1] * 8, [len(b) for b in batches]
buf = io.BytesIO()
MapBatches().dump_stream(iter(out), buf)
buf.seek(0)
assert list(MapBatches().load_stream(buf)) == out
assert choose_parts(10**7, 0, 2, 10**6) == (10, "records")
assert choose_parts(4 * 10**6 + 1, 0, 2, 10**6) == (5, "records")
assert choose_parts(4 * 10**6, 0, 2, 10**6) == (4, "parallelism")
assert choose_parts(0, 0, 2, 10**6) == (4, "parallelism")
assert choose_parts(10**9, 32, 2, 10**6) == (32, "--partitions")
s = json.load(open(sys.argv[2]))
got = (s["input_records"], s["parts_per_table"], s["parts_chosen_by"], s["records_per_part"], s["tables"]["index"]["parts"])
assert got == (5002, 5, "records", 1200, 5), "input records, parts per table, chosen by, records per part, index parts: %s" % (got,)
PY
passed=$((passed + 1))

# HBase: the same documents, and the second load, into namespaces of its own.
if [ -n "${SIMDEX_HBASE_ZK:-}" ]; then
	nsb="sparktest_bulk_$$" nss="sparktest_spark_$$"
	drop_namespaces() {
		for ns in "$nsb" "$nss"; do
			"$tmp/simdexctl" schema drop --yes --hbase-namespace "$ns" >/dev/null 2>&1 || echo "spark test: dropping $ns failed" >&2
		done
	}
	trap 'drop_namespaces; rm -rf "$tmp"' EXIT
	for ns in "$nsb" "$nss"; do
		"$tmp/simdexctl" schema create --hbase-namespace "$ns" --index-regions 8 >"$tmp/schema-$ns.log" 2>&1 ||
			{ cat "$tmp/schema-$ns.log" >&2; echo "spark test: schema create $ns failed" >&2; exit 1; }
	done
	hbase_bulk() { # name inputs...
		local name="$1"
		shift
		"$tmp/bulkload" --store hbase --hbase-namespace "$nsb" --hbase-import hfile --checkpoint-dir "$tmp/$name.bulk.cp" \
			--progress none "$@" 2>&1 | grep '^summary' || { echo "spark test: bulkload of $name into HBase failed" >&2; exit 1; }
	}
	hbase_same() { # what
		if ! "$tmp/simdex-spark" compare "hbase:$nsb" "hbase:$nss"; then
			echo "spark test: FAIL: the Spark job's $1 into HBase differs from cmd/bulkload's" >&2
			exit 1
		fi
	}
	echo "== spark: documents into HBase (parts cut at the regions; first map and write tasks fail once; regions split before the imports)"
	FAIL_ONCE="$tmp/hfail" spark_job hbase --store hbase --hbase-namespace "$nss" --split-before-import \
		"$tmp/docs-a.jsonl" "$tmp/docs-b.jsonl"
	for stage in map write; do
		if [ ! -e "$tmp/hfail.$stage" ]; then
			echo "spark test: FAIL: no $stage task of the HBase job was made to fail" >&2
			exit 1
		fi
	done
	"$home/venv/bin/python" - "$tmp/hbase.work/summary.json" <<'PY' || { echo "spark test: FAIL: HBase summary" >&2; exit 1; }
import json, sys
s = json.load(open(sys.argv[1]))
assert s["tables"]["index"]["parts"] >= 8, "index parts %s: want them cut at the 8 regions" % s["tables"]["index"]
assert s["hfiles_imported"] > s["files"], "no HFile was cut again after the splits: %s" % s
PY
	hbase_bulk hbase "$tmp/docs-a.jsonl" "$tmp/docs-b.jsonl"
	hbase_same "documents load"
	same_rejects hbase "$tmp/hbase.bulk.cp/rejects.jsonl"
	passed=$((passed + 1))
	echo "== spark: a second load into the non-empty HBase tables"
	spark_job hbase-more --store hbase --hbase-namespace "$nss" "$tmp/docs-c.jsonl"
	hbase_bulk hbase-more "$tmp/docs-c.jsonl"
	hbase_same "second load"
	passed=$((passed + 1))
	drop_namespaces
	trap 'rm -rf "$tmp"' EXIT
elif [ "${CI:-}" = true ]; then
	echo "spark test: FAIL: CI=true but SIMDEX_HBASE_ZK names no HBase" >&2
	exit 1
else
	echo "== spark: HBase runs skipped (no SIMDEX_HBASE_ZK)"
fi

# The self-dedup's corpus: planted groups (an original, a chain of copies
# each a word away from the last, a copy with a sentence added, a
# truncation), unrelated documents, short notes, repeated ids, bad lines.
"$home/venv/bin/python" - "$tmp" "$repo/internal/testmails/list-mails.json" <<'PY'
import json, random, sys
d = sys.argv[1]
mails = json.load(open(sys.argv[2]))
r = random.Random(17)
vocab = ["".join(r.choice("bcdfghjklmnprstvz") + r.choice("aeiou") for _ in range(r.randint(2, 4))) for _ in range(3000)]
def sentence():
    return " ".join(r.choice(vocab) for _ in range(r.randint(8, 18))) + "."
def text(n):
    return [sentence() for _ in range(n)]
def edit(s):
    s = list(s)
    i = r.randrange(len(s))
    w = s[i].split()
    w[r.randrange(len(w))] = r.choice(vocab)
    s[i] = " ".join(w)
    return s
out = [[], []]
n = [0]
def add(sents):
    doc = {"id": "d%05d" % n[0], "text": " ".join(sents), "time": "2026-%02d-%02dT00:00:00Z" % (1 + n[0] % 12, 1 + n[0] % 28)}
    if n[0] % 3 == 0:
        doc["title"] = " ".join(sents[0].split()[:4])
    out[r.randrange(2)].append(json.dumps(doc))
    n[0] += 1
for g in range(150):
    orig = text(r.randint(6, 20))
    add(orig)
    prev = orig
    for _ in range(1 + g % 8):
        prev = edit(prev)
        add(prev)
    if g % 2 == 0:
        add(edit(orig) + [sentence()])
    if g % 3 == 0:
        add(orig[: max(2, len(orig) * 2 // 3)])
    if g % 4 == 0:  # a quotation of the first sentence: found through their text key
        out[g % 2].append(json.dumps({"id": "quote-%d" % g, "text": orig[0], "time": "2026-04-01T00:00:00Z"}))
for _ in range(1500):
    add(text(r.randint(3, 20)))
for i in range(30):
    add(["A short note about %s." % vocab[i]])
# One author's mails on a list: one-sentence bodies above a long shared
# footer (within a few bits of each other), and a restyled copy of the
# first; only the copy is a duplicate, once the footer is template.
def mail(body):
    return body + "\n\n" + "\n".join(mails["footer"]) + "\n"
for i, b in enumerate(mails["bodies"] + [mails["new"]]):
    out[i % 2].append(json.dumps({"id": "mail-%d" % i, "text": mail(b), "time": "2026-03-01T00:00:00Z"}))
out[1].append(json.dumps({"id": "mail-copy", "text": mail(mails["bodies"][0]).replace(".", " !"), "time": "2026-03-02T00:00:00Z"}))
# A site's pages (attribute source): one-sentence bodies between the
# site's header and footer, which six pages carry; a digest of another
# site quotes the last page's body. Over the set, that page's rarest
# sentence is in two documents, so a sentence is template overall only
# from 9 (3 x (2+1)) and the footer is not; among the site's pages its
# body is in one, so six make the footer the site's template.
site_header = "Makers forum post from the hardware working group of the valley cooperative."
site_footer = [
    "Tomas Lindqvist, hardware lead at the valley makers cooperative.",
    "Please post questions in the open forum and not in private messages to the team.",
    "The best way to test a circuit board is to power it up twice.",
    "You are reading this post because you follow the makers forum.",
    "To stop following this forum open your settings page and press the button.",
    "The forum archives are public and searchable by anyone on the web.",
    "Posts with pictures larger than two megabytes wait for a moderator.",
    "Be patient with beginners and assume good faith in every thread you join.",
    "The code of conduct of the cooperative applies to this forum and its chat rooms.",
    "Report abuse to the stewards, whose names appear on the community page.",
    "Monthly workshop notes are posted on the wiki every first Monday.",
    "Safety reports go to the private safety address and never to this forum.",
]
site_bodies = [
    "The soldering station in the back room needs a new tip before the workshop on Saturday.",
    "We ordered twenty more microcontroller boards so that every pupil can take one home.",
    "Could somebody bring a spare power supply for the laser cutter next week?",
    "The printer jammed again because the filament spool got tangled overnight.",
    "Our stand at the town fair will show the weather station the youth group built.",
    "The meeting about the tool budget moves to the library annex on the second floor.",
]
def site_page(body):
    return site_header + "\n" + body + "\n\n" + "\n".join(site_footer) + "\n"
for i, b in enumerate(site_bodies):
    docid = "site-new" if i == len(site_bodies) - 1 else "site-page-%d" % i
    out[i % 2].append(json.dumps({"id": docid, "text": site_page(b), "time": "2026-03-03T00:00:00Z",
                                  "attrs": {"source": "makers.example.org"}}))
digest = ["The monthly digest of the regional maker spaces collects what their forums discussed.",
          "Two spaces announced new opening hours and one closed its old workshop downtown.",
          "On the valley forum one post stood out among the many about broken tools.",
          site_bodies[-1],
          "The repair cafes asked for more volunteers before the summer fair.",
          "Next month the digest covers the electronics course and the accessibility audit."]
out[0].append(json.dumps({"id": "digest", "text": "\n".join(digest) + "\n", "time": "2026-03-04T00:00:00Z",
                          "attrs": {"source": "digest.example.net"}}))
for i in range(8):  # repeated ids: the later file's record wins
    out[1].append(json.dumps({"id": "d%05d" % (i * 11), "text": " ".join(text(6)), "time": "2026-05-01T00:00:00Z"}))
out[0] += ['{"id":"bad","text":"x","time":"tomorrow"}', "not json"]
for f in range(2):
    with open("%s/dedup-%d.jsonl" % (d, f), "w") as fh:
        fh.write("\n".join(out[f]) + "\n")
PY

dedup_check() { # name [flags...]: the job against the reference on the dedup corpus
	local name="$1"
	shift
	local bands=""
	case " $* " in *" --bands "*) bands="--bands" ;; esac
	"$tmp/simdex-spark" dedup-reference $bands --out "$tmp/$name.ref" "$tmp/dedup-0.jsonl" "$tmp/dedup-1.jsonl" ||
		{ echo "spark test: the $name reference failed" >&2; exit 1; }
	# With bands (the site's pages are candidates through their footer's
	# text keys, being beyond k of each other), the reference without
	# per-source counting: what the site's pages give if their source is
	# not counted.
	: >"$tmp/$name.nosource.jsonl"
	if [ -n "$bands" ]; then
		"$tmp/simdex-spark" dedup-reference $bands --source-attr - --out "$tmp/$name.nosource" "$tmp/dedup-0.jsonl" "$tmp/dedup-1.jsonl" \
			>/dev/null || { echo "spark test: the $name reference without sources failed" >&2; exit 1; }
		cp "$tmp/$name.nosource/pairs.jsonl" "$tmp/$name.nosource.jsonl"
	fi
	SIMDEX_SPARK_WORKER="$tmp/simdex-spark" "$here/dedup.sh" --out "$tmp/$name.out" "$@" "$tmp/dedup-0.jsonl" "$tmp/dedup-1.jsonl" \
		>"$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log" >&2; echo "spark test: the $name job failed" >&2; exit 1; }
	grep '^simdex-dedup summary' "$tmp/$name.log"
	if ! "$tmp/simdex-spark" dedup-compare $bands "$tmp/$name.ref" "$tmp/$name.out"; then
		echo "spark test: FAIL: the $name job's pairs or clusters differ from the reference" >&2
		exit 1
	fi
	"$home/venv/bin/python" - "$tmp/$name.out/summary.json" "$tmp/$name.nosource.jsonl" "$@" <<'PY' || { echo "spark test: FAIL: $name summary" >&2; exit 1; }
import json, sys
s = json.load(open(sys.argv[1]))
nosource = [json.loads(l) for l in open(sys.argv[2])]
flags = sys.argv[3:]
assert s["confirmed_pairs"] >= 500 and s["largest_cluster"] >= 5, "too few planted duplicates found: %s" % s
if "spark" in flags:
    assert s["components"] == "spark" and s["label_propagation_rounds"] >= 2, s
if "--bands" in flags:
    assert s["confirmed_beyond_k"] > 0 and s["band_candidate_pairs"] > 0 and s["text_key_candidate_pairs"] > 0, s
import glob
pairs = [json.loads(l) for f in glob.glob(sys.argv[1].rsplit("/", 1)[0] + "/pairs.jsonl/*.json") for l in open(f)]
mail = [(p["id_a"], p["id_b"]) for p in pairs if p["id_a"].startswith("mail-")]
assert mail == [("mail-0", "mail-copy")], "list mails: want only the copy paired with its original: %s" % mail
quotes = [p for p in pairs if p["id_a"].startswith("quote-") or p["id_b"].startswith("quote-")]
assert ("--bands" in flags) == (len(quotes) > 0), "quotation pairs %d with flags %s" % (len(quotes), flags)
site = [(p["id_a"], p["id_b"]) for p in pairs if p["id_a"].startswith("site-") and p["id_b"].startswith("site-")]
assert site == [], "the site's pages share only its template, yet are paired: %s" % site
if "--bands" in flags:
    blind = [(p["id_a"], p["id_b"]) for p in nosource if p["id_a"] == "site-new" and p["id_b"].startswith("site-page-")]
    assert blind, "test corpus: without per-source counting the quoted page should pair with the site's pages by the footer"
PY
}

echo "== spark: batch self-dedup (label propagation on Spark; first dedup-map and dedup-judge tasks fail once)"
dedup_check dedup --components spark --split-bytes 400000 --fail-once "$tmp/dfail"
for stage in dedup-map dedup-judge; do
	if [ ! -e "$tmp/dfail.$stage" ] || ! grep -q "simdex-spark $stage exited with status" "$tmp/dedup.log"; then
		echo "spark test: FAIL: no $stage task was made to fail and retried" >&2
		exit 1
	fi
done
passed=$((passed + 1))
echo "== spark: batch self-dedup with LSH band pairs (union-find on the driver)"
dedup_check dedup-bands --bands --components driver
passed=$((passed + 1))
echo "spark: $passed passed, 0 failed"
