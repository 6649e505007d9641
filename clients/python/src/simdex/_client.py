"""The synchronous and asyncio clients."""

from __future__ import annotations

import asyncio
import datetime as _dt
import time as _time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union, cast

import httpx

from . import _core
from ._core import DEFAULT_MAX_BATCH, DEFAULT_MAX_BODY_BYTES, Call, Op, Reply, RetryPolicy, T
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
    SeenCheckResponse,
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

__all__ = ["Client", "AsyncClient"]

ContentLike = Union[Content, Mapping[str, Any]]
DocumentLike = Union[DocumentInput, Mapping[str, Any]]
SeenItemLike = Union[SeenItem, Mapping[str, Any], str]

_DEFAULT_TIMEOUT = 60.0


class _Base:
    def __init__(
        self,
        base_url: str,
        *,
        api_key: Optional[str],
        retry: Optional[RetryPolicy],
        max_batch: int,
        max_body_bytes: int,
        user_agent: str,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base URL {base_url!r}: want http(s)://host[:port][/prefix]")
        self.base_url = base_url.rstrip("/")
        self.retry = retry if retry is not None else RetryPolicy()
        self.max_batch = max(1, max_batch)
        self.max_body_bytes = max(1, max_body_bytes)
        self._headers: Dict[str, str] = {
            "Accept": "application/json, application/problem+json",
            "User-Agent": user_agent,
        }
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"

    def _request_args(self, call: Call) -> Dict[str, Any]:
        headers = dict(self._headers)
        if call.body is not None:
            headers["Content-Type"] = "application/json"
        return {"method": call.route.method, "url": call.url(self.base_url), "content": call.body, "headers": headers}

    @staticmethod
    def _reply(resp: httpx.Response) -> Reply:
        if 200 <= resp.status_code < 300:
            return Reply(resp.status_code, resp.content)
        raise _core.error_from_response(
            resp.status_code,
            resp.reason_phrase,
            resp.headers.get("content-type", ""),
            resp.content[: _core._MAX_ERROR_BODY],
            resp.headers.get("retry-after"),
        )


class Client(_Base):
    """A client of one simdex server.

    Batch methods take any number of items: they are sent in requests of at
    most max_batch items and max_body_bytes bytes (the server's defaults),
    and the answers merged. A 503 is retried after the server's Retry-After
    and a connection error, for idempotent operations, after a backoff,
    within `retry`. Problems the server answers raise SimdexError;
    requests that get no answer raise SimdexConnectionError.

    http_client, when given, sends the requests (and is not closed by
    close()); otherwise the client keeps its own connection pool.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: Optional[str] = None,
        http_client: Optional[httpx.Client] = None,
        timeout: float = _DEFAULT_TIMEOUT,
        retry: Optional[RetryPolicy] = None,
        max_batch: int = DEFAULT_MAX_BATCH,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        user_agent: str = "simdex-python-client",
    ) -> None:
        super().__init__(
            base_url,
            api_key=api_key,
            retry=retry,
            max_batch=max_batch,
            max_body_bytes=max_body_bytes,
            user_agent=user_agent,
        )
        self._own = http_client is None
        self._http = http_client if http_client is not None else httpx.Client(timeout=timeout)

    def close(self) -> None:
        if self._own:
            self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, call: Call) -> Reply:
        attempt = 0
        while True:
            try:
                try:
                    resp = self._http.request(**self._request_args(call))
                except httpx.TransportError as e:
                    raise SimdexConnectionError(f"{call.route.op}: {e!r}") from e
                return self._reply(resp)
            except SimdexError as err:
                wait = _core.retry_wait(self.retry, call.route, attempt, err)
                if wait is None:
                    raise
            _time.sleep(wait)
            attempt += 1

    def _run(self, op: "Op[T]") -> T:
        try:
            call = next(op)
            while True:
                try:
                    reply = self._send(call)
                except SimdexError as err:
                    call = op.throw(err)
                    continue
                call = op.send(reply)
        except StopIteration as stop:
            return cast(T, stop.value)

    def check(
        self,
        text: Optional[str] = None,
        *,
        title: Optional[str] = None,
        lang: Optional[str] = None,
        fingerprint: Optional[str] = None,
        k: Optional[int] = None,
        since: Optional[_dt.datetime] = None,
        until: Optional[_dt.datetime] = None,
        limit: Optional[int] = None,
        policy: Optional[str] = None,
        source: Optional[str] = None,
    ) -> CheckResponse:
        """Finds the stored near-duplicates of a text or a bare fingerprint.
        policy: "default", "copy" or "near_identical"; source: the query's
        source (Content.source)."""
        return self._run(
            _core.check(
                _core.content(text, title, lang, fingerprint, source),
                _core.search_params(k, since, until, limit),
                policy,
            )
        )

    def check_batch(
        self,
        items: Sequence[ContentLike],
        *,
        k: Optional[int] = None,
        since: Optional[_dt.datetime] = None,
        until: Optional[_dt.datetime] = None,
        limit: Optional[int] = None,
        policy: Optional[str] = None,
    ) -> BatchCheckResponse:
        """Checks many items (Content or dicts); one result per item, in order
        (None where it failed), and the failed items' problems."""
        return self._run(
            _core.check_batch(
                items, _core.search_params(k, since, until, limit), policy, self.max_batch, self.max_body_bytes
            )
        )

    def insert_document(
        self,
        id: str,
        text: Optional[str] = None,
        *,
        title: Optional[str] = None,
        lang: Optional[str] = None,
        fingerprint: Optional[str] = None,
        time: Optional[_dt.datetime] = None,
        attrs: Optional[Dict[str, str]] = None,
        mode: Optional[str] = None,
        k: Optional[int] = None,
    ) -> InsertResponse:
        """Stores a document; mode "insert-if-unique" stores it only when it
        duplicates nothing (then duplicate_of names the original)."""
        doc = DocumentInput(
            id=id, text=text, title=title, lang=lang, fingerprint=fingerprint, time=time, attrs=attrs
        ).to_dict()
        return self._run(_core.insert_document(doc, mode, k))

    def insert_documents(
        self, items: Sequence[DocumentLike], *, mode: Optional[str] = None, k: Optional[int] = None
    ) -> BatchInsertResponse:
        """Stores many documents (DocumentInput or dicts); one result per item,
        in order (None where it failed), and the failed items' problems."""
        return self._run(_core.insert_documents(items, mode, k, self.max_batch, self.max_body_bytes))

    def get_document(self, id: str) -> Document:
        """The stored document (SimdexError with status 404 when there is none)."""
        return self._run(_core.get_document(id))

    def delete_document(self, id: str) -> None:
        """Deletes the document (SimdexError with status 404 when there is none)."""
        return self._run(_core.delete_document(id))

    def fingerprint(self, text: str, *, title: Optional[str] = None, lang: Optional[str] = None) -> FingerprintResponse:
        """Fingerprints a text without touching the index."""
        return self._run(_core.fingerprint(text, title, lang))

    def explain(
        self,
        id: str,
        *,
        query: Union[ExplainQuery, Mapping[str, Any], None] = None,
        policy: Optional[str] = None,
        k: Optional[int] = None,
    ) -> ExplainResponse:
        """How a stored document relates to a text, word by word."""
        return self._run(_core.explain(id, query, policy, k))

    def stats(self, *, rows: Optional[int] = None) -> Stats:
        """Index counts, layout and the `rows` fullest rows (server default 10)."""
        return self._run(_core.stats(rows))

    def health(self) -> Status:
        return self._run(_core.status("healthz"))

    def ready(self) -> Status:
        return self._run(_core.status("readyz"))

    def metrics(self) -> str:
        """The Prometheus text exposition."""
        return self._run(_core.metrics())

    def openapi(self) -> Dict[str, Any]:
        """The server's OpenAPI document."""
        return self._run(_core.openapi())

    def seen_user(self, user: str) -> SeenUserResponse:
        """Live items and bytes of the user's seen set."""
        return self._run(_core.seen_user(user))

    def seen_mark(self, user: str, items: Sequence[SeenItemLike]) -> SeenMarkResponse:
        """Marks items (SeenItem, dicts or plain ids) as seen by the user."""
        return self._run(_core.seen_mark(user, items, self.max_batch, self.max_body_bytes))

    def seen_check(self, user: str, ids: Sequence[str]) -> SeenCheckResponse:
        """Which of the ids the user has seen: one flag per id."""
        return self._run(_core.seen_check(user, ids, self.max_batch, self.max_body_bytes))

    def seen_filter(
        self,
        user: str,
        *,
        candidates: Optional[Sequence[SeenItemLike]] = None,
        ids: Optional[Sequence[str]] = None,
        near: bool = False,
        k: Optional[int] = None,
        answer: Optional[str] = None,
    ) -> SeenFilterResponse:
        """Filters a candidate list (candidates or ids) for the user: order
        kept, seen items dropped, with near also near-duplicates of them.
        answer: "full" (default), "kept" or "indexes"."""
        req = SeenUserFilter(
            user,
            list(candidates) if candidates is not None else None,
            list(ids) if ids is not None else None,
            near,
            k,
            answer,
        )
        return self._run(_core.seen_filter(req, self.max_batch, self.max_body_bytes))

    def seen_delete(self, user: str, item: str) -> None:
        """Deletes one item from the user's seen set."""
        return self._run(_core.seen_delete(user, item))

    def seen_forget(self, user: str) -> None:
        """Deletes the user's whole seen set."""
        return self._run(_core.seen_forget(user))

    def seen_mark_batch(self, users: Sequence[Union[SeenUserMarks, Mapping[str, Any]]]) -> List[SeenMarkResponse]:
        return self._run(_core.seen_mark_batch(users, self.max_batch, self.max_body_bytes))

    def seen_check_batch(self, users: Sequence[Union[SeenUserIDs, Mapping[str, Any]]]) -> List[SeenCheckResponse]:
        return self._run(_core.seen_check_batch(users, self.max_batch, self.max_body_bytes))

    def seen_filter_batch(self, users: Sequence[Union[SeenUserFilter, Mapping[str, Any]]]) -> List[SeenFilterResponse]:
        return self._run(_core.seen_filter_batch(users, self.max_batch, self.max_body_bytes))


class AsyncClient(_Base):
    """The asyncio form of Client: the same methods, as coroutines.

    Cancelling a call (asyncio.timeout, task.cancel) also ends the waits
    between its retries.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: Optional[str] = None,
        http_client: Optional[httpx.AsyncClient] = None,
        timeout: float = _DEFAULT_TIMEOUT,
        retry: Optional[RetryPolicy] = None,
        max_batch: int = DEFAULT_MAX_BATCH,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        user_agent: str = "simdex-python-client",
    ) -> None:
        super().__init__(
            base_url,
            api_key=api_key,
            retry=retry,
            max_batch=max_batch,
            max_body_bytes=max_body_bytes,
            user_agent=user_agent,
        )
        self._own = http_client is None
        self._http = http_client if http_client is not None else httpx.AsyncClient(timeout=timeout)

    async def aclose(self) -> None:
        if self._own:
            await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _send(self, call: Call) -> Reply:
        attempt = 0
        while True:
            try:
                try:
                    resp = await self._http.request(**self._request_args(call))
                except httpx.TransportError as e:
                    raise SimdexConnectionError(f"{call.route.op}: {e!r}") from e
                return self._reply(resp)
            except SimdexError as err:
                wait = _core.retry_wait(self.retry, call.route, attempt, err)
                if wait is None:
                    raise
            await asyncio.sleep(wait)
            attempt += 1

    async def _run(self, op: "Op[T]") -> T:
        try:
            call = next(op)
            while True:
                try:
                    reply = await self._send(call)
                except SimdexError as err:
                    call = op.throw(err)
                    continue
                call = op.send(reply)
        except StopIteration as stop:
            return cast(T, stop.value)

    async def check(
        self,
        text: Optional[str] = None,
        *,
        title: Optional[str] = None,
        lang: Optional[str] = None,
        fingerprint: Optional[str] = None,
        k: Optional[int] = None,
        since: Optional[_dt.datetime] = None,
        until: Optional[_dt.datetime] = None,
        limit: Optional[int] = None,
        policy: Optional[str] = None,
        source: Optional[str] = None,
    ) -> CheckResponse:
        return await self._run(
            _core.check(
                _core.content(text, title, lang, fingerprint, source),
                _core.search_params(k, since, until, limit),
                policy,
            )
        )

    async def check_batch(
        self,
        items: Sequence[ContentLike],
        *,
        k: Optional[int] = None,
        since: Optional[_dt.datetime] = None,
        until: Optional[_dt.datetime] = None,
        limit: Optional[int] = None,
        policy: Optional[str] = None,
    ) -> BatchCheckResponse:
        return await self._run(
            _core.check_batch(
                items, _core.search_params(k, since, until, limit), policy, self.max_batch, self.max_body_bytes
            )
        )

    async def insert_document(
        self,
        id: str,
        text: Optional[str] = None,
        *,
        title: Optional[str] = None,
        lang: Optional[str] = None,
        fingerprint: Optional[str] = None,
        time: Optional[_dt.datetime] = None,
        attrs: Optional[Dict[str, str]] = None,
        mode: Optional[str] = None,
        k: Optional[int] = None,
    ) -> InsertResponse:
        doc = DocumentInput(
            id=id, text=text, title=title, lang=lang, fingerprint=fingerprint, time=time, attrs=attrs
        ).to_dict()
        return await self._run(_core.insert_document(doc, mode, k))

    async def insert_documents(
        self, items: Sequence[DocumentLike], *, mode: Optional[str] = None, k: Optional[int] = None
    ) -> BatchInsertResponse:
        return await self._run(_core.insert_documents(items, mode, k, self.max_batch, self.max_body_bytes))

    async def get_document(self, id: str) -> Document:
        return await self._run(_core.get_document(id))

    async def delete_document(self, id: str) -> None:
        return await self._run(_core.delete_document(id))

    async def fingerprint(
        self, text: str, *, title: Optional[str] = None, lang: Optional[str] = None
    ) -> FingerprintResponse:
        return await self._run(_core.fingerprint(text, title, lang))

    async def explain(
        self,
        id: str,
        *,
        query: Union[ExplainQuery, Mapping[str, Any], None] = None,
        policy: Optional[str] = None,
        k: Optional[int] = None,
    ) -> ExplainResponse:
        return await self._run(_core.explain(id, query, policy, k))

    async def stats(self, *, rows: Optional[int] = None) -> Stats:
        return await self._run(_core.stats(rows))

    async def health(self) -> Status:
        return await self._run(_core.status("healthz"))

    async def ready(self) -> Status:
        return await self._run(_core.status("readyz"))

    async def metrics(self) -> str:
        return await self._run(_core.metrics())

    async def openapi(self) -> Dict[str, Any]:
        return await self._run(_core.openapi())

    async def seen_user(self, user: str) -> SeenUserResponse:
        return await self._run(_core.seen_user(user))

    async def seen_mark(self, user: str, items: Sequence[SeenItemLike]) -> SeenMarkResponse:
        return await self._run(_core.seen_mark(user, items, self.max_batch, self.max_body_bytes))

    async def seen_check(self, user: str, ids: Sequence[str]) -> SeenCheckResponse:
        return await self._run(_core.seen_check(user, ids, self.max_batch, self.max_body_bytes))

    async def seen_filter(
        self,
        user: str,
        *,
        candidates: Optional[Sequence[SeenItemLike]] = None,
        ids: Optional[Sequence[str]] = None,
        near: bool = False,
        k: Optional[int] = None,
        answer: Optional[str] = None,
    ) -> SeenFilterResponse:
        req = SeenUserFilter(
            user,
            list(candidates) if candidates is not None else None,
            list(ids) if ids is not None else None,
            near,
            k,
            answer,
        )
        return await self._run(_core.seen_filter(req, self.max_batch, self.max_body_bytes))

    async def seen_delete(self, user: str, item: str) -> None:
        return await self._run(_core.seen_delete(user, item))

    async def seen_forget(self, user: str) -> None:
        return await self._run(_core.seen_forget(user))

    async def seen_mark_batch(self, users: Sequence[Union[SeenUserMarks, Mapping[str, Any]]]) -> List[SeenMarkResponse]:
        return await self._run(_core.seen_mark_batch(users, self.max_batch, self.max_body_bytes))

    async def seen_check_batch(self, users: Sequence[Union[SeenUserIDs, Mapping[str, Any]]]) -> List[SeenCheckResponse]:
        return await self._run(_core.seen_check_batch(users, self.max_batch, self.max_body_bytes))

    async def seen_filter_batch(
        self, users: Sequence[Union[SeenUserFilter, Mapping[str, Any]]]
    ) -> List[SeenFilterResponse]:
        return await self._run(_core.seen_filter_batch(users, self.max_batch, self.max_body_bytes))
