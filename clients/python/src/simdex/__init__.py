"""Client for the simdex near-duplicate text detection REST service.

    from simdex import Client
    with Client("http://127.0.0.1:8080", api_key=KEY) as c:
        res = c.insert_document("news/1", "text ...", mode="insert-if-unique")

AsyncClient has the same methods as coroutines. Problems the server
answers raise SimdexError (status, kind, title, detail, fields).
"""

from . import _types
from ._client import AsyncClient, Client
from ._core import DEFAULT_MAX_BATCH, DEFAULT_MAX_BODY_BYTES, ROUTES, RetryPolicy, Route
from ._errors import SimdexConnectionError, SimdexError
from ._types import *  # noqa: F401,F403 (the request and response types, _types.__all__)

__all__ = [
    "Client",
    "AsyncClient",
    "RetryPolicy",
    "Route",
    "ROUTES",
    "DEFAULT_MAX_BATCH",
    "DEFAULT_MAX_BODY_BYTES",
    "SimdexError",
    "SimdexConnectionError",
]
__all__ += _types.__all__
