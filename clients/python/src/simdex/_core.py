"""What the sync and asyncio clients share: the route table, request
encoding, batch chunking and merging, answer decoding and the retry rule.

Each operation is a generator that yields the requests (Call) it needs, one
at a time, receives each answer (Reply), and returns the result; the
clients' drivers send the requests (with retries) and throw a request's
SimdexError into the generator, which may attach a partial answer.
"""

from __future__ import annotations

import datetime as _dt
import email.utils
import json
import random
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Generator, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union
from urllib.parse import quote, urlencode

from ._errors import SimdexConnectionError, SimdexError
from ._types import (
    BatchCheckResponse,
    BatchInsertResponse,
    CheckResponse,
    Content,
    Document,
    DocumentInput,
    ExplainQuery,
    ExplainResponse,
    FingerprintResponse,
    InsertResponse,
    ItemError,
    Problem,
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
    format_time,
)

#: The server's default limit on the items of one batch call (its
#: --max-batch, the OpenAPI document's maxItems): documents and checks per
#: batch, ids or candidates per user, users per seen batch.
DEFAULT_MAX_BATCH = 1000

#: The server's default limit on a request body (its --max-body-bytes).
DEFAULT_MAX_BODY_BYTES = 8 << 20

_MAX_ERROR_BODY = 1 << 20


@dataclass(frozen=True)
class Route:
    """One operation of the OpenAPI document."""

    op: str
    method: str
    path: str
    #: Retried after connection errors: reads, deletes and seen marks
    #: (marking an item again leaves the set as one mark does). Inserts are
    #: not: one repeated after a lost answer stores the document again.
    idempotent: bool


#: The operations the client calls, by operationId (tests compare them with
#: the server's /openapi.json). The editor's page and its files (page,
#: pageFile) are for browsers and have no method.
ROUTES: Dict[str, Route] = {
    r.op: r
    for r in [
        Route("check", "POST", "/v1/check", True),
        Route("checkBatch", "POST", "/v1/check/batch", True),
        Route("insertDocument", "POST", "/v1/documents", False),
        Route("insertDocuments", "POST", "/v1/documents/batch", False),
        Route("getDocument", "GET", "/v1/documents/{id}", True),
        Route("deleteDocument", "DELETE", "/v1/documents/{id}", True),
        Route("fingerprint", "POST", "/v1/fingerprint", True),
        Route("explain", "POST", "/v1/explain", True),
        Route("stats", "GET", "/v1/stats", True),
        Route("healthz", "GET", "/healthz", True),
        Route("readyz", "GET", "/readyz", True),
        Route("metrics", "GET", "/metrics", True),
        Route("openapi", "GET", "/openapi.json", True),
        Route("seenUser", "GET", "/v1/users/{user}/seen", True),
        Route("seenMark", "POST", "/v1/users/{user}/seen", True),
        Route("seenForget", "DELETE", "/v1/users/{user}/seen", True),
        Route("seenCheck", "POST", "/v1/users/{user}/seen/check", True),
        Route("seenFilter", "POST", "/v1/users/{user}/seen/filter", True),
        Route("seenDelete", "DELETE", "/v1/users/{user}/seen/items/{item}", True),
        Route("seenMarkBatch", "POST", "/v1/seen/mark", True),
        Route("seenCheckBatch", "POST", "/v1/seen/check", True),
        Route("seenFilterBatch", "POST", "/v1/seen/filter", True),
    ]
}


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds retries. A 503 answer is retried after its Retry-After (or,
    without one, after backoff doubling per retry) when that wait is at
    most max_wait; a connection error is retried after the backoff, for
    idempotent operations only."""

    #: How many times one request is retried (0: never).
    max_retries: int = 3
    #: The longest wait honoured, in seconds; a Retry-After above it ends
    #: the retries.
    max_wait: float = 30.0
    #: The first wait (seconds) when the server named none; it doubles per
    #: retry, with up to 50% jitter, capped at max_wait.
    backoff: float = 0.2


@dataclass
class Call:
    """One request an operation needs."""

    route: Route
    params: Tuple[str, ...] = ()
    query: Optional[Mapping[str, str]] = None
    body: Optional[bytes] = None

    def url(self, base: str) -> str:
        path = self.route.path
        out = []
        for v in self.params:
            i, j = path.index("{"), path.index("}")
            out.append(path[:i])
            out.append(quote(v, safe=""))
            path = path[j + 1 :]
        out.append(path)
        u = base + "".join(out)
        if self.query:
            u += "?" + urlencode(self.query)
        return u


@dataclass
class Reply:
    """A successful answer."""

    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


T = TypeVar("T")

#: An operation: yields its requests, receives their answers, returns a T.
Op = Generator[Call, Reply, T]


def encode(v: Any) -> bytes:
    return json.dumps(v, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def parse_retry_after(v: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Reads a Retry-After header: delay seconds or an HTTP date (None when
    absent, unreadable or past)."""
    if not v:
        return None
    v = v.strip()
    try:
        n = int(v)
        return float(min(n, 86400)) if n > 0 else None
    except ValueError:
        pass
    try:
        t = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return None
    if t is None:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.timezone.utc)
    d = t.timestamp() - (time.time() if now is None else now)
    return d if d > 0 else None


def error_from_response(
    status: int, reason: str, content_type: str, body: bytes, retry_after: Optional[str]
) -> SimdexError:
    """The SimdexError of an error answer."""
    ra = parse_retry_after(retry_after)
    if "json" in content_type:
        try:
            d = json.loads(body)
            if isinstance(d, dict):
                p = Problem.from_dict(d)
                p.status = status
                return SimdexError.from_problem(p, retry_after=ra)
        except ValueError:
            pass
    text = body[:512].decode("utf-8", "replace").strip()
    return SimdexError(status, "", reason, text, retry_after=ra)


def retry_wait(policy: RetryPolicy, route: Route, attempt: int, err: SimdexError) -> Optional[float]:
    """How long to wait before retrying a failed attempt, or None for no retry."""
    if attempt >= policy.max_retries:
        return None
    backoff = policy.backoff * (1 << min(attempt, 30))
    backoff = min(backoff + random.uniform(0, backoff / 2), policy.max_wait)
    if isinstance(err, SimdexConnectionError):
        return backoff if route.idempotent else None
    if err.status != 503:
        return None
    if err.retry_after is not None:
        return err.retry_after if err.retry_after <= policy.max_wait else None
    return backoff


# Inputs.


def _content(item: Union[Content, Mapping[str, Any]]) -> Dict[str, Any]:
    return item.to_dict() if isinstance(item, Content) else dict(item)


def _document(item: Union[DocumentInput, Mapping[str, Any]]) -> Dict[str, Any]:
    if isinstance(item, DocumentInput):
        return item.to_dict()
    d = dict(item)
    if isinstance(d.get("time"), _dt.datetime):
        d["time"] = format_time(d["time"])
    return d


def _seen_item(item: Union[SeenItem, Mapping[str, Any], str]) -> Dict[str, Any]:
    if isinstance(item, str):
        return {"id": item}
    return item.to_dict() if isinstance(item, SeenItem) else dict(item)


def _search(
    k: Optional[int], since: Optional[_dt.datetime], until: Optional[_dt.datetime], limit: Optional[int]
) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    if k is not None:
        out["k"] = k
    if since is not None:
        out["since"] = format_time(since)
    if until is not None:
        out["until"] = format_time(until)
    if limit is not None:
        out["limit"] = limit
    return out


def _check_user(user: str) -> None:
    if "/" in user:
        raise ValueError(f"user id {user!r} contains '/'")


# Chunking.


def chunks(sizes: Sequence[int], max_n: int, max_bytes: int) -> List[Tuple[int, int]]:
    """Cuts units of the given sizes into [lo, hi) spans of at most max_n
    units and max_bytes bytes (a unit larger than max_bytes goes alone)."""
    out: List[Tuple[int, int]] = []
    lo, size = 0, 0
    for i, s in enumerate(sizes):
        if i > lo and (i - lo >= max_n or size + s > max_bytes):
            out.append((lo, i))
            lo, size = i, 0
        size += s
    if sizes:
        out.append((lo, len(sizes)))
    return out


def _batch(
    route: Route,
    items: List[bytes],
    rest: Dict[str, Any],
    max_batch: int,
    max_body: int,
    merge: Callable[[int, Any], None],
    partial: Callable[[], Any],
) -> Generator[Call, Reply, None]:
    """Sends items (encoded) in chunks as {"items": [...], **rest}; merge
    takes the answer of the chunk starting at item lo."""
    tail = encode(rest)[1:-1]
    envelope = len(b'{"items":[],}') + len(tail)
    for lo, hi in chunks([len(b) + 1 for b in items], max_batch, max_body - envelope):
        body = b'{"items":[' + b",".join(items[lo:hi]) + b"]" + (b"," + tail if tail else b"") + b"}"
        try:
            reply = yield Call(route, body=body)
        except SimdexError as e:
            if (lo, hi) != (0, len(items)):
                e.partial, e.offset = partial(), lo
            raise
        merge(lo, reply.json())


# Operations.


def check(content: Dict[str, Any], search: Dict[str, Any], policy: Optional[str]) -> "Op[CheckResponse]":
    body = {**content, **search}
    if policy is not None:
        body["policy"] = policy
    reply = yield Call(ROUTES["check"], body=encode(body))
    return CheckResponse.from_dict(reply.json())


def _merge_results(out: Any, result: Callable[[Dict[str, Any]], Any]) -> Callable[[int, Any], None]:
    """The merge of a per-item batch into out: each call's results (decoded
    by result; None where an item failed) and its items' errors, their
    indexes made the whole batch's (lo: the call's first item)."""

    def merge(lo: int, d: Any) -> None:
        out.results.extend(result(r) if r is not None else None for r in d["results"])
        out.errors.extend(ItemError.from_dict(e, lo) for e in d["errors"])

    return merge


def check_batch(
    items: Sequence[Union[Content, Mapping[str, Any]]],
    search: Dict[str, Any],
    policy: Optional[str],
    max_batch: int,
    max_body: int,
) -> "Op[BatchCheckResponse]":
    rest = dict(search)
    if policy is not None:
        rest["policy"] = policy
    out = BatchCheckResponse()
    merge = _merge_results(out, CheckResponse.from_dict)
    yield from _batch(ROUTES["checkBatch"], [encode(_content(i)) for i in items], rest, max_batch, max_body, merge, lambda: out)
    return out


def insert_document(doc: Dict[str, Any], mode: Optional[str], k: Optional[int]) -> "Op[InsertResponse]":
    body = dict(doc)
    if mode is not None:
        body["mode"] = mode
    if k is not None:
        body["k"] = k
    reply = yield Call(ROUTES["insertDocument"], body=encode(body))
    return InsertResponse.from_dict(reply.json())


def insert_documents(
    items: Sequence[Union[DocumentInput, Mapping[str, Any]]],
    mode: Optional[str],
    k: Optional[int],
    max_batch: int,
    max_body: int,
) -> "Op[BatchInsertResponse]":
    rest: Dict[str, Any] = {}
    if mode is not None:
        rest["mode"] = mode
    if k is not None:
        rest["k"] = k
    out = BatchInsertResponse()
    merge = _merge_results(out, InsertResponse.from_dict)
    yield from _batch(ROUTES["insertDocuments"], [encode(_document(i)) for i in items], rest, max_batch, max_body, merge, lambda: out)
    return out


def get_document(id: str) -> "Op[Document]":
    reply = yield Call(ROUTES["getDocument"], (id,))
    return Document.from_dict(reply.json())


def delete_document(id: str) -> "Op[None]":
    yield Call(ROUTES["deleteDocument"], (id,))
    return None


def fingerprint(text: str, title: Optional[str], lang: Optional[str]) -> "Op[FingerprintResponse]":
    body: Dict[str, Any] = {"text": text}
    if title is not None:
        body["title"] = title
    if lang is not None:
        body["lang"] = lang
    reply = yield Call(ROUTES["fingerprint"], body=encode(body))
    return FingerprintResponse.from_dict(reply.json())


def explain(
    id: str, query: Union[ExplainQuery, Mapping[str, Any], None], policy: Optional[str], k: Optional[int]
) -> "Op[ExplainResponse]":
    body: Dict[str, Any] = {"id": id}
    if query is not None:
        body["query"] = query.to_dict() if isinstance(query, ExplainQuery) else dict(query)
    if policy is not None:
        body["policy"] = policy
    if k is not None:
        body["k"] = k
    reply = yield Call(ROUTES["explain"], body=encode(body))
    return ExplainResponse.from_dict(reply.json())


def stats(rows: Optional[int]) -> "Op[Stats]":
    reply = yield Call(ROUTES["stats"], query={"rows": str(rows)} if rows is not None else None)
    return Stats.from_dict(reply.json())


def status(op: str) -> "Op[Status]":
    reply = yield Call(ROUTES[op])
    return Status.from_dict(reply.json())


def metrics() -> "Op[str]":
    reply = yield Call(ROUTES["metrics"])
    return reply.body.decode("utf-8")


def openapi() -> "Op[Dict[str, Any]]":
    reply = yield Call(ROUTES["openapi"])
    doc: Dict[str, Any] = reply.json()
    return doc


def seen_user(user: str) -> "Op[SeenUserResponse]":
    _check_user(user)
    reply = yield Call(ROUTES["seenUser"], (user,))
    return SeenUserResponse.from_dict(reply.json())


def seen_delete(user: str, item: str) -> "Op[None]":
    _check_user(user)
    yield Call(ROUTES["seenDelete"], (user, item))
    return None


def seen_forget(user: str) -> "Op[None]":
    _check_user(user)
    yield Call(ROUTES["seenForget"], (user,))
    return None


@dataclass
class _Piece:
    """The items [lo, hi) of user number `user`'s list."""

    user: int
    lo: int
    hi: int


def _pieces(lens: Sequence[int], max_n: int) -> List[_Piece]:
    out = []
    for u, n in enumerate(lens):
        lo = 0
        while True:
            hi = min(lo + max_n, n)
            out.append(_Piece(u, lo, hi))
            if hi >= n:
                break
            lo = hi
    return out


def _seen_batch(
    single: Route,
    batch: Route,
    users: Sequence[str],
    lens: Sequence[int],
    entry: Callable[[_Piece], Dict[str, Any]],
    merge: Callable[[_Piece, Any], None],
    partial: Callable[[], Any],
    max_batch: int,
    max_body: int,
) -> Generator[Call, Reply, None]:
    """Sends per-user lists as pieces of at most max_batch items, packed into
    calls of at most max_batch pieces and max_body bytes, never two pieces
    of one user in a call. With one user, its own route."""
    for u in users:
        _check_user(u)
    ps = _pieces(lens, max_batch)
    raw = [encode({"user": users[p.user], **entry(p)}) for p in ps]
    lo = 0
    while lo < len(ps):
        hi, size = lo + 1, len(b'{"users":[]}') + len(raw[lo])
        while (
            hi < len(ps)
            and hi - lo < max_batch
            and ps[hi].user != ps[hi - 1].user
            and size + len(raw[hi]) + 1 <= max_body
        ):
            size += len(raw[hi]) + 1
            hi += 1
        if len(users) == 1:
            call = Call(single, (users[0],), body=encode(entry(ps[lo])))
        else:
            call = Call(batch, body=b'{"users":[' + b",".join(raw[lo:hi]) + b"]}")
        try:
            reply = yield call
        except SimdexError as e:
            if len(ps) > 1:
                e.partial, e.offset = partial(), ps[lo].user
            raise
        answers = [reply.json()] if len(users) == 1 else reply.json()["results"]
        if len(answers) != hi - lo:
            raise SimdexError(reply.status, "", "Unexpected answer", f"{len(answers)} results for {hi - lo} users")
        for p, a in zip(ps[lo:hi], answers):
            merge(p, a)
        lo = hi


def _seen_lists(
    single: Route,
    batch: Route,
    key: str,
    names: List[str],
    lists: Sequence[Sequence[Any]],
    out: List[Any],
    merge: Callable[[_Piece, Any], None],
    single_user: bool,
    max_batch: int,
    max_body: int,
) -> Generator[Call, Reply, None]:
    """_seen_batch for entries of one list per user, sent as the field key;
    out is the answer, one per user (a SimdexError's partial answer)."""

    def entry(p: _Piece) -> Dict[str, Any]:
        return {key: lists[p.user][p.lo : p.hi]}

    def partial() -> Any:
        return out[0] if single_user else out

    yield from _seen_batch(single, batch, names, [len(x) for x in lists], entry, merge, partial, max_batch, max_body)


def seen_mark_batch(
    users: Sequence[Union[SeenUserMarks, Mapping[str, Any]]], max_batch: int, max_body: int, single_user: bool = False
) -> "Op[List[SeenMarkResponse]]":
    names: List[str] = []
    lists: List[List[Dict[str, Any]]] = []
    for u in users:
        name, items = (u.user, u.items) if isinstance(u, SeenUserMarks) else (u["user"], u.get("items") or [])
        names.append(name)
        lists.append([_seen_item(i) for i in items])
    out = [SeenMarkResponse(user=n) for n in names]

    def merge(p: _Piece, d: Any) -> None:
        o = out[p.user]
        o.marked += d.get("marked", 0)
        o.unknown_doc_ids.extend(d.get("unknown_doc_ids") or [])

    yield from _seen_lists(
        ROUTES["seenMark"], ROUTES["seenMarkBatch"], "items", names, lists, out, merge, single_user, max_batch, max_body
    )
    return out


def seen_check_batch(
    users: Sequence[Union[SeenUserIDs, Mapping[str, Any]]], max_batch: int, max_body: int, single_user: bool = False
) -> "Op[List[SeenCheckResponse]]":
    names: List[str] = []
    lists: List[List[str]] = []
    for u in users:
        name, ids = (u.user, u.ids) if isinstance(u, SeenUserIDs) else (u["user"], u.get("ids") or [])
        names.append(name)
        lists.append(list(ids))
    out = [SeenCheckResponse(user=n) for n in names]

    def merge(p: _Piece, d: Any) -> None:
        seen = d.get("seen") or []
        if len(seen) != p.hi - p.lo:
            raise SimdexError(200, "", "Unexpected answer", f"{len(seen)} flags for {p.hi - p.lo} ids")
        out[p.user].seen.extend(seen)

    yield from _seen_lists(
        ROUTES["seenCheck"], ROUTES["seenCheckBatch"], "ids", names, lists, out, merge, single_user, max_batch, max_body
    )
    return out


def seen_filter_batch(
    users: Sequence[Union[SeenUserFilter, Mapping[str, Any]]], max_batch: int, max_body: int, single_user: bool = False
) -> "Op[List[SeenFilterResponse]]":
    reqs: List[Dict[str, Any]] = []
    for u in users:
        if isinstance(u, SeenUserFilter):
            u = {"user": u.user, "candidates": u.candidates, "ids": u.ids, "near": u.near, "k": u.k, "answer": u.answer}
        r = {k: v for k, v in dict(u).items() if v is not None}
        if r.get("candidates") is not None:
            r["candidates"] = [_seen_item(c) for c in r["candidates"]]
        if r.get("ids") is not None:
            r["ids"] = list(r["ids"])
        if not r.get("near"):
            r.pop("near", None)
        reqs.append(r)
    names = [r["user"] for r in reqs]
    lens = []
    for r in reqs:
        if "candidates" in r and "ids" in r:
            lens.append(0)  # sent as given, for the server to refuse
        else:
            lens.append(len(r.get("candidates", r.get("ids", []))))
    out = []
    for r in reqs:
        o = SeenFilterResponse(user=r["user"])
        if r.get("answer") == "indexes":
            o.kept_indexes = []
        else:
            o.kept = []
            if r.get("answer") in (None, "full"):
                o.dropped = []
        out.append(o)

    def entry(p: _Piece) -> Dict[str, Any]:
        e = {k: v for k, v in reqs[p.user].items() if k != "user"}
        if "candidates" in e and "ids" in e:
            return e
        for key in ("candidates", "ids"):
            if key in e:
                e[key] = e[key][p.lo : p.hi]
        return e

    def merge(p: _Piece, d: Any) -> None:
        o = out[p.user]
        if "kept" in d and o.kept is not None:
            o.kept.extend(d["kept"])
        if "dropped" in d and o.dropped is not None:
            o.dropped.extend(
                SeenDropped(index=x["index"] + p.lo, id=x["id"], reason=x["reason"], distance=x.get("distance"))
                for x in d["dropped"]
            )
        if "kept_indexes" in d and o.kept_indexes is not None:
            o.kept_indexes.extend(i + p.lo for i in d["kept_indexes"])
        o.unknown_doc_ids.extend(d.get("unknown_doc_ids") or [])

    def partial() -> Any:
        return out[0] if single_user else out

    yield from _seen_batch(
        ROUTES["seenFilter"], ROUTES["seenFilterBatch"], names, lens, entry, merge, partial, max_batch, max_body
    )
    return out


def seen_mark(
    user: str, items: Sequence[Union[SeenItem, Mapping[str, Any], str]], max_batch: int, max_body: int
) -> "Op[SeenMarkResponse]":
    out = yield from seen_mark_batch([SeenUserMarks(user, list(items))], max_batch, max_body, single_user=True)
    return out[0]


def seen_check(user: str, ids: Sequence[str], max_batch: int, max_body: int) -> "Op[SeenCheckResponse]":
    out = yield from seen_check_batch([SeenUserIDs(user, list(ids))], max_batch, max_body, single_user=True)
    return out[0]


def seen_filter(req: SeenUserFilter, max_batch: int, max_body: int) -> "Op[SeenFilterResponse]":
    out = yield from seen_filter_batch([req], max_batch, max_body, single_user=True)
    return out[0]


def search_params(
    k: Optional[int], since: Optional[_dt.datetime], until: Optional[_dt.datetime], limit: Optional[int]
) -> Dict[str, Any]:
    return _search(k, since, until, limit)


def content(
    text: Optional[str],
    title: Optional[str],
    lang: Optional[str],
    fingerprint: Optional[str],
    source: Optional[str] = None,
) -> Dict[str, Any]:
    return Content(text=text, title=title, lang=lang, fingerprint=fingerprint, source=source).to_dict()
