"""schemathesis hooks of scripts/openapi/schemathesis.sh.

They adjust generated requests where the document states a rule in words
only, OpenAPI 3.0 having no keyword for it, and schemathesis would
otherwise send schema-valid requests that the server refuses as the
document says it does:

- limits in bytes of UTF-8 (document, item and user ids 256, attribute
  names 128, attribute values and a check's source 4096): maxLength
  counts characters, and
  OpenAPI 3.0 cannot constrain the names of an object's properties. A
  generated string within maxLength but over the byte limit gets its
  characters from U+00A0 up replaced by "x" until it fits; a string over
  maxLength, and control characters, are left as they are, so a request
  generated to break the schema still does. Attribute names over 128
  bytes are cut;
- ids holding '%' and two hex digits: schemathesis takes such a path
  parameter for one already percent-encoded and sends it decoded, so a
  document stored under such an id (POST /v1/documents) is asked for
  under another id. Bodies with such ids are left out.

The server refuses the first with 400 (see the schemas' descriptions) and
serves the second under its own id.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, unquote

import schemathesis
from hypothesis.internal import lambda_sources

# CPython 3.11 before 3.11.8 may raise SystemError ("AST constructor
# recursion depth mismatch", CPython issue 106905) when hypothesis parses a
# large source file to describe a lambda for a strategy's repr. The
# description is only a name: answer a plain one instead of failing the run.
_lambda_description = lambda_sources._lambda_description


def _safe_lambda_description(f: Any, *args: Any, **kwargs: Any) -> str:
    try:
        return _lambda_description(f, *args, **kwargs)
    except SystemError:
        return "lambda"


lambda_sources._lambda_description = _safe_lambda_description

ID_FIELDS = {"id", "doc_id", "user", "item", "ids"}
ID_BYTES, ID_CHARS = 256, 256
ATTR_NAME_BYTES = 128
ATTR_VALUE_BYTES, ATTR_VALUE_CHARS = 4096, 4096
SOURCE_FIELDS = {"source"}
PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")


def _nbytes(s: str) -> int:
    return len(s.encode("utf-8", "surrogatepass"))


def _fit(s: str, max_bytes: int, max_chars: int | None) -> str:
    """s with characters from U+00A0 up replaced by "x" until it has at
    most max_bytes bytes; s itself when it is over max_chars characters."""
    if _nbytes(s) <= max_bytes or (max_chars is not None and len(s) > max_chars):
        return s
    out = list(s)
    for i in range(len(out) - 1, -1, -1):
        if ord(out[i]) >= 0xA0:
            out[i] = "x"
            if _nbytes("".join(out)) <= max_bytes:
                break
    return "".join(out)


def _cut(s: str, max_bytes: int) -> str:
    """s cut to at most max_bytes bytes (attribute names: the schema has
    no rule on them that cutting could mend)."""
    while _nbytes(s) > max_bytes:
        s = s[:-1]
    return s


def _map(value: Any, key: str | None = None) -> Any:
    if isinstance(value, dict):
        if key == "attrs":
            return {
                _cut(k, ATTR_NAME_BYTES): _fit(v, ATTR_VALUE_BYTES, ATTR_VALUE_CHARS) if isinstance(v, str) else v
                for k, v in value.items()
            }
        return {k: _map(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_map(v, "ids" if key == "ids" else None) for v in value]
    if isinstance(value, str) and key in ID_FIELDS:
        return _fit(value, ID_BYTES, ID_CHARS)
    if isinstance(value, str) and key in SOURCE_FIELDS:
        return _fit(value, ATTR_VALUE_BYTES, ATTR_VALUE_CHARS)
    return value


def _no_percent(value: Any, key: str | None = None) -> bool:
    if isinstance(value, dict):
        return all(_no_percent(v, k) for k, v in value.items())
    if isinstance(value, list):
        return all(_no_percent(v, "ids" if key == "ids" else None) for v in value)
    return not (isinstance(value, str) and key in ID_FIELDS and PERCENT.search(value))


@schemathesis.hook
def map_body(ctx: Any, body: Any) -> Any:
    return _map(body)


@schemathesis.hook
def map_path_parameters(ctx: Any, path_parameters: Any) -> Any:
    # The hook sees path parameters percent-encoded.
    if path_parameters is None:
        return None
    out = dict(path_parameters)
    for k, v in out.items():
        if isinstance(v, str) and k in ID_FIELDS:
            fitted = _fit(unquote(v), ID_BYTES, ID_CHARS)
            if fitted != unquote(v):
                out[k] = quote(fitted, safe="")
    return out


@schemathesis.hook
def filter_body(ctx: Any, body: Any) -> bool:
    return _no_percent(body)
