"""The synchronous client against the real server: every operation, the
error paths and chunking."""

from __future__ import annotations

import datetime as dt
import unittest

import simdex
from simdex import Content, DocumentInput, SeenItem, SimdexError

from . import _server
from .helpers import ARTICLE, RESTYLED, client


class TestOperations(unittest.TestCase):
    def setUp(self) -> None:
        self.c, self.calls = client(self)

    def test_health_ready_stats_metrics(self) -> None:
        self.assertEqual(self.c.health().status, "ok")
        r = self.c.ready()
        self.assertEqual((r.status, r.store), ("ready", "pebble"))
        st = self.c.stats()
        self.assertGreaterEqual(st.layout.k, 1)
        self.assertGreaterEqual(st.recipe, 1)
        st0 = self.c.stats(rows=0)
        self.assertEqual((st0.fullest_rows, st0.index_rows), ([], 0))
        with self.assertRaises(SimdexError) as cm:
            self.c.stats(rows=101)
        self.assertEqual((cm.exception.status, cm.exception.kind), (400, "invalid-field"))
        self.assertIn("# TYPE", self.c.metrics())
        self.assertIn("paths", self.c.openapi())

    def test_fingerprint(self) -> None:
        fp = self.c.fingerprint(ARTICLE, title="Buses")
        self.assertEqual(len(fp.fingerprint), 16)
        self.assertTrue(fp.top_features and fp.features > 0 and fp.title_fingerprint)
        self.assertEqual(self.c.fingerprint(ARTICLE, title="Buses").fingerprint, fp.fingerprint)
        with self.assertRaises(SimdexError) as cm:
            self.c.fingerprint("")
        self.assertEqual(cm.exception.kind, "invalid-field")
        self.assertTrue(cm.exception.field("text"))

    def test_documents_check_explain(self) -> None:
        when = dt.datetime(2026, 11, 23, 8, 0, tzinfo=dt.timezone.utc)
        doc_id = "py/news/2026/11/23/buses? 100% — 公交"
        ins = self.c.insert_document(doc_id, ARTICLE, title="Electric buses", time=when, attrs={"source": "wire"})
        self.assertTrue(ins.stored)
        self.assertEqual(ins.id, doc_id)
        doc = self.c.get_document(doc_id)
        self.assertEqual(
            (doc.id, doc.fingerprint, doc.time, doc.attrs), (doc_id, ins.fingerprint, when, {"source": "wire"})
        )

        chk = self.c.check(RESTYLED, title="Electric buses")
        self.assertTrue(chk.duplicate)
        self.assertEqual(chk.duplicates[0].id, doc_id)
        self.assertEqual(chk.policy, "default")
        self.assertTrue(chk.duplicates[0].relation)
        dup = self.c.insert_document("py/copy-1", RESTYLED, title="Electric buses", mode="insert-if-unique")
        self.assertFalse(dup.stored)
        self.assertEqual(dup.duplicate_of, doc_id)
        self.assertIsNotNone(dup.original)

        by_fp = self.c.check(fingerprint=ins.fingerprint, k=0, limit=5, policy="near_identical")
        self.assertEqual((by_fp.k, by_fp.duplicate, by_fp.duplicates[0].distance), (0, True, 0))
        later = self.c.check(fingerprint=ins.fingerprint, since=when + dt.timedelta(days=1))
        self.assertFalse(later.duplicate)

        ex = self.c.explain(doc_id)
        self.assertEqual((ex.id, ex.stored.fingerprint, ex.query), (doc_id, ins.fingerprint, None))
        ex = self.c.explain(doc_id, query=simdex.ExplainQuery(text=RESTYLED, title="Electric buses"), policy="copy")
        self.assertTrue(ex.duplicate and ex.aligned and ex.query is not None and ex.query.segments)
        self.assertEqual(ex.policy, "copy")

        self.c.delete_document(doc_id)
        with self.assertRaises(SimdexError) as cm:
            self.c.get_document(doc_id)
        self.assertEqual((cm.exception.status, cm.exception.kind), (404, "not-found"))
        with self.assertRaises(SimdexError) as cm:
            self.c.delete_document(doc_id)
        self.assertEqual(cm.exception.status, 404)

    def test_errors(self) -> None:
        with self.assertRaises(SimdexError) as cm:
            self.c.check(fingerprint="not-a-fingerprint")
        e = cm.exception
        self.assertEqual((e.status, e.kind, e.instance), (400, "bad-fingerprint", "/v1/check"))
        self.assertTrue(e.title and e.detail)
        with self.assertRaises(SimdexError) as cm:
            self.c.check(fingerprint="0x1", k=60)
        self.assertEqual(cm.exception.kind, "k-out-of-range")
        self.assertIsNotNone(cm.exception.field("k"))
        # 413: over the server's 8 MiB body limit.
        with self.assertRaises(SimdexError) as cm:
            self.c.check("word " * (2 << 20))
        self.assertEqual((cm.exception.status, cm.exception.kind), (413, "body-too-large"))
        # 401: a write without the API key; reads need none.
        anon = simdex.Client(_server.url())
        with self.assertRaises(SimdexError) as cm:
            anon.insert_document("anon", fingerprint="0x2")
        self.assertEqual((cm.exception.status, cm.exception.kind), (401, "unauthorized"))
        self.assertEqual(anon.health().status, "ok")
        anon.close()
        with self.assertRaises(ValueError):
            simdex.Client("ftp://x")

    def test_check_batch_item_errors(self) -> None:
        res = self.c.check_batch(
            [Content(fingerprint="0x10"), {"fingerprint": "zzz"}, Content(fingerprint="0x11")], k=1
        )
        self.assertEqual(len(res.results), 3)
        self.assertIsNone(res.results[1])
        self.assertEqual(res.results[0].k, 1)
        self.assertEqual([(x.index, x.problem.kind) for x in res.errors], [(1, "bad-fingerprint")])
        before = self.calls.ops["checkBatch"]
        self.assertEqual(self.c.check_batch([]).results, [])
        self.assertEqual(self.calls.ops["checkBatch"], before)

    def test_check_source(self) -> None:
        # The source reaches the server on check, on each batch item and on
        # an explanation's query: one longer than an attribute value may be
        # is refused naming the field (a batch item alone).
        long = "s" * 4097
        with self.assertRaises(SimdexError) as cm:
            self.c.check(fingerprint="0x31", source=long)
        self.assertEqual((cm.exception.status, cm.exception.kind), (400, "invalid-field"))
        self.assertIn("source", [f.field for f in cm.exception.fields])
        self.c.check(fingerprint="0x31", source="news.example")
        res = self.c.check_batch(
            [Content(fingerprint="0x32", source="news.example"), Content(fingerprint="0x33", source=long)]
        )
        self.assertIsNotNone(res.results[0])
        self.assertIsNone(res.results[1])
        self.assertEqual([x.index for x in res.errors], [1])
        with self.assertRaises(SimdexError) as cm:
            self.c.explain("no-such-doc", query=simdex.ExplainQuery(text="some text", source=long))
        self.assertEqual(cm.exception.status, 400)

    def test_chunking(self) -> None:
        n = 2500
        docs = [
            DocumentInput(id=f"py/chunk/{i}", fingerprint=f"{(i * 0x9E3779B97F4A7C15) & (2**64 - 1):016x}")
            for i in range(n)
        ]
        docs[2100].fingerprint = "bad"
        res = self.c.insert_documents(docs, mode="insert")
        self.assertEqual(self.calls.ops["insertDocuments"], 3)
        self.assertEqual(len(res.results), n)
        self.assertEqual([(x.index, x.problem.kind) for x in res.errors], [(2100, "bad-fingerprint")])
        self.assertIsNone(res.results[2100])
        for i, r in enumerate(res.results):
            if i != 2100:
                self.assertTrue(r is not None and r.id == docs[i].id and r.stored, i)
        cr = self.c.check_batch([Content(fingerprint=d.fingerprint) for d in docs], k=0)
        self.assertEqual(self.calls.ops["checkBatch"], 3)
        self.assertEqual(len(cr.results), n)
        self.assertEqual([x.index for x in cr.errors], [2100])
        for i in (0, 999, 1000, 1999, 2000, 2499):
            self.assertEqual(cr.results[i].duplicates[0].id, docs[i].id)
        # The body limit cuts requests too: 36 bytes an item, 4 KiB a request.
        small, calls = client(self, max_body_bytes=4096)
        sr = small.check_batch([Content(fingerprint=d.fingerprint) for d in docs[:500]])
        self.assertEqual(len(sr.results), 500)
        self.assertTrue(4 <= calls.ops["checkBatch"] <= 6 and calls.max_body <= 4096, (calls.ops, calls.max_body))

    def test_batch_limit_is_the_servers(self) -> None:
        over, _ = client(self, max_batch=simdex.DEFAULT_MAX_BATCH + 1)
        with self.assertRaises(SimdexError) as cm:
            over.check_batch([Content(fingerprint="0x1")] * (simdex.DEFAULT_MAX_BATCH + 1))
        self.assertEqual((cm.exception.status, cm.exception.kind), (400, "invalid-field"))
        self.assertIsNotNone(cm.exception.field("items"))
        with self.assertRaises(SimdexError) as cm:
            over.seen_check("py-limit-user", [str(i) for i in range(simdex.DEFAULT_MAX_BATCH + 1)])
        self.assertEqual(cm.exception.kind, "too-many-items")

    def test_partial_answer_on_failure(self) -> None:
        # The second request (items 1000..1999) fails as a whole: the error
        # carries the first request's answer.
        small, _ = client(self, max_batch=1000)
        items = [Content(fingerprint="0x1")] * 1000 + [{"fingerprint": "0x1", "unknown": 1}] * 500
        with self.assertRaises(SimdexError) as cm:
            small.check_batch(items)
        e = cm.exception
        self.assertEqual((e.status, e.kind, e.offset), (400, "unknown-field", 1000))
        self.assertEqual(len(e.partial.results), 1000)


class TestSeen(unittest.TestCase):
    def setUp(self) -> None:
        self.c, self.calls = client(self)

    def test_seen(self) -> None:
        c = self.c
        c.insert_document("py/seen/orig", ARTICLE)
        c.insert_document("py/seen/restyled", RESTYLED)
        user = "py-reader-1"
        m = c.seen_mark(
            user,
            [
                SeenItem("a17", doc_id="py/seen/orig"),
                {"id": "b2", "fingerprint": "0x00ff00ff00ff00ff"},
                "item/with/slashes",
                SeenItem("c9", doc_id="py/seen/missing"),
            ],
        )
        self.assertEqual((m.user, m.marked, m.unknown_doc_ids), (user, 4, ["py/seen/missing"]))
        su = c.seen_user(user)
        self.assertEqual((su.user, su.items), (user, 4))
        self.assertTrue(su.bytes > 0 and su.retention)
        self.assertEqual(c.seen_check(user, ["a17", "zz", "item/with/slashes"]).seen, [True, False, True])

        cands = [
            SeenItem("new1"),
            SeenItem("a17"),
            SeenItem("copy", doc_id="py/seen/restyled"),
            SeenItem("new2", doc_id="py/seen/none"),
        ]
        full = c.seen_filter(user, candidates=cands, near=True)
        self.assertEqual(full.kept, ["new1", "new2"])
        self.assertEqual([(d.index, d.id, d.reason) for d in full.dropped], [(1, "a17", "seen"), (2, "copy", "near")])
        self.assertIsNotNone(full.dropped[1].distance)
        self.assertEqual(full.unknown_doc_ids, ["py/seen/none"])
        kept = c.seen_filter(user, candidates=cands, near=True, k=3, answer="kept")
        self.assertEqual((kept.kept, kept.dropped), (["new1", "new2"], None))
        idx = c.seen_filter(user, ids=["x", "a17", "y"], answer="indexes")
        self.assertEqual((idx.kept_indexes, idx.kept), ([0, 2], None))

        c.seen_delete(user, "item/with/slashes")
        self.assertEqual(c.seen_check(user, ["item/with/slashes", "a17"]).seen, [False, True])
        c.seen_forget(user)
        self.assertEqual(c.seen_check(user, ["a17"]).seen, [False])
        self.assertEqual(c.seen_user(user).items, 0)

        with self.assertRaises(SimdexError) as cm:
            c.seen_check("u" * 300, ["a"])
        self.assertEqual((cm.exception.status, cm.exception.kind), (400, "bad-user"))
        with self.assertRaises(SimdexError) as cm:
            c.seen_filter(user, candidates=cands, ids=["a"])
        self.assertEqual(cm.exception.kind, "invalid-field")
        with self.assertRaises(ValueError):
            c.seen_check("a/b", ["a"])

    def test_seen_batch(self) -> None:
        c = self.c
        res = c.seen_mark_batch(
            [simdex.SeenUserMarks("py-batch-u1", ["a", "b"]), {"user": "py-batch-u2", "items": [{"id": "c"}]}]
        )
        self.assertEqual([(r.user, r.marked) for r in res], [("py-batch-u1", 2), ("py-batch-u2", 1)])
        ck = c.seen_check_batch(
            [simdex.SeenUserIDs("py-batch-u1", ["a", "c"]), {"user": "py-batch-u2", "ids": ["a", "c"]}]
        )
        self.assertEqual([r.seen for r in ck], [[True, False], [False, True]])
        fr = c.seen_filter_batch(
            [
                simdex.SeenUserFilter("py-batch-u1", ids=["a", "b", "z"]),
                {"user": "py-batch-u2", "ids": ["a", "c"], "answer": "indexes"},
            ]
        )
        self.assertEqual((fr[0].kept, len(fr[0].dropped), fr[1].kept_indexes), (["z"], 2, [0]))
        for op in ("seenMarkBatch", "seenCheckBatch", "seenFilterBatch"):
            self.assertEqual(self.calls.ops[op], 1, op)

    def test_seen_chunking(self) -> None:
        c, calls = self.c, self.calls
        n, user = 2500, "py-chunk-reader"
        ids = [f"item-{i}" for i in range(n)]
        m = c.seen_mark(user, ids[::2])
        self.assertEqual((m.marked, calls.ops["seenMark"]), (n // 2, 2))
        ck = c.seen_check(user, ids)
        self.assertEqual(calls.ops["seenCheck"], 3)
        self.assertEqual(ck.seen, [i % 2 == 0 for i in range(n)])
        full = c.seen_filter(user, ids=ids)
        self.assertEqual(calls.ops["seenFilter"], 3)
        self.assertEqual(full.kept, ids[1::2])
        self.assertEqual([(d.index, d.id) for d in full.dropped], [(i, ids[i]) for i in range(0, n, 2)])
        idx = c.seen_filter(user, ids=ids, answer="indexes")
        self.assertEqual(idx.kept_indexes, list(range(1, n, 2)))
        users = [simdex.SeenUserIDs(f"py-u{i}", ["x"]) for i in range(1500)] + [simdex.SeenUserIDs(user, ids)]
        res = c.seen_check_batch(users)
        self.assertEqual((len(res), res[1500].seen, res[1499].user), (1501, ck.seen, "py-u1499"))
        # 1,000 users; 500 users and the last one's first 1,000 ids; its
        # two other pieces, one a request.
        self.assertEqual(calls.ops["seenCheckBatch"], 4)


if __name__ == "__main__":
    unittest.main()
