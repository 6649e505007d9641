"""Request and response types of the simdex REST API (its /openapi.json)."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Union

__all__ = [
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

_FRACTION = re.compile(r"(\.\d{1,9})")


def parse_time(s: str) -> _dt.datetime:
    """Reads an RFC 3339 time as the server writes it (nanoseconds, 'Z')."""
    s = s.strip()
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    m = _FRACTION.search(s)
    if m:
        frac = m.group(1)[1:]
        s = s[: m.start()] + "." + (frac + "000000")[:6] + s[m.end() :]
    return _dt.datetime.fromisoformat(s)


def format_time(t: _dt.datetime) -> str:
    """Writes a datetime as RFC 3339; a naive datetime is taken as UTC."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.timezone.utc)
    return t.isoformat()


def _omit_none(d: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


@dataclass
class Content:
    """A text (title, text, lang) or a bare fingerprint instead: give one.

    fingerprint: 16 hex digits, 0x-prefixed hex or an unsigned decimal.
    source (checks only): the query's source, the value its stored
    documents carry in the index's source attribute (e.g. a site); what
    many of that source's documents share is then template too.
    """

    text: Optional[str] = None
    title: Optional[str] = None
    lang: Optional[str] = None
    fingerprint: Optional[str] = None
    source: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        return _omit_none(
            {
                "title": self.title,
                "text": self.text,
                "lang": self.lang,
                "fingerprint": self.fingerprint,
                "source": self.source,
            }
        )


@dataclass
class DocumentInput:
    """A document to store; time None is now."""

    id: str
    text: Optional[str] = None
    title: Optional[str] = None
    lang: Optional[str] = None
    fingerprint: Optional[str] = None
    time: Optional[_dt.datetime] = None
    attrs: Optional[Dict[str, str]] = None

    def to_dict(self) -> Dict[str, Any]:
        return _omit_none(
            {
                "id": self.id,
                "title": self.title,
                "text": self.text,
                "lang": self.lang,
                "fingerprint": self.fingerprint,
                "time": format_time(self.time) if self.time is not None else None,
                "attrs": self.attrs,
            }
        )


@dataclass
class Hit:
    """A stored document within reach of a query."""

    id: str
    fingerprint: str
    distance: int
    time: _dt.datetime
    exact: bool

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Hit":
        return cls(
            id=d["id"],
            fingerprint=d["fingerprint"],
            distance=d["distance"],
            time=parse_time(d["time"]),
            exact=d["exact"],
        )


@dataclass
class CheckHit(Hit):
    """A stored document a check found, and how it relates to the query."""

    relation: str = ""
    resemblance: float = 0.0
    query_containment: float = 0.0
    stored_containment: float = 0.0
    clause: Optional[str] = None
    template: List[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "CheckHit":
        return cls(
            id=d["id"],
            fingerprint=d["fingerprint"],
            distance=d["distance"],
            time=parse_time(d["time"]),
            exact=d["exact"],
            relation=d.get("relation", ""),
            resemblance=d.get("resemblance", 0.0),
            query_containment=d.get("query_containment", 0.0),
            stored_containment=d.get("stored_containment", 0.0),
            clause=d.get("clause"),
            template=list(d.get("template") or []),
        )


@dataclass
class CheckResponse:
    """The answer of a check."""

    fingerprint: str
    k: int
    policy: str
    duplicate: bool
    exact_duplicate: bool
    duplicates: List[CheckHit]
    candidates: int
    truncated: bool
    exact_hash: Optional[str] = None
    features: Optional[int] = None
    matching: Optional[str] = None
    related: List[CheckHit] = field(default_factory=list)
    template: List[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "CheckResponse":
        return cls(
            fingerprint=d["fingerprint"],
            k=d["k"],
            policy=d["policy"],
            duplicate=d["duplicate"],
            exact_duplicate=d["exact_duplicate"],
            duplicates=[CheckHit.from_dict(h) for h in d.get("duplicates") or []],
            candidates=d["candidates"],
            truncated=d["truncated"],
            exact_hash=d.get("exact_hash"),
            features=d.get("features"),
            matching=d.get("matching"),
            related=[CheckHit.from_dict(h) for h in d.get("related") or []],
            template=list(d.get("template") or []),
        )


@dataclass
class FieldError:
    """A request field at fault."""

    field: str
    detail: str


@dataclass
class Problem:
    """An RFC 9457 problem the server answered (kind is machine-readable)."""

    status: int
    kind: str
    title: str
    type: str = ""
    detail: str = ""
    instance: str = ""
    fields: List[FieldError] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Problem":
        return cls(
            status=int(d.get("status") or 0),
            kind=str(d.get("kind") or ""),
            title=str(d.get("title") or ""),
            type=str(d.get("type") or ""),
            detail=str(d.get("detail") or ""),
            instance=str(d.get("instance") or ""),
            fields=[
                FieldError(field=str(f.get("field", "")), detail=str(f.get("detail", "")))
                for f in d.get("errors") or []
            ],
        )


@dataclass
class ItemError:
    """The problem of one item of a batch, at its index in the request."""

    index: int
    problem: Problem

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], offset: int = 0) -> "ItemError":
        return cls(index=d["index"] + offset, problem=Problem.from_dict(d["error"]))


@dataclass
class BatchCheckResponse:
    """One result per item (None where the item failed) and the failed items' problems."""

    results: List[Optional[CheckResponse]] = field(default_factory=list)
    errors: List[ItemError] = field(default_factory=list)


@dataclass
class InsertResponse:
    """The answer of an insert; duplicate_of names the original when not stored."""

    id: str
    stored: bool
    replaced: bool
    fingerprint: str
    duplicates: List[Hit]
    duplicate_of: Optional[str] = None
    original: Optional[Hit] = None
    matching: Optional[str] = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "InsertResponse":
        return cls(
            id=d["id"],
            stored=d["stored"],
            replaced=d["replaced"],
            fingerprint=d["fingerprint"],
            duplicates=[Hit.from_dict(h) for h in d.get("duplicates") or []],
            duplicate_of=d.get("duplicate_of"),
            original=Hit.from_dict(d["original"]) if d.get("original") else None,
            matching=d.get("matching"),
        )


@dataclass
class BatchInsertResponse:
    """One result per item (None where the item failed) and the failed items' problems."""

    results: List[Optional[InsertResponse]] = field(default_factory=list)
    errors: List[ItemError] = field(default_factory=list)


@dataclass
class Document:
    """A stored document."""

    id: str
    fingerprint: str
    time: _dt.datetime
    title_fingerprint: Optional[str] = None
    exact_hash: Optional[str] = None
    attrs: Dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Document":
        return cls(
            id=d["id"],
            fingerprint=d["fingerprint"],
            time=parse_time(d["time"]),
            title_fingerprint=d.get("title_fingerprint"),
            exact_hash=d.get("exact_hash"),
            attrs=dict(d.get("attrs") or {}),
        )


@dataclass
class Feature:
    text: str
    weight: float


@dataclass
class FingerprintResponse:
    """A text's fingerprint and the features that weigh most in it."""

    fingerprint: str
    exact_hash: str
    features: int
    title_features: int
    chars: int
    recipe: int
    top_features: List[Feature]
    title_fingerprint: Optional[str] = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "FingerprintResponse":
        return cls(
            fingerprint=d["fingerprint"],
            exact_hash=d["exact_hash"],
            features=d["features"],
            title_features=d["title_features"],
            chars=d["chars"],
            recipe=d["recipe"],
            top_features=[Feature(text=f["text"], weight=f["weight"]) for f in d.get("top_features") or []],
            title_fingerprint=d.get("title_fingerprint"),
        )


@dataclass
class ExplainQuery:
    """The text an explanation compares with the stored document."""

    text: str
    title: Optional[str] = None
    lang: Optional[str] = None
    source: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        return _omit_none({"title": self.title, "text": self.text, "lang": self.lang, "source": self.source})


@dataclass
class ExplainSegment:
    """A stretch of a normalized text (kind None: punctuation and spacing)."""

    text: str
    kind: Optional[str] = None
    class_: Optional[str] = None
    step: Optional[int] = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ExplainSegment":
        return cls(text=d["text"], kind=d.get("kind"), class_=d.get("class"), step=d.get("step"))


@dataclass
class ExplainSide:
    """One text of an explanation."""

    fingerprint: str
    chars: int
    text_kept: bool
    text: Optional[str] = None
    segments: List[ExplainSegment] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ExplainSide":
        return cls(
            fingerprint=d["fingerprint"],
            chars=d["chars"],
            text_kept=d["text_kept"],
            text=d.get("text"),
            segments=[ExplainSegment.from_dict(s) for s in d.get("segments") or []],
        )


@dataclass
class Alignment:
    """What the alignment of two texts counts."""

    words_query: int = 0
    words_stored: int = 0
    common: int = 0
    numbers: int = 0
    typos: int = 0
    sentences: int = 0
    moved: int = 0
    changed: int = 0
    changed_sentences: int = 0
    only_query: int = 0
    only_stored: int = 0

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Alignment":
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass
class ExplainResponse:
    """The stored side and, with a query, the verdict and the aligned texts."""

    id: str
    time: _dt.datetime
    stored: ExplainSide
    k: int
    duplicate: bool
    resemblance: float
    query_containment: float
    stored_containment: float
    aligned: bool
    query: Optional[ExplainSide] = None
    distance: Optional[int] = None
    policy: Optional[str] = None
    relation: Optional[str] = None
    clause: Optional[str] = None
    template: List[str] = field(default_factory=list)
    alignment: Optional[Alignment] = None
    note: Optional[str] = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ExplainResponse":
        return cls(
            id=d["id"],
            time=parse_time(d["time"]),
            stored=ExplainSide.from_dict(d["stored"]),
            k=d["k"],
            duplicate=d["duplicate"],
            resemblance=d["resemblance"],
            query_containment=d["query_containment"],
            stored_containment=d["stored_containment"],
            aligned=d["aligned"],
            query=ExplainSide.from_dict(d["query"]) if d.get("query") else None,
            distance=d.get("distance"),
            policy=d.get("policy"),
            relation=d.get("relation"),
            clause=d.get("clause"),
            template=list(d.get("template") or []),
            alignment=Alignment.from_dict(d["alignment"]) if d.get("alignment") else None,
            note=d.get("note"),
        )


@dataclass
class Layout:
    b: int
    k: int
    tables: int


@dataclass
class RowRef:
    table: int
    prefix: str
    fingerprints: int


@dataclass
class Stats:
    """The index's counts, layout and fullest rows."""

    documents: int
    fingerprints: int
    layout: Layout
    recipe: int
    fullest_rows: List[RowRef]
    index_rows: int = 0
    index_bytes: int = 0

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Stats":
        lay = d["layout"]
        return cls(
            documents=d["documents"],
            fingerprints=d["fingerprints"],
            layout=Layout(b=lay["b"], k=lay["k"], tables=lay["tables"]),
            recipe=d["recipe"],
            fullest_rows=[
                RowRef(table=r["table"], prefix=r["prefix"], fingerprints=r["fingerprints"])
                for r in d.get("fullest_rows") or []
            ],
            index_rows=d.get("index_rows", 0),
            index_bytes=d.get("index_bytes", 0),
        )


@dataclass
class Status:
    """The answer of health and ready."""

    status: str
    store: Optional[str] = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Status":
        return cls(status=d["status"], store=d.get("store"))


@dataclass
class SeenItem:
    """An item a user was shown or may be shown; doc_id or fingerprint
    attach its fingerprint, for near-duplicate filtering."""

    id: str
    doc_id: Optional[str] = None
    fingerprint: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        return _omit_none({"id": self.id, "doc_id": self.doc_id, "fingerprint": self.fingerprint})


@dataclass
class SeenUserResponse:
    """A user's seen set: live items, bytes, and how long marks are kept."""

    user: str
    items: int
    bytes: int
    retention: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "SeenUserResponse":
        return cls(user=d["user"], items=d["items"], bytes=d["bytes"], retention=d["retention"])


@dataclass
class SeenMarkResponse:
    user: str
    marked: int = 0
    unknown_doc_ids: List[str] = field(default_factory=list)


@dataclass
class SeenCheckResponse:
    """One flag per id, in order: whether the user has seen it."""

    user: str
    seen: List[bool] = field(default_factory=list)


@dataclass
class SeenDropped:
    """A dropped candidate: its position, id and reason ("seen" or "near")."""

    index: int
    id: str
    reason: str
    distance: Optional[int] = None


@dataclass
class SeenFilterResponse:
    """A filter's answer in the form asked for: kept and dropped (full),
    kept (kept) or kept_indexes (indexes); the other fields stay None."""

    user: str
    kept: Optional[List[str]] = None
    dropped: Optional[List[SeenDropped]] = None
    kept_indexes: Optional[List[int]] = None
    unknown_doc_ids: List[str] = field(default_factory=list)


@dataclass
class SeenUserMarks:
    user: str
    items: List[Union[SeenItem, Mapping[str, Any], str]]


@dataclass
class SeenUserIDs:
    user: str
    ids: List[str]


@dataclass
class SeenUserFilter:
    """One user's candidate list: candidates (with fingerprints or doc ids,
    for near) or ids. answer: "full" (default), "kept" or "indexes"."""

    user: str
    candidates: Optional[List[Union[SeenItem, Mapping[str, Any], str]]] = None
    ids: Optional[List[str]] = None
    near: bool = False
    k: Optional[int] = None
    answer: Optional[str] = None
