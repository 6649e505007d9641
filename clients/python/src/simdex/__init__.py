"""Client for the simdex near-duplicate text detection REST service.

    from simdex import Client
    with Client("http://127.0.0.1:8080", api_key=KEY) as c:
        res = c.insert_document("news/1", "text ...", mode="insert-if-unique")

AsyncClient has the same methods as coroutines. Problems the server
answers raise SimdexError (status, kind, title, detail, fields).
"""

from ._client import AsyncClient, Client
from ._core import DEFAULT_MAX_BATCH, DEFAULT_MAX_BODY_BYTES, ROUTES, RetryPolicy, Route
from ._errors import SimdexConnectionError, SimdexError
from ._types import (
    Alignment,
    BatchCheckResponse,
    BatchInsertResponse,
    CheckHit,
    CheckResponse,
    Content,
    Document,
    DocumentInput,
    ExplainQuery,
    ExplainResponse,
    ExplainSegment,
    ExplainSide,
    Feature,
    FieldError,
    FingerprintResponse,
    Hit,
    InsertResponse,
    ItemError,
    Layout,
    Problem,
    RowRef,
    SeenCheckResponse,
    SeenDropped,
    SeenFilterResponse,
    SeenItem,
    SeenMarkResponse,
    SeenUserFilter,
    SeenUserIDs,
    SeenUserMarks,
    SeenUserResponse,
    Stats,
    Status,
)

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
    "Content",
    "DocumentInput",
    "Hit",
    "CheckHit",
    "CheckResponse",
    "BatchCheckResponse",
    "InsertResponse",
    "BatchInsertResponse",
    "Problem",
    "FieldError",
    "ItemError",
    "Document",
    "Feature",
    "FingerprintResponse",
    "ExplainQuery",
    "ExplainSegment",
    "ExplainSide",
    "Alignment",
    "ExplainResponse",
    "Layout",
    "RowRef",
    "Stats",
    "Status",
    "SeenItem",
    "SeenUserResponse",
    "SeenMarkResponse",
    "SeenCheckResponse",
    "SeenDropped",
    "SeenFilterResponse",
    "SeenUserMarks",
    "SeenUserIDs",
    "SeenUserFilter",
]
