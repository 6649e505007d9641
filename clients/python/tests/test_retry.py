"""Retries: a 503 with Retry-After (what the server answers when its store
is down) is retried after the wait; connection errors are retried for
idempotent operations only; retries are bounded."""

from __future__ import annotations

import asyncio
import time
import unittest

from simdex import RetryPolicy, SimdexConnectionError, SimdexError

from . import _server
from ._server import FaultProxy, hang_up, unavailable
from .helpers import async_client, client

FAST = RetryPolicy(max_retries=2, max_wait=1.0, backoff=0.01)


def setUpModule() -> None:
    # Started here, not inside a test's event loop (which it would block).
    _server.url()


class TestRetry(unittest.TestCase):
    def proxy(self, fault) -> FaultProxy:  # type: ignore[no-untyped-def]
        p = FaultProxy(fault)
        self.addCleanup(p.close)
        return p

    def test_503_once_then_through(self) -> None:
        for name, call in [
            ("check", lambda c: c.check(fingerprint="0x5")),
            ("insert", lambda c: c.insert_document("py/retry/1", fingerprint="0x6")),
        ]:
            with self.subTest(name):
                p = self.proxy(lambda n, h: n == 1 and unavailable(h, "1"))
                c, _ = client(self, p.url)
                start = time.monotonic()
                call(c)
                self.assertGreaterEqual(time.monotonic() - start, 1.0)
                self.assertEqual(p.requests, 2)

    def test_bounds(self) -> None:
        p = self.proxy(lambda n, h: unavailable(h, None))
        c, _ = client(self, p.url, retry=FAST)
        with self.assertRaises(SimdexError) as cm:
            c.check(fingerprint="0x5")
        self.assertEqual((cm.exception.status, cm.exception.kind, p.requests), (503, "store-unavailable", 3))

        p = self.proxy(lambda n, h: unavailable(h, "120"))
        c, _ = client(self, p.url)
        start = time.monotonic()
        with self.assertRaises(SimdexError) as cm:
            c.check(fingerprint="0x5")
        self.assertEqual((cm.exception.retry_after, p.requests), (120.0, 1))
        self.assertLess(time.monotonic() - start, 5)

        p = self.proxy(lambda n, h: unavailable(h, "1"))
        c, _ = client(self, p.url, retry=RetryPolicy(max_retries=0))
        with self.assertRaises(SimdexError):
            c.check(fingerprint="0x5")
        self.assertEqual(p.requests, 1)

    def test_connection_errors(self) -> None:
        p = self.proxy(lambda n, h: n == 1 and hang_up(h))
        c, _ = client(self, p.url, retry=FAST)
        c.stats(rows=0)
        self.assertEqual(p.requests, 2)

        p = self.proxy(lambda n, h: n == 1 and hang_up(h))
        c, _ = client(self, p.url, retry=FAST)
        with self.assertRaises(SimdexConnectionError) as cm:
            c.insert_document("py/retry/2", fingerprint="0x7")
        self.assertEqual((cm.exception.status, p.requests), (0, 1))

    def test_non_problem_error(self) -> None:
        def bad_gateway(n: int, h) -> bool:  # type: ignore[no-untyped-def]
            body = b"<html>bad gateway</html>"
            h.send_response(502)
            h.send_header("Content-Type", "text/html")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
            return True

        p = self.proxy(bad_gateway)
        c, _ = client(self, p.url)
        with self.assertRaises(SimdexError) as cm:
            c.health()
        self.assertEqual(
            (cm.exception.status, cm.exception.kind, cm.exception.detail), (502, "", "<html>bad gateway</html>")
        )

    def test_parse_retry_after(self) -> None:
        from simdex._core import parse_retry_after

        now = 1_800_000_000.0
        self.assertIsNone(parse_retry_after(None))
        self.assertEqual(parse_retry_after("1"), 1.0)
        self.assertIsNone(parse_retry_after("-1"))
        self.assertIsNone(parse_retry_after("soon"))
        self.assertEqual(parse_retry_after("99999999999"), 86400.0)
        date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(now + 5))
        self.assertAlmostEqual(parse_retry_after(date, now), 5.0)
        self.assertIsNone(parse_retry_after(time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(now - 5)), now))


class TestAsyncRetry(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        # The test loop runs in debug mode, which reports steps over 0.1 s:
        # encoding 2,500 items or starting a proxy thread takes about that.
        asyncio.get_running_loop().slow_callback_duration = 2.0

    async def test_503_once_then_through(self) -> None:
        p = FaultProxy(lambda n, h: n == 1 and unavailable(h, "1"))
        self.addCleanup(p.close)
        c, _ = async_client(self, p.url)
        async with c:
            start = time.monotonic()
            await c.check(fingerprint="0x5")
            self.assertGreaterEqual(time.monotonic() - start, 1.0)
            self.assertEqual(p.requests, 2)

    async def test_cancel_while_waiting(self) -> None:
        p = FaultProxy(lambda n, h: unavailable(h, "5"))
        self.addCleanup(p.close)
        c, _ = async_client(self, p.url)
        async with c:
            start = time.monotonic()
            with self.assertRaises(asyncio.TimeoutError):
                await asyncio.wait_for(c.check(fingerprint="0x5"), 0.5)
            self.assertLess(time.monotonic() - start, 2)
            self.assertEqual(p.requests, 1)

    async def test_connection_errors(self) -> None:
        p = FaultProxy(lambda n, h: n == 1 and hang_up(h))
        self.addCleanup(p.close)
        c, _ = async_client(self, p.url, retry=FAST)
        async with c:
            await c.stats(rows=0)
            self.assertEqual(p.requests, 2)


if __name__ == "__main__":
    unittest.main()
