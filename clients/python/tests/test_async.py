"""The asyncio client against the real server: the same operations, run
concurrently, chunking, errors and the seen API."""

from __future__ import annotations

import asyncio
import unittest

import simdex
from simdex import Content, DocumentInput, SeenItem, SimdexError

from . import _server
from .helpers import ARTICLE, RESTYLED, async_client


def setUpModule() -> None:
    # Started here, not inside a test's event loop (which it would block).
    _server.url()


class TestAsync(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        # The test loop runs in debug mode, which reports steps over 0.1 s:
        # encoding 2,500 items or starting a proxy thread takes about that.
        asyncio.get_running_loop().slow_callback_duration = 2.0

    async def test_operations(self) -> None:
        c, _ = async_client(self)
        async with c:
            health, ready, stats, fp, metrics, doc = await asyncio.gather(
                c.health(), c.ready(), c.stats(rows=0), c.fingerprint(ARTICLE), c.metrics(), c.openapi()
            )
            self.assertEqual((health.status, ready.status, stats.index_rows), ("ok", "ready", 0))
            self.assertEqual(len(fp.fingerprint), 16)
            self.assertIn("# TYPE", metrics)
            self.assertIn("paths", doc)

            ins = await c.insert_document("py-async/1", ARTICLE, title="Electric buses", attrs={"a": "b"})
            self.assertTrue(ins.stored)
            got = await c.get_document("py-async/1")
            self.assertEqual((got.fingerprint, got.attrs), (ins.fingerprint, {"a": "b"}))
            chk = await c.check(RESTYLED, title="Electric buses")
            self.assertEqual(chk.duplicates[0].id, "py-async/1")
            dup = await c.insert_document("py-async/2", RESTYLED, title="Electric buses", mode="insert-if-unique")
            self.assertEqual((dup.stored, dup.duplicate_of), (False, "py-async/1"))
            ex = await c.explain("py-async/1", query={"text": RESTYLED, "title": "Electric buses"})
            self.assertTrue(ex.duplicate and ex.query is not None)
            await c.delete_document("py-async/1")
            with self.assertRaises(SimdexError) as cm:
                await c.get_document("py-async/1")
            self.assertEqual(cm.exception.kind, "not-found")
            with self.assertRaises(SimdexError) as cm:
                await c.check(fingerprint="nope")
            self.assertEqual((cm.exception.status, cm.exception.kind), (400, "bad-fingerprint"))

    async def test_chunking(self) -> None:
        c, calls = async_client(self)
        async with c:
            n = 2500
            docs = [
                DocumentInput(
                    id=f"py-async/chunk/{i}", fingerprint=f"{(i * 0x9E3779B97F4A7C15 + 7) & (2**64 - 1):016x}"
                )
                for i in range(n)
            ]
            res = await c.insert_documents(docs)
            self.assertEqual((calls.ops["insertDocuments"], len(res.results), res.errors), (3, n, []))
            cr = await c.check_batch([Content(fingerprint=d.fingerprint) for d in docs], k=0)
            self.assertEqual((calls.ops["checkBatch"], len(cr.results)), (3, n))
            self.assertEqual(cr.results[2499].duplicates[0].id, docs[2499].id)

    async def test_seen(self) -> None:
        c, _ = async_client(self)
        async with c:
            user = "py-async-reader"
            m = await c.seen_mark(user, [SeenItem("a"), "b"])
            self.assertEqual(m.marked, 2)
            self.assertEqual((await c.seen_user(user)).items, 2)
            self.assertEqual((await c.seen_check(user, ["a", "x"])).seen, [True, False])
            f = await c.seen_filter(user, ids=["a", "x", "b"], answer="kept")
            self.assertEqual(f.kept, ["x"])
            await c.seen_delete(user, "a")
            self.assertEqual((await c.seen_check(user, ["a", "b"])).seen, [False, True])
            res = await c.seen_mark_batch(
                [{"user": "py-async-u1", "items": ["q"]}, {"user": "py-async-u2", "items": ["r"]}]
            )
            self.assertEqual([r.marked for r in res], [1, 1])
            ck = await c.seen_check_batch(
                [simdex.SeenUserIDs("py-async-u1", ["q", "r"]), simdex.SeenUserIDs("py-async-u2", ["q", "r"])]
            )
            self.assertEqual([r.seen for r in ck], [[True, False], [False, True]])
            fr = await c.seen_filter_batch(
                [
                    simdex.SeenUserFilter("py-async-u1", ids=["q", "r"]),
                    simdex.SeenUserFilter("py-async-u2", ids=["q", "r"]),
                ]
            )
            self.assertEqual([r.kept for r in fr], [["r"], ["q"]])
            await c.seen_forget(user)
            self.assertEqual((await c.seen_check(user, ["b"])).seen, [False])


if __name__ == "__main__":
    unittest.main()
