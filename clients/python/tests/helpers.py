"""Shared pieces of the tests: texts, a request counter, client builders."""

from __future__ import annotations

import collections
import threading
import unittest
from typing import Any, Dict, Optional

import httpx

import simdex

from . import _server

ARTICLE = (
    "The city council approved twelve electric buses for the northern routes on Monday, "
    "officials said after a long vote in the old town hall. The buses will enter service next spring, "
    "replacing diesel vehicles that are more than fifteen years old, and the council expects lower "
    "running costs and cleaner air along the busiest corridors of the city."
)
RESTYLED = ARTICLE.replace(",", " -")

#: Requests every test client sent, by operation (checked by test_drift).
ALL_CALLS: Dict[str, int] = collections.Counter()
_lock = threading.Lock()


def match_route(method: str, raw_path: str) -> str:
    """The operation of a request ("" if none); {param} is one escaped segment."""
    segs = raw_path.split("/")
    for r in simdex.ROUTES.values():
        if r.method != method:
            continue
        tpl = r.path.split("/")
        if len(tpl) == len(segs) and all(t.startswith("{") and s != "" or t == s for t, s in zip(tpl, segs)):
            return r.op
    return ""


class Counter:
    """Counts requests per operation through an httpx event hook."""

    def __init__(self) -> None:
        self.ops: Dict[str, int] = collections.Counter()
        self.max_body = 0

    def _record(self, request: httpx.Request) -> None:
        path = request.url.raw_path.split(b"?")[0].decode("ascii")
        op = match_route(request.method, path)
        with _lock:
            self.ops[op] += 1
            ALL_CALLS[op] += 1
            self.max_body = max(self.max_body, len(request.content))

    def hook(self, request: httpx.Request) -> None:
        self._record(request)

    async def ahook(self, request: httpx.Request) -> None:
        self._record(request)


def client(test: unittest.TestCase, base: Optional[str] = None, **kw: Any) -> "tuple[simdex.Client, Counter]":
    """A client of the test server (or base) with the API key, sending
    through an httpx.Client that counts requests; closed after the test."""
    counter = Counter()
    http = httpx.Client(timeout=120, event_hooks={"request": [counter.hook]})
    test.addCleanup(http.close)
    kw.setdefault("api_key", _server.API_KEY)
    return simdex.Client(base or _server.url(), http_client=http, **kw), counter


def async_client(
    test: unittest.IsolatedAsyncioTestCase, base: Optional[str] = None, **kw: Any
) -> "tuple[simdex.AsyncClient, Counter]":
    """client for asyncio."""
    counter = Counter()
    http = httpx.AsyncClient(timeout=120, event_hooks={"request": [counter.ahook]})
    test.addAsyncCleanup(http.aclose)
    kw.setdefault("api_key", _server.API_KEY)
    return simdex.AsyncClient(base or _server.url(), http_client=http, **kw), counter
