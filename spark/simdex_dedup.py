"""simdex batch self-dedup on Apache Spark.

Finds every pair of near-duplicate documents in a set (Manku, Jain, Das
Sarma, WWW 2007, batch mode) and clusters them: each pair of documents
within Hamming distance k of each other (optionally also pairs beyond k that
share an LSH band row, for texts), confirmed by simdex's decision rule, and
the connected components of the confirmed pairs, each named by its smallest
document id. Everything that reads a document runs in simdex's own Go code,
the simdex-spark binary shipped with the job (internal/sparkjob, dedup.go);
Spark reads the input, groups, joins and moves rows:

  1. each input partition is piped through `simdex-spark dedup-map`: every
     line is fingerprinted and encoded as a load would store it, and comes
     back as one row: id, fingerprint, its block keys (one per table of the
     block-permutation layout), its LSH band hashes (--bands), its text keys,
     the same keys scoped to its source (when the attribute --source-attr
     names one) and its docs cell; bad lines come back as rejects;
  2. the last record of a repeated id wins (input order: files by path,
     then position), as in a load; the documents that keyed each text key
     are counted (what an index's text-key rows would hold), and those that
     keyed each scoped key (the rows an index keeps per source);
  3. candidate pairs: documents are grouped by (table, block key) and paired
     within each group when their fingerprints are within k; a pair is kept
     by the first table whose keys the two share, so it is emitted once
     (with --bands, pairs beyond k are likewise paired by their first shared
     band, and pairs beyond k that share no band by the smallest text key
     they share among those of at most the worker's text_key_max_docs
     documents: the candidates a check finds through band and text-key
     rows);
  4. candidate pairs, with both docs cells and the counts of both
     documents' text keys, overall and among each one's source's documents
     (from which the rule learns what of each is template: signatures,
     footers, site furniture, overall or in its source), are piped through
     `simdex-spark dedup-judge`, which keeps the pairs the rule confirms;
  5. connected components of the confirmed pairs: union-find in
     `simdex-spark dedup-components` on the driver when the pairs are few
     (--driver-max-pairs), else min-label propagation with pointer jumping
     in DataFrames until no label changes (--components);
  6. OUT/pairs.parquet and OUT/pairs.jsonl (id_a, id_b, distance, relation,
     resemblance, clause), OUT/clusters.parquet and OUT/clusters.jsonl (id,
     cluster, cluster_size), OUT/rejects.jsonl and OUT/summary.json.

Run it with spark-submit (scripts/spark/dedup.sh does, on a local master);
docs/OPERATIONS.md, "Batch self-dedup".
"""

import argparse
import io
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

from pyspark import SparkFiles, StorageLevel
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

ORDER_SHIFT = 40  # order = partition index << 40 | line within the partition


def parse_args(argv):
    p = argparse.ArgumentParser(prog="simdex_dedup.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="the output directory (any file system Spark writes)")
    p.add_argument("--work-dir", default="",
                   help="scratch directory seen by driver and executors (default OUT/_work, removed at the end)")
    p.add_argument("--worker", required=True, help="the simdex-spark binary (on the driver; shipped to the executors)")
    p.add_argument("--format", choices=["docs", "fp", "parquet"], default="docs",
                   help="docs: JSON Lines; fp: id,fingerprint,time lines; parquet: columns id, title, text, time, attrs")
    p.add_argument("--k", type=int, default=3, help="largest Hamming distance of a pair (at most --layout-k)")
    p.add_argument("--layout-b", type=int, default=4, help="blocks of the block-permutation layout")
    p.add_argument("--layout-k", type=int, default=3, help="distance the layout guarantees (C(B, B-K) tables)")
    p.add_argument("--bands", action="store_true",
                   help="also pairs beyond k that share an LSH band row or a text key (texts), as a check finds them")
    p.add_argument("--policy", choices=["copy", "default", "near_identical"], default="copy",
                   help="relations that confirm a pair, in either direction")
    p.add_argument("--source-attr", default="source",
                   help="document attribute naming its source (site, list), whose sentences are also counted per "
                        "source to learn its template, as the server's and cmd/bulkload's --source-attr for a new "
                        "index: - for none")
    p.add_argument("--components", choices=["auto", "driver", "spark"], default="auto",
                   help="connected components: union-find on the driver, label propagation on Spark, or auto")
    p.add_argument("--driver-max-pairs", type=int, default=1000000,
                   help="auto: union-find on the driver up to this many confirmed pairs")
    p.add_argument("--max-iterations", type=int, default=60, help="label propagation: give up after this many rounds")
    p.add_argument("--all-documents", action="store_true",
                   help="clusters: every document (a singleton is its own cluster), not only those in a pair")
    p.add_argument("--split-bytes", type=int, default=0,
                   help="largest input split in bytes (spark.sql.files.maxPartitionBytes; default Spark's, 128 MB)")
    p.add_argument("--fail-once", default="",
                   help="testing: the first dedup-map and the first dedup-judge task fail (marker files PATH.dedup-map, PATH.dedup-judge)")
    p.add_argument("inputs", nargs="+", help="files, directories or globs, on any file system Spark reads")
    return p.parse_args(argv)


def executable(name):
    """The shipped worker binary, made executable (addFile may drop the bit)."""
    path = SparkFiles.get(name)
    if not os.access(path, os.X_OK):
        try:
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        except OSError:
            tmp = os.path.join(tempfile.mkdtemp(prefix="simdex-spark-"), name)
            shutil.copy(path, tmp)
            os.chmod(tmp, 0o755)
            path = tmp
    return path


def worker_env(fail_once):
    env = dict(os.environ)
    if fail_once:
        env["SIMDEX_SPARK_FAIL_ONCE"] = fail_once
    return env


def read_frames(stream):
    while True:
        h = stream.read(5)
        if not h:
            return
        if len(h) < 5:
            raise RuntimeError("simdex-spark: truncated frame header")
        n = struct.unpack(">I", h[1:])[0]
        payload = stream.read(n)
        if len(payload) < n:
            raise RuntimeError("simdex-spark: truncated frame")
        yield h[0], payload


def uvarint(b, i):
    x, s = 0, 0
    while True:
        c = b[i]
        i += 1
        x |= (c & 0x7F) << s
        if c < 0x80:
            return x, i
        s += 7


def put_uvarint(x):
    out = bytearray()
    while x >= 0x80:
        out.append((x & 0x7F) | 0x80)
        x >>= 7
    out.append(x)
    return bytes(out)


def worker_flags(cfg):
    return ["--format", cfg["format"], "--k", str(cfg["k"]), "--layout-b", str(cfg["layout_b"]),
            "--layout-k", str(cfg["layout_k"]), "--policy", cfg["policy"], "--source-attr", cfg["source_attr"]] + \
        (["--bands"] if cfg["bands"] else [])


def worker_cmd(cfg, step):
    return [executable(cfg["worker"]), step] + worker_flags(cfg)


# Rows of the map stage: (kind, id, order, fp, file, start, line, keys, bands, cell, text, text keys,
# scoped keys).
def dedup_map(cfg):
    """Pipes one input partition through `simdex-spark dedup-map`."""

    def run(pidx, rows):
        proc = subprocess.Popen(worker_cmd(cfg, "dedup-map"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                env=worker_env(cfg["fail_once"]))
        splits = []  # (first line in the partition, file, split start)

        def feed():
            try:
                n, cur = 0, None
                for r in rows:
                    key = (r.file, r.start)
                    if key != cur:
                        splits.append((n, r.file, r.start))
                        cur = key
                    order = pidx << ORDER_SHIFT | n
                    proc.stdin.write(b"%d\t%d\t" % (order, order) + r.value.encode("utf-8", "surrogateescape") + b"\n")
                    n += 1
            except Exception:  # a dead worker: its exit status says why
                pass
            finally:
                try:
                    proc.stdin.close()
                except OSError:
                    pass

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()

        def locate(order):
            line = order & ((1 << ORDER_SHIFT) - 1)
            lo, hi = 0, len(splits) - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if splits[mid][0] <= line:
                    lo = mid
                else:
                    hi = mid - 1
            first, f, start = splits[lo]
            return f, start, line - first + 1

        end = None
        for kind, p in read_frames(proc.stdout):
            if kind == ord("d"):
                order, fp = struct.unpack_from(">Qq", p, 0)
                i = 16
                nk = p[i]
                keys = list(struct.unpack_from(">%dq" % nk, p, i + 1))
                i += 1 + 8 * nk
                nb = p[i]
                bands = list(struct.unpack_from(">%dq" % nb, p, i + 1))
                i += 1 + 8 * nb
                nt = p[i]
                tkeys = list(struct.unpack_from(">%dq" % nt, p, i + 1))
                i += 1 + 8 * nt
                ns = p[i]
                skeys = list(struct.unpack_from(">%dq" % ns, p, i + 1))
                i += 1 + 8 * ns
                n, i = uvarint(p, i)
                docid = p[i:i + n].decode("utf-8")
                f, start, _ = locate(order)
                yield ("d", docid, order, fp, f, start, 0, keys, bands, bytes(p[i + n:]), None, tkeys, skeys)
            elif kind == ord("x"):
                x = json.loads(p)
                f, start, line = locate(int(x["where"]))
                yield ("x", None, 0, 0, f, start, line, None, None, None, x["reason"], None, None)
            elif kind == ord("e"):
                end = p
        feeder.join()
        rc = proc.wait()
        if rc != 0 or end is None:
            raise RuntimeError("simdex-spark dedup-map exited with status %d (its stderr is in the executor's log)" % rc)
        yield ("e", None, 0, 0, None, 0, 0, None, None, None, end.decode(), None, None)

    return run


def put_keydocs(kd):
    """A side's text-key counts in a pair frame (overall, or in its source:
    the same keys, unscoped): uvarint n, then each key (8 bytes) and its
    count (uvarint)."""
    kd = kd or []
    return put_uvarint(len(kd)) + b"".join(struct.pack(">q", r.tk) + put_uvarint(r.n) for r in kd)


def dedup_judge(cfg):
    """Pipes one partition of candidate pairs through `simdex-spark dedup-judge`."""

    def run(rows):
        proc = subprocess.Popen(worker_cmd(cfg, "dedup-judge"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                env=worker_env(cfg["fail_once"]))

        def feed():
            try:
                for r in rows:
                    payload = b"".join(put_uvarint(len(x)) + x for x in (
                        r.id_a.encode("utf-8"), bytes(r.cell_a), r.id_b.encode("utf-8"), bytes(r.cell_b)))
                    payload += put_keydocs(r.kd_a) + put_keydocs(r.kd_b) + put_keydocs(r.skd_a) + put_keydocs(r.skd_b)
                    proc.stdin.write(b"p" + struct.pack(">I", len(payload)) + payload)
            except Exception:  # a dead worker: its exit status says why
                pass
            finally:
                try:
                    proc.stdin.close()
                except OSError:
                    pass

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        end = None
        for kind, p in read_frames(proc.stdout):
            if kind == ord("c"):
                c = json.loads(p)
                yield ("c", c["id_a"], c["id_b"], c["distance"], c["relation"], float(c["resemblance"]), c["clause"])
            elif kind == ord("e"):
                end = p
        feeder.join()
        rc = proc.wait()
        if rc != 0 or end is None:
            raise RuntimeError("simdex-spark dedup-judge exited with status %d (its stderr is in the executor's log)" % rc)
        yield ("e", None, None, 0, None, 0.0, end.decode())

    return run


def read_input(spark, args):
    if args.format == "parquet":
        df = spark.read.parquet(*args.inputs)
        cols = [c for c in ["id", "title", "text", "time", "attrs"] if c in df.columns]
        df = df.select(F.to_json(F.struct(*cols)).alias("value"), "_metadata")
    else:
        df = spark.read.text(args.inputs)
        df = df.select("value", "_metadata")
    return df.select("value", F.col("_metadata.file_path").alias("file"),
                     F.col("_metadata.file_block_start").alias("start"))


def hadoop_fs(spark, path):
    jvm = spark.sparkContext._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    return p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), p


def write_text(spark, path, text):
    """Writes a small file on any file system Spark writes."""
    fs, p = hadoop_fs(spark, path)
    out = fs.create(p, True)
    out.write(bytearray(text.encode("utf-8")))
    out.close()


def first_shared(a, b):
    """The index of the first position where arrays a and b hold equal values (-1: none)."""
    return F.array_position(F.zip_with(a, b, lambda x, y: x == y), True) - 1


def candidate_pairs(docs, column, k, within):
    """Pairs of documents that share a value of array column `column` at the
    same position, emitted by the first such position: within k (block keys)
    or beyond k (bands)."""
    side = docs.select("id", "fp", column, F.posexplode(column).alias("pos", "key"))
    a = side.select(*[F.col(c).alias(c + "_a") for c in ["id", "fp", column, "pos", "key"]])
    b = side.select(*[F.col(c).alias(c + "_b") for c in ["id", "fp", column, "pos", "key"]])
    dist = F.bit_count(F.col("fp_a").bitwiseXOR(F.col("fp_b")))
    j = a.join(b, (F.col("pos_a") == F.col("pos_b")) & (F.col("key_a") == F.col("key_b")) & (F.col("id_a") < F.col("id_b")))
    j = j.where(dist <= k if within else dist > k)
    j = j.where(first_shared(F.col(column + "_a"), F.col(column + "_b")) == F.col("pos_a"))
    return j.select("id_a", "id_b")


def text_key_pairs(docs, k):
    """Pairs beyond k that share no band but a text key of column `small`
    (the keys of at most text_key_max_docs documents), each emitted by the
    smallest key the two share."""
    cols = ["id", "fp", "bands", "small", "key"]
    side = docs.select("id", "fp", "bands", "small", F.explode("small").alias("key"))
    a = side.select(*[F.col(c).alias(c + "_a") for c in cols])
    b = side.select(*[F.col(c).alias(c + "_b") for c in cols])
    dist = F.bit_count(F.col("fp_a").bitwiseXOR(F.col("fp_b")))
    j = a.join(b, (F.col("key_a") == F.col("key_b")) & (F.col("id_a") < F.col("id_b")))
    j = j.where(dist > k).where(first_shared(F.col("bands_a"), F.col("bands_b")) < 0)
    j = j.where(F.array_min(F.array_intersect(F.col("small_a"), F.col("small_b"))) == F.col("key_a"))
    return j.select("id_a", "id_b")


def components_driver(spark, args, pairs, work):
    """Union-find in `simdex-spark dedup-components` on the driver, fed by
    the pairs partition by partition; its output is copied to the work
    directory and read back as a DataFrame."""
    tmpdir = tempfile.mkdtemp(prefix="simdex-dedup-")
    local = os.path.join(tmpdir, "components.tsv")
    try:
        with open(local, "wb") as out:
            proc = subprocess.Popen([os.path.abspath(args.worker), "dedup-components"], stdin=subprocess.PIPE, stdout=out)
            try:
                for r in pairs.select("id_a", "id_b").toLocalIterator():
                    proc.stdin.write(("%s\t%s\n" % (r.id_a, r.id_b)).encode("utf-8"))
            finally:
                proc.stdin.close()
            if proc.wait() != 0:
                raise RuntimeError("simdex-spark dedup-components exited with status %d" % proc.returncode)
        fs, dst = hadoop_fs(spark, work + "/components.tsv")
        fs.copyFromLocalFile(False, True, spark.sparkContext._jvm.org.apache.hadoop.fs.Path("file://" + local), dst)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    cols = F.split("value", "\t")
    return spark.read.text(work + "/components.tsv").select(cols[0].alias("id"), cols[1].alias("cluster")), 0


def components_spark(spark, args, pairs):
    """Min-label propagation with pointer jumping: every document starts
    with the smallest id among itself and its neighbours; each round takes
    the smallest label among its neighbours' and its own, then the label of
    its label (which halves the distance labels still have to travel), and
    the DataFrame is checkpointed. Labels only decrease and are always ids
    of the same component; when a round changes none, every component
    carries one label, and it is the component's smallest id (that
    document's label never changed)."""
    edges = pairs.select(F.col("id_a").alias("src"), F.col("id_b").alias("dst")).union(
        pairs.select(F.col("id_b").alias("src"), F.col("id_a").alias("dst"))).persist(StorageLevel.DISK_ONLY)
    labels = edges.groupBy(F.col("src").alias("id")).agg(F.least(F.min("dst"), F.first("src")).alias("label")).checkpoint()
    for it in range(1, args.max_iterations + 1):
        nb = edges.join(labels, edges.src == labels.id).select(F.col("dst").alias("id"), "label")
        new = nb.union(labels).groupBy("id").agg(F.min("label").alias("label"))
        x, y = new.alias("x"), new.alias("y")
        new = x.join(y, F.col("x.label") == F.col("y.id")).select(F.col("x.id").alias("id"), F.col("y.label").alias("label"))
        new = new.checkpoint()
        changed = new.join(labels.withColumnRenamed("label", "old"), "id").where(F.col("label") != F.col("old")).count()
        labels = new
        if changed == 0:
            edges.unpersist()
            return labels.select("id", F.col("label").alias("cluster")), it
    raise RuntimeError("label propagation did not converge in %d rounds (raise --max-iterations, or use --components driver)"
                       % args.max_iterations)


def main(argv):
    args = parse_args(argv)
    t0 = time.time()
    spark = SparkSession.builder.appName("simdex-dedup").getOrCreate()
    sc = spark.sparkContext
    out = args.out.rstrip("/")
    work = (args.work_dir or out + "/_work").rstrip("/")
    sc.setCheckpointDir(work + "/checkpoints")
    if args.split_bytes > 0:
        spark.conf.set("spark.sql.files.maxPartitionBytes", str(args.split_bytes))
    worker = os.path.abspath(args.worker)
    sc.addFile(worker)
    cfg = {"worker": os.path.basename(worker), "format": "fp" if args.format == "fp" else "docs", "k": args.k,
           "layout_b": args.layout_b, "layout_k": args.layout_k, "bands": args.bands, "policy": args.policy,
           "source_attr": args.source_attr, "fail_once": args.fail_once}
    # The worker checks the settings before any task runs; its end frame
    # says how many documents a text key may have to make pairs.
    check = subprocess.run([worker, "dedup-judge"] + worker_flags(cfg), input=b"", stdout=subprocess.PIPE)
    if check.returncode != 0:
        print("simdex-dedup: bad settings (the worker's message is above)", file=sys.stderr)
        return 2
    judge_end = [json.loads(p) for kind, p in read_frames(io.BytesIO(check.stdout)) if kind == ord("e")][0]
    text_key_max_docs = judge_end["text_key_max_docs"]

    # 1. Map: one row per record, reject and worker.
    df = read_input(spark, args)
    mapped = df.rdd.mapPartitionsWithIndex(dedup_map(cfg)).persist(StorageLevel.DISK_ONLY)
    doc_schema = T.StructType([
        T.StructField("id", T.StringType()), T.StructField("order", T.LongType()), T.StructField("fp", T.LongType()),
        T.StructField("file", T.StringType()), T.StructField("start", T.LongType()),
        T.StructField("keys", T.ArrayType(T.LongType())), T.StructField("bands", T.ArrayType(T.LongType())),
        T.StructField("cell", T.BinaryType()), T.StructField("tkeys", T.ArrayType(T.LongType())),
        T.StructField("skeys", T.ArrayType(T.LongType()))])
    records = spark.createDataFrame(
        mapped.filter(lambda t: t[0] == "d").map(lambda t: (t[1], t[2], t[3], t[4], t[5], t[7], t[8], t[9], t[11], t[12])),
        doc_schema, verifySchema=False)
    rej_schema = T.StructType([T.StructField("file", T.StringType()), T.StructField("split_start", T.LongType()),
                               T.StructField("line", T.LongType()), T.StructField("reason", T.StringType())])
    rejects = spark.createDataFrame(mapped.filter(lambda t: t[0] == "x").map(lambda t: (t[4], t[5], t[6], t[10])), rej_schema)
    # repartition, not coalesce: a coalesce to one partition would run the map
    # stage above it (the fingerprinting, this job's first action) in one task.
    rejects.repartition(1).write.mode("overwrite").json(out + "/rejects.jsonl")
    n_rejects = spark.read.json(out + "/rejects.jsonl", schema=rej_schema).count()
    ends = [json.loads(t[10]) for t in mapped.filter(lambda t: t[0] == "e").collect()]

    # 2. The last record of an id in input order (file, split, line) wins.
    n_records = sum(e["records"] for e in ends)
    agg = records.groupBy("id").agg(F.max(F.struct("file", "start", "order")).alias("w"))
    n_docs = agg.count()
    if n_docs < n_records:
        docs = records.join(agg.select("id", F.col("w.order").alias("order")), ["id", "order"])
    else:
        docs = records
    docs = docs.persist(StorageLevel.DISK_ONLY)
    # The number of documents that keyed each text key, per document (its
    # template; with --bands, its keys that make pairs), and of a document
    # with a source, the number of the source's documents that keyed each
    # of its keys: its scoped keys (the i-th scopes the i-th text key) are
    # counted like text keys and reported under the text key they scope.
    # Scoped keys make no pairs, as an index's scoped rows name no
    # candidates.
    tk = docs.select("id", F.explode("tkeys").alias("tk"))
    kd = tk.join(tk.groupBy("tk").agg(F.count("*").alias("n")), "tk") \
        .groupBy("id").agg(F.collect_list(F.struct("tk", "n")).alias("kd"))
    sk = docs.where(F.size("skeys") > 0).select("id", F.explode(F.arrays_zip("tkeys", "skeys")).alias("z")) \
        .select("id", F.col("z")["tkeys"].alias("tk"), F.col("z")["skeys"].alias("sk"))
    skd = sk.join(sk.groupBy("sk").agg(F.count("*").alias("n")), "sk") \
        .groupBy("id").agg(F.collect_list(F.struct("tk", "n")).alias("skd"))
    keydocs = kd.join(skd, "id", "left").persist(StorageLevel.DISK_ONLY)

    # 3. Candidate pairs, each once.
    light = docs.select("id", "fp", "keys", "bands")
    block = candidate_pairs(light, "keys", args.k, True)
    cands = block.withColumn("by", F.lit("block"))
    if args.bands:
        cands = cands.union(candidate_pairs(light.where(F.size("bands") > 0), "bands", args.k, False).withColumn("by", F.lit("band")))
        small = keydocs.select("id", F.transform(F.filter("kd", lambda x: x["n"] <= text_key_max_docs), lambda x: x["tk"]).alias("small"))
        cands = cands.union(text_key_pairs(light.join(small, "id"), args.k).withColumn("by", F.lit("text_key")))
    cands = cands.persist(StorageLevel.DISK_ONLY)
    by = {r["by"]: r["count"] for r in cands.groupBy("by").count().collect()}
    n_cands = sum(by.values())

    # 4. Judge each candidate with both docs cells and the number of
    # documents that keyed each of their text keys, overall and in each
    # one's source.
    cells = docs.select("id", "cell")
    withcells = cands.join(cells.select(F.col("id").alias("id_a"), F.col("cell").alias("cell_a")), "id_a") \
        .join(cells.select(F.col("id").alias("id_b"), F.col("cell").alias("cell_b")), "id_b") \
        .join(keydocs.select(F.col("id").alias("id_a"), F.col("kd").alias("kd_a"), F.col("skd").alias("skd_a")), "id_a", "left") \
        .join(keydocs.select(F.col("id").alias("id_b"), F.col("kd").alias("kd_b"), F.col("skd").alias("skd_b")), "id_b", "left")
    judged = withcells.select("id_a", "cell_a", "id_b", "cell_b", "kd_a", "kd_b", "skd_a", "skd_b").rdd \
        .mapPartitions(dedup_judge(cfg)) \
        .persist(StorageLevel.DISK_ONLY)
    pair_schema = T.StructType([
        T.StructField("id_a", T.StringType()), T.StructField("id_b", T.StringType()),
        T.StructField("distance", T.IntegerType()), T.StructField("relation", T.StringType()),
        T.StructField("resemblance", T.DoubleType()), T.StructField("clause", T.StringType())])
    confirmed = spark.createDataFrame(judged.filter(lambda t: t[0] == "c").map(lambda t: t[1:]), pair_schema,
                                      verifySchema=False)
    confirmed.write.mode("overwrite").parquet(out + "/pairs.parquet")
    judge_ends = [json.loads(t[6]) for t in judged.filter(lambda t: t[0] == "e").collect()]
    judged.unpersist()
    cands.unpersist()
    pairs = spark.read.parquet(out + "/pairs.parquet")
    pairs.write.mode("overwrite").json(out + "/pairs.jsonl")
    n_pairs = pairs.count()

    # 5. Connected components, labelled by their smallest id.
    mode = args.components
    if mode == "auto":
        mode = "driver" if n_pairs <= args.driver_max_pairs else "spark"
    if mode == "driver":
        labels, rounds = components_driver(spark, args, pairs, work)
    else:
        labels, rounds = components_spark(spark, args, pairs)
    sizes = labels.groupBy("cluster").agg(F.count("*").alias("cluster_size"))
    clusters = labels.join(sizes, "cluster").select("id", "cluster", "cluster_size")
    if args.all_documents:
        clusters = docs.select("id").join(clusters, "id", "left").select(
            "id", F.coalesce("cluster", "id").alias("cluster"), F.coalesce("cluster_size", F.lit(1)).alias("cluster_size"))
    clusters.write.mode("overwrite").parquet(out + "/clusters.parquet")
    clusters = spark.read.parquet(out + "/clusters.parquet")
    clusters.write.mode("overwrite").json(out + "/clusters.jsonl")
    c = clusters.where("cluster_size > 1").agg(
        F.countDistinct("cluster").alias("clusters"), F.count("*").alias("docs"), F.max("cluster_size").alias("largest")).first()

    summary = {
        "inputs": args.inputs, "format": args.format, "out": out,
        "k": args.k, "layout": "B=%d,K=%d" % (args.layout_b, args.layout_k), "bands": args.bands, "policy": args.policy,
        "source_attr": args.source_attr,
        "records": n_records, "rejected": n_rejects, "documents": n_docs, "duplicate_ids": n_records - n_docs,
        "candidate_pairs": n_cands, "block_candidate_pairs": by.get("block", 0), "band_candidate_pairs": by.get("band", 0),
        "text_key_candidate_pairs": by.get("text_key", 0),
        "confirmed_pairs": n_pairs, "confirmed_beyond_k": pairs.where(F.col("distance") > args.k).count(),
        "clusters": c["clusters"], "clustered_documents": c["docs"], "largest_cluster": c["largest"] or 0,
        "components": mode, "label_propagation_rounds": rounds,
        "input_bytes": sum(e["input_bytes"] for e in ends), "map_tasks": len(ends), "judge_tasks": len(judge_ends),
        "seconds": round(time.time() - t0, 1),
    }
    write_text(spark, out + "/summary.json", json.dumps(summary, indent=2) + "\n")
    fs, p = hadoop_fs(spark, work)
    if not args.work_dir:
        fs.delete(p, True)
    print("simdex-dedup summary: " + json.dumps(summary))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
