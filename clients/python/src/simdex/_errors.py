"""Errors the simdex client raises."""

from __future__ import annotations

from typing import Any, List, Optional

from ._types import FieldError, Problem

__all__ = ["SimdexError", "SimdexConnectionError"]


class SimdexError(Exception):
    """A problem the server answered (RFC 9457 problem details), or an error
    status without a problem body (then kind is "" and detail holds the
    start of the body).

    status is the HTTP status; kind the machine-readable problem kind
    ("bad-fingerprint", "invalid-field", "body-too-large",
    "store-unavailable", "not-found", ...); fields the request fields at
    fault; retry_after the seconds the server asked to wait (503), or None.

    A batch call sent in several requests that fails part-way sets partial
    to the merged answer of the requests before the failed one, and offset
    to the position of the first item of the failed request.
    """

    def __init__(
        self,
        status: int,
        kind: str = "",
        title: str = "",
        detail: str = "",
        *,
        type: str = "",
        instance: str = "",
        fields: Optional[List[FieldError]] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        self.status = status
        self.kind = kind
        self.title = title
        self.detail = detail
        self.type = type
        self.instance = instance
        self.fields: List[FieldError] = list(fields or [])
        self.retry_after = retry_after
        self.partial: Any = None
        self.offset: Optional[int] = None
        super().__init__(self._message())

    def _message(self) -> str:
        msg = f"simdex: {self.status}"
        if self.kind:
            msg += f" {self.kind}"
        if self.detail or self.title:
            msg += f": {self.detail or self.title}"
        return msg

    @classmethod
    def from_problem(cls, p: Problem, retry_after: Optional[float] = None) -> "SimdexError":
        return cls(
            p.status,
            p.kind,
            p.title,
            p.detail,
            type=p.type,
            instance=p.instance,
            fields=p.fields,
            retry_after=retry_after,
        )

    @property
    def problem(self) -> Problem:
        """The error as a Problem value."""
        return Problem(
            status=self.status,
            kind=self.kind,
            title=self.title,
            type=self.type,
            detail=self.detail,
            instance=self.instance,
            fields=list(self.fields),
        )

    def field(self, name: str) -> Optional[str]:
        """The detail the server gave for the named request field, or None."""
        for f in self.fields:
            if f.field == name:
                return f.detail
        return None


class SimdexConnectionError(SimdexError):
    """The request got no answer (connection refused, reset or timed out);
    status is 0 and __cause__ is the transport's exception."""

    def __init__(self, message: str) -> None:
        super().__init__(0, "", "Connection error", message)
