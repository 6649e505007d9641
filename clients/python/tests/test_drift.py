"""The client and the server's live /openapi.json cannot drift apart: every
operation of the document maps to a method of both clients (the table
below), every route of the client is in the document, every maxItems is
the client's chunk size, and every operation is exercised by the tests."""

from __future__ import annotations

import inspect
import unittest

import simdex

from .helpers import ALL_CALLS, client

#: operationId -> (method, path, client method); None: deliberately no
#: method (the editor's page and its files are HTML for browsers).
OPERATIONS = {
    "check": ("POST", "/v1/check", "check"),
    "checkBatch": ("POST", "/v1/check/batch", "check_batch"),
    "insertDocument": ("POST", "/v1/documents", "insert_document"),
    "insertDocuments": ("POST", "/v1/documents/batch", "insert_documents"),
    "getDocument": ("GET", "/v1/documents/{id}", "get_document"),
    "deleteDocument": ("DELETE", "/v1/documents/{id}", "delete_document"),
    "fingerprint": ("POST", "/v1/fingerprint", "fingerprint"),
    "explain": ("POST", "/v1/explain", "explain"),
    "stats": ("GET", "/v1/stats", "stats"),
    "healthz": ("GET", "/healthz", "health"),
    "readyz": ("GET", "/readyz", "ready"),
    "metrics": ("GET", "/metrics", "metrics"),
    "openapi": ("GET", "/openapi.json", "openapi"),
    "seenUser": ("GET", "/v1/users/{user}/seen", "seen_user"),
    "seenMark": ("POST", "/v1/users/{user}/seen", "seen_mark"),
    "seenForget": ("DELETE", "/v1/users/{user}/seen", "seen_forget"),
    "seenCheck": ("POST", "/v1/users/{user}/seen/check", "seen_check"),
    "seenFilter": ("POST", "/v1/users/{user}/seen/filter", "seen_filter"),
    "seenDelete": ("DELETE", "/v1/users/{user}/seen/items/{item}", "seen_delete"),
    "seenMarkBatch": ("POST", "/v1/seen/mark", "seen_mark_batch"),
    "seenCheckBatch": ("POST", "/v1/seen/check", "seen_check_batch"),
    "seenFilterBatch": ("POST", "/v1/seen/filter", "seen_filter_batch"),
    "page": ("GET", "/", None),
    "pageFile": ("GET", "/ui/{file}", None),
}


def _max_items(v, path, out):  # type: ignore[no-untyped-def]
    if isinstance(v, dict):
        if "maxItems" in v:
            out.append((path, v["maxItems"]))
        for k, x in v.items():
            _max_items(x, f"{path}/{k}", out)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            _max_items(x, f"{path}/{i}", out)


class TestDrift(unittest.TestCase):
    def test_operations(self) -> None:
        c, _ = client(self)
        doc = c.openapi()
        in_doc = {}
        for path, item in doc["paths"].items():
            for method, op in item.items():
                if method == "parameters" or method.startswith("x-"):
                    continue
                in_doc[op["operationId"]] = (method.upper(), path)
        for op, (method, path) in in_doc.items():
            self.assertIn(op, OPERATIONS, f"the server's {method} {path} ({op}) has no client method")
            self.assertEqual(OPERATIONS[op][:2], (method, path), op)
        for op in OPERATIONS:
            self.assertIn(op, in_doc, f"the client calls {op}, which the server's document does not have")
        with_method = {op: v for op, v in OPERATIONS.items() if v[2] is not None}
        self.assertEqual(
            {op: (r.method, r.path) for op, r in simdex.ROUTES.items()}, {op: v[:2] for op, v in with_method.items()}
        )
        for op, (_, _, name) in with_method.items():
            for cls in (simdex.Client, simdex.AsyncClient):
                self.assertTrue(hasattr(cls, name), f"{cls.__name__}.{name} ({op})")
            self.assertTrue(inspect.iscoroutinefunction(getattr(simdex.AsyncClient, name)), name)
            self.assertEqual(
                list(inspect.signature(getattr(simdex.Client, name)).parameters),
                list(inspect.signature(getattr(simdex.AsyncClient, name)).parameters),
                name,
            )

    def test_limits(self) -> None:
        c, _ = client(self)
        found = []
        _max_items(c.openapi(), "", found)
        self.assertTrue(found)
        for path, n in found:
            self.assertEqual(n, simdex.DEFAULT_MAX_BATCH, path)

    def test_zz_every_operation_exercised(self) -> None:
        # Runs after the other test modules when the whole suite runs
        # (unittest orders modules and tests by name).
        if len(ALL_CALLS) < 3:
            self.skipTest("run with the whole suite")
        missing = sorted(op for op in simdex.ROUTES if ALL_CALLS[op] == 0)
        self.assertEqual(missing, [], "operations no test called")


if __name__ == "__main__":
    unittest.main()
