"""simdex backfill on Apache Spark.

Loads JSON Lines documents, CSV/TSV lines of precomputed fingerprints or
Parquet documents into a simdex index on the embedded store or on HBase,
as cmd/bulkload would load them, cell for cell: into an empty index, or
into one that holds documents (index rows merged into the stored ones,
stored documents of loaded ids replaced). The per-record and per-key-range
work runs in simdex's own Go code, the simdex-spark binary shipped with the
job (internal/sparkjob has the steps):

  1. driver: `simdex-spark prepare` opens or creates the index and writes the
     job's meta file;
  2. Spark reads the input with its own readers; each input partition is
     piped through `simdex-spark map` (parse, fingerprint, encode), which
     returns a record per good line, a reject per bad one, and one sorted run
     of cells per output part (a key range of one table);
  3. Spark shuffles the runs by part; the driver decides which records of
     repeated ids are superseded (the last in input order wins);
  4. each part is piped through `simdex-spark write`, which merges its runs
     and writes the part's sstables (HFiles for HBase, the parts cut at the
     tables' regions), renamed into place when complete (a retried task
     writes them again);
  5. driver: `simdex-spark ingest` ingests every part in one step (on HBase
     the region servers bulk-load the HFiles, table by table) and adds the
     counters once.

Rejects (where, reason) go to WORK/rejects (JSON Lines) and the summary to
WORK/summary.json; both are printed. Run it with spark-submit (scripts/spark/
run.sh does, on a local master); docs/OPERATIONS.md, "Backfill with Spark".
"""

import argparse
import hashlib
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
from pyspark.serializers import BatchedSerializer, CPickleSerializer
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

ORDER_SHIFT = 40  # order = partition index << 40 | line within the partition
RECORDS_PER_PART = 1000000  # default input records per output part (benchmarks/2026-11-27-spark.md)
BATCH_BYTES = 1 << 16  # a pickled batch of map outputs: about this many bytes, or one larger output


def parse_args(argv):
    p = argparse.ArgumentParser(prog="simdex_backfill.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--store", choices=["pebble", "hbase"], default="pebble",
                   help="pebble: the embedded store in --data-dir; hbase: the simdex tables in HBase (--hbase-zk, ...)")
    p.add_argument("--data-dir", help="the embedded store's directory (on the driver's machine)")
    p.add_argument("--hbase-zk", help="with --store hbase: ZooKeeper quorum of HBase (or SIMDEX_HBASE_ZK)")
    p.add_argument("--hbase-namespace", help="with --store hbase: namespace of the simdex tables (default simdex)")
    p.add_argument("--hbase-create-tables", action="store_true",
                   help="with --store hbase: create missing tables with the default schema (else refuse)")
    p.add_argument("--hbase-hfile-remote-dir", default="",
                   help="with --store hbase: WORK/hfiles as the region servers name it (default: its local path)")
    p.add_argument("--hbase-hfile-mode",
                   help="with --store hbase: permission of the HFiles, octal (default 0644), as cmd/bulkload's")
    p.add_argument("--config", help="JSON file of store settings (TLS, Kerberos, ...), as cmd/bulkload's --config")
    p.add_argument("--work-dir", required=True,
                   help="the job's directory: sstables of the parts, rejects, summary (shared by driver and executors)")
    p.add_argument("--worker", required=True, help="the simdex-spark binary (on the driver; shipped to the executors)")
    p.add_argument("--format", choices=["docs", "fp", "parquet"], default="docs",
                   help="docs: JSON Lines; fp: id,fingerprint,time lines; parquet: columns id, title, text, time, attrs")
    p.add_argument("--partitions", type=int, default=0,
                   help="output parts per table (index, fp, bands, docs); default: one per --records-per-part input "
                        "records, at least 2 x the default parallelism")
    p.add_argument("--records-per-part", type=int, default=RECORDS_PER_PART,
                   help="without --partitions: input records (lines with an id) per output part of each table "
                        "(default %(default)d)")
    p.add_argument("--layout-b", type=int, default=4)
    p.add_argument("--layout-k", type=int, default=3)
    p.add_argument("--bucket", default="720h0m0s", help="time-bucket width of a new index (Go duration)")
    p.add_argument("--bands", choices=["auto", "on", "off"], default="auto")
    p.add_argument("--source-attr", default="",
                   help="document attribute naming its source, as cmd/bulkload's --source-attr: empty is the index's "
                        "(a NEW index: source), - a NEW index without; an index recording another is refused")
    p.add_argument("--sample", type=int, default=200, help="ids sampled per docs part to cut the docs table")
    p.add_argument("--fail-once", default="",
                   help="testing: the first map and the first write task fail halfway (marker files PATH.map, PATH.write)")
    p.add_argument("--split-before-import", action="store_true",
                   help="testing, HBase: split a region of each table between prepare and the import of its HFiles")
    p.add_argument("inputs", nargs="+", help="files, directories or globs, on any file system Spark reads")
    args = p.parse_args(argv)
    if args.store == "pebble" and not args.data_dir:
        p.error("--data-dir is required (or --store hbase)")
    if args.partitions < 0 or args.records_per_part < 1:
        p.error("--partitions must be 0 or more and --records-per-part 1 or more")
    return args


def store_args(args):
    """The store settings of the driver's steps (prepare, ingest)."""
    if args.store == "pebble":
        return ["--data-dir", args.data_dir]
    out = ["--store", "hbase"]
    if args.hbase_zk:
        out += ["--hbase-zk", args.hbase_zk]
    if args.hbase_namespace:
        out += ["--hbase-namespace", args.hbase_namespace]
    if args.hbase_create_tables:
        out += ["--hbase-create-tables"]
    if args.hbase_hfile_mode:
        out += ["--hbase-hfile-mode", args.hbase_hfile_mode]
    if args.config:
        out += ["--config", args.config]
    return out


def store_name(args):
    if args.store == "pebble":
        return args.data_dir
    return "HBase namespace %s" % (args.hbase_namespace or os.environ.get("SIMDEX_HBASE_NAMESPACE") or "simdex")


def load_id(args):
    h = hashlib.sha256(json.dumps([args.format, sorted(args.inputs)]).encode()).hexdigest()
    return "spark-" + h[:16]


def run_local(cmd):
    out = subprocess.run(cmd, stdout=subprocess.PIPE, check=False)
    if out.returncode != 0:
        raise RuntimeError("%s exited with status %d" % (" ".join(cmd[:2]), out.returncode))
    return json.loads(out.stdout)


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


class MapBatches(BatchedSerializer):
    """Pickles a map task's outputs in batches of about BATCH_BYTES, each
    output larger than that (a part's run of cells) in a batch of its own.
    The JVM holds a batch as one byte array; PySpark's default batching
    counts items, so after a partition's many small records it would put
    all the partition's runs, which come last, into one array that a 1 GB
    driver cannot hold."""

    def __init__(self):
        BatchedSerializer.__init__(self, CPickleSerializer(), BatchedSerializer.UNKNOWN_BATCH_SIZE)

    def _batched(self, iterator):
        items, size = [], 0
        for item in iterator:
            n = 64 + sum(len(x) for x in item if isinstance(x, (bytes, str)))
            if n >= BATCH_BYTES:
                if items:
                    yield items
                    items, size = [], 0
                yield [item]
                continue
            items.append(item)
            size += n
            if size >= BATCH_BYTES:
                yield items
                items, size = [], 0
        if items:
            yield items

    def __repr__(self):
        return "MapBatches(%d)" % BATCH_BYTES


def map_partition(cfg):
    """Pipes one input partition through `simdex-spark map`."""

    def run(pidx, rows):
        exe = executable(cfg["worker"])
        cmd = [exe, "map", "--meta", SparkFiles.get("meta.json"), "--parts", SparkFiles.get("parts.json"),
               "--format", cfg["format"]]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=worker_env(cfg["fail_once"]))
        splits = []  # (first line in the partition, file, split start)
        failed = []

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
            except Exception as e:  # a dead worker: its exit status says why
                failed.append(e)
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
            if kind == ord("r"):
                order, fp = struct.unpack(">Qq", p[:16])
                f, start, _ = locate(order)
                yield ("r", 0, p[16:].decode("utf-8"), order, fp, f, start, 0, None, None)
            elif kind == ord("x"):
                x = json.loads(p)
                f, start, line = locate(int(x["where"]))
                yield ("x", 0, None, int(x["where"]), 0, f, start, line, x["reason"], None)
            elif kind == ord("b"):
                yield ("b", struct.unpack(">I", p[:4])[0], None, 0, 0, None, 0, 0, None, bytes(p))
            elif kind == ord("e"):
                end = p
        feeder.join()
        rc = proc.wait()
        if rc != 0 or end is None:
            raise RuntimeError("simdex-spark map exited with status %d (its stderr is in the executor's log)" % rc)
        yield ("e", 0, None, 0, 0, None, 0, 0, end.decode(), None)

    return run


def write_partition(cfg):
    """Pipes one part's runs through `simdex-spark write`."""

    def run(idx, runs):
        exe = executable(cfg["worker"])
        cmd = [exe, "write", "--meta", SparkFiles.get("meta.json"), "--parts", SparkFiles.get("parts.json"),
               "--part", str(idx), "--out", cfg["out"], "--superseded", SparkFiles.get("superseded.json")]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=worker_env(cfg["fail_once"]))
        try:
            for _, payload in runs:
                proc.stdin.write(b"b" + struct.pack(">I", len(payload)) + payload)
            proc.stdin.close()
        except BrokenPipeError:
            pass
        out = proc.stdout.read()
        rc = proc.wait()
        if rc != 0:
            raise RuntimeError("simdex-spark write of part %d exited with status %d" % (idx, rc))
        yield json.loads(out)

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


def input_ids(df, args):
    """The ids of the input's lines (those without one are rejects)."""
    if args.format == "fp":
        ids = df.select(F.trim(F.regexp_extract("value", r"^([^,\t]*)", 1)).alias("id"))
    else:
        ids = df.select(F.get_json_object("value", "$.id").alias("id"))
    return ids.where(F.col("id").isNotNull() & (F.col("id") != ""))


def choose_parts(records, partitions, parallelism, records_per_part):
    """The output parts per table and why: --partitions when given, else one
    part per records_per_part input records, at least two per default
    parallelism (a part's shuffled runs meet in one write task, so the part
    count grows with the input)."""
    if partitions > 0:
        return partitions, "--partitions"
    floor = 2 * parallelism
    by_records = -(-records // records_per_part)
    if by_records > floor:
        return by_records, "records"
    return floor, "parallelism"


def sample_doc_bounds(ids, n, args, parts):
    """Cuts the docs table into `parts` key ranges at ids sampled from the n input ids."""
    if parts <= 1 or n == 0:
        return []
    frac = min(1.0, float(args.sample * parts) / n)
    sample = sorted({r.id.encode("utf-8") for r in ids.sample(fraction=frac, seed=1).collect()})
    bounds = []
    for i in range(1, parts):
        if not sample:
            break
        b = sample[i * len(sample) // parts]
        if not bounds or b > bounds[-1]:
            bounds.append(b)
    return [b.decode("utf-8") for b in bounds]


def main(argv):
    args = parse_args(argv)
    t0 = time.time()
    spark = SparkSession.builder.appName("simdex-backfill").getOrCreate()
    sc = spark.sparkContext
    work = os.path.abspath(args.work_dir)
    os.makedirs(work, exist_ok=True)
    worker = os.path.abspath(args.worker)
    lid = load_id(args)

    meta_path = os.path.join(work, "meta.json")
    prep = run_local([worker, "prepare"] + store_args(args) + ["--load-id", lid, "--meta", meta_path,
                      "--layout-b", str(args.layout_b), "--layout-k", str(args.layout_k),
                      "--bucket", args.bucket, "--bands", args.bands, "--source-attr", args.source_attr])
    if prep["already_loaded"]:
        print("simdex-backfill: load %s is already in %s; nothing to do" % (lid, store_name(args)))
        return 0

    df = read_input(spark, args)
    ids = input_ids(df, args)
    n_input = ids.count()
    n, chosen_by = choose_parts(n_input, args.partitions, sc.defaultParallelism, args.records_per_part)
    why = {"--partitions": "--partitions %d" % n,
           "records": "ceil(%d input records / %d per part, --records-per-part)" % (n_input, args.records_per_part),
           "parallelism": "2 x default parallelism %d (%d input records / %d per part is fewer)" % (
               sc.defaultParallelism, n_input, args.records_per_part)}[chosen_by]
    print("simdex-backfill: %d parts per table: %s" % (n, why), flush=True)
    parts = {"index": n, "fp": n, "bands": n, "doc_bounds": sample_doc_bounds(ids, n_input, args, n)}
    parts_path = os.path.join(work, "parts.json")
    with open(parts_path, "w") as f:
        json.dump(parts, f)
    # The worker numbers the parts (on HBase also cut at the regions).
    total = run_local([worker, "parts", "--meta", meta_path, "--parts", parts_path])["total"]
    sc.addFile(worker)
    sc.addFile(meta_path)
    sc.addFile(parts_path)
    cfg = {"worker": os.path.basename(worker), "format": "fp" if args.format == "fp" else "docs",
           "fail_once": args.fail_once, "out": os.path.join(work, "sst" if args.store == "pebble" else "hfiles")}

    mapped = df.rdd.mapPartitionsWithIndex(map_partition(cfg))
    mapped._jrdd_deserializer = MapBatches()  # before persist() makes the RDD that pickles with it
    mapped = mapped.persist(StorageLevel.DISK_ONLY)

    rec_schema = T.StructType([T.StructField("id", T.StringType()), T.StructField("order", T.LongType()),
                               T.StructField("fp", T.LongType()), T.StructField("file", T.StringType()),
                               T.StructField("start", T.LongType())])
    records = spark.createDataFrame(mapped.filter(lambda t: t[0] == "r").map(lambda t: (t[2], t[3], t[4], t[5], t[6])),
                                    rec_schema).persist(StorageLevel.DISK_ONLY)
    rej_schema = T.StructType([T.StructField("file", T.StringType()), T.StructField("split_start", T.LongType()),
                               T.StructField("line", T.LongType()), T.StructField("reason", T.StringType())])
    rejects = spark.createDataFrame(mapped.filter(lambda t: t[0] == "x").map(lambda t: (t[5], t[6], t[7], t[8])), rej_schema)
    # repartition, not coalesce: a coalesce to one partition would run the map
    # stage above it (the fingerprinting, this job's first action) in one task.
    rejects.repartition(1).write.mode("overwrite").json(os.path.join(work, "rejects"))
    n_rejects = spark.read.json(os.path.join(work, "rejects"), schema=rej_schema).count()
    ends = [json.loads(t[8]) for t in mapped.filter(lambda t: t[0] == "e").collect()]

    # The last record of an id in input order (file, split, line) wins.
    key = F.struct("file", "start", "order")
    agg = records.groupBy("id").agg(F.count("*").alias("n"), F.max(key).alias("w")).persist(StorageLevel.DISK_ONLY)
    n_records = records.count()
    n_docs = agg.count()
    sup = {"records": [], "no_index": []}
    if n_docs < n_records:
        dups = agg.where("n > 1").select("id", F.col("w.order").alias("worder"))
        rec_d = records.join(dups, "id")
        losers = rec_d.where(F.col("order") != F.col("worder")).select("id", "order", "fp")
        winners_fp = records.join(agg.select("id", F.col("w.order").alias("worder")), "id") \
            .where(F.col("order") == F.col("worder")).select("fp").distinct()
        n_fps = winners_fp.count()
        noindex = losers.select("fp").distinct().join(winners_fp, "fp", "left_anti")
        sup["records"] = [{"id": r.id, "order": r.order} for r in losers.collect()]
        sup["no_index"] = [r.fp & 0xFFFFFFFFFFFFFFFF for r in noindex.collect()]
    else:
        n_fps = records.select("fp").distinct().count()
    sup_path = os.path.join(work, "superseded.json")
    with open(sup_path, "w") as f:
        json.dump(sup, f)
    sc.addFile(sup_path)

    out = cfg["out"]
    if os.path.isdir(out):
        shutil.rmtree(out)
    runs = mapped.filter(lambda t: t[0] == "b").map(lambda t: (t[1], t[9]))
    written = runs.partitionBy(total, lambda k: k).mapPartitionsWithIndex(write_partition(cfg)).collect()

    ing_cmd = [worker, "ingest"] + store_args(args) + ["--meta", meta_path, "--out", out, "--parts", parts_path,
                                                      "--load-id", lid, "--documents", str(n_docs), "--fingerprints", str(n_fps)]
    if args.hbase_hfile_remote_dir:
        ing_cmd += ["--hbase-hfile-remote-dir", args.hbase_hfile_remote_dir]
    if args.split_before_import:
        ing_cmd += ["--split-before-import"]
    ing = run_local(ing_cmd)
    shutil.rmtree(out, ignore_errors=True)

    by_table = {}
    for w in written:
        t = by_table.setdefault(w["table"], {"parts": 0, "rows": 0, "cells": 0, "bytes": 0})
        t["parts"] += 1
        t["rows"] += w["rows"]
        t["cells"] += w["cells"]
        t["bytes"] += w["bytes"]
    summary = {
        "load_id": lid, "inputs": args.inputs, "format": args.format, "store": store_name(args),
        "records": n_records, "rejected": n_rejects, "documents": n_docs, "duplicate_ids": n_records - n_docs,
        "fingerprints": n_fps,
        "index_rows": by_table.get("index", {}).get("rows", 0),
        "index_entries": sum(w["entries"] for w in written),
        "bytes_written": sum(w["bytes"] for w in written),
        "input_bytes": sum(e["input_bytes"] for e in ends),
        "new_documents": ing["counted"]["documents"], "new_fingerprints": ing["counted"]["fingerprints"],
        "map_tasks": len(ends), "parts": total,
        "input_records": n_input, "parts_per_table": n, "parts_chosen_by": chosen_by, "records_per_part": args.records_per_part,
        "files": ing["files"], "hfiles_imported": ing.get("hfiles_imported", 0),
        "tables": by_table,
        "seconds": round(time.time() - t0, 1),
    }
    summary["records_per_second"] = round(n_records / max(summary["seconds"], 1e-9))
    with open(os.path.join(work, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print("simdex-backfill summary: " + json.dumps(summary))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
