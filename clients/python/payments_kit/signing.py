"""Request signing, as the merchant API's description defines it.

The signed fields are the top-level fields of a POST's JSON body, or the path
and query parameters of a GET; sorted by key (by their UTF-8 bytes), joined
as ``k1=v1&k2=v2``, the API key appended, MD5 in lowercase hex.

A number signs as the text that was sent (``100.50``, not ``100.5``), so the
body is read as text here, never through ``json.loads`` and back. Send
amounts as decimal strings (``str(Decimal("100.10"))``): the service reads
them exactly, and they sign by their value.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from typing import Callable, Iterable, Iterator
from urllib.parse import parse_qsl, unquote

import httpx

_SPACE = " \t\n\r"

# The merchant API's GET paths with parameters: a GET signs its path
# parameters by name, so the URL is matched against these.
PATH_TEMPLATES = (
    "/api/v1/merchant/query/deposit/{order_no}",
    "/api/v1/merchant/query/withdrawal/{order_no}",
    "/api/v1/merchant/statements/{date}",
    "/api/v1/merchant/billing-statements/{statement_id}",
    "/api/v1/merchant/billing-statements/{statement_id}/document",
)


class SigningError(ValueError):
    pass


def _skip(s: str, i: int) -> int:
    while i < len(s) and s[i] in _SPACE:
        i += 1
    return i


def _string_end(s: str, i: int) -> int:
    j = i + 1
    while j < len(s):
        if s[j] == "\\":
            j += 2
            continue
        if s[j] == '"':
            return j + 1
        j += 1
    raise SigningError("unterminated string")


def _value_end(s: str, i: int) -> int:
    if i >= len(s):
        raise SigningError("expected a value")
    if s[i] == '"':
        return _string_end(s, i)
    if s[i] in "{[":
        depth = 0
        j = i
        while j < len(s):
            c = s[j]
            if c == '"':
                j = _string_end(s, j)
                continue
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        raise SigningError("unterminated value")
    j = i
    while j < len(s) and s[j] not in ",}" + _SPACE:
        j += 1
    if j == i:
        raise SigningError("expected a value")
    return j


def _without_space(raw: str) -> str:
    out = []
    j = 0
    while j < len(raw):
        c = raw[j]
        if c == '"':
            end = _string_end(raw, j)
            out.append(raw[j:end])
            j = end
            continue
        if c not in _SPACE:
            out.append(c)
        j += 1
    return "".join(out)


def body_fields(body: str) -> list[tuple[str, str]]:
    """The top-level fields of a JSON object body, each as the text it signs."""
    fields: list[tuple[str, str]] = []
    seen: set[str] = set()
    i = _skip(body, 0)
    if body[i : i + 1] != "{":
        raise SigningError("the body is not a JSON object")
    i = _skip(body, i + 1)
    if body[i : i + 1] == "}":
        return fields
    while True:
        if body[i : i + 1] != '"':
            raise SigningError("expected a key")
        end = _string_end(body, i)
        key = json.loads(body[i:end])
        if key in seen:
            raise SigningError(f"the body repeats the key {key}")
        seen.add(key)
        i = _skip(body, end)
        if body[i : i + 1] != ":":
            raise SigningError("expected ':'")
        i = _skip(body, i + 1)
        end = _value_end(body, i)
        raw = body[i:end]
        if raw[0] == '"':
            fields.append((key, json.loads(raw)))
        elif raw[0] in "{[":
            fields.append((key, _without_space(raw)))
        elif raw != "null":
            fields.append((key, raw))
        i = _skip(body, end)
        if body[i : i + 1] == ",":
            i = _skip(body, i + 1)
            continue
        if body[i : i + 1] == "}":
            return fields
        raise SigningError("expected ',' or '}'")


def canonical(fields: Iterable[tuple[str, str]]) -> str:
    ordered = sorted(fields, key=lambda kv: kv[0].encode("utf-8"))
    return "&".join(f"{k}={v}" for k, v in ordered)


def sign(fields: Iterable[tuple[str, str]], api_key: str) -> str:
    return hashlib.md5((canonical(fields) + api_key).encode("utf-8")).hexdigest()


def same_signature(a: str, b: str) -> bool:
    """Compares two signatures in constant time, ignoring case."""
    return hmac.compare_digest(a.lower().encode(), b.lower().encode())


def _template_regex(template: str) -> tuple[re.Pattern[str], list[str]]:
    names = re.findall(r"\{([^}]+)\}", template)
    pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "([^/]+)", re.escape(template)) + "$"
    return re.compile(pattern), names


_TEMPLATES = [_template_regex(t) for t in PATH_TEMPLATES]


def url_fields(url: httpx.URL) -> list[tuple[str, str]]:
    """The fields of a GET: path parameters (by the template the path
    matches) and the query, percent-decoded."""
    fields: list[tuple[str, str]] = []
    path = url.raw_path.split(b"?", 1)[0].decode("ascii")
    for regex, names in _TEMPLATES:
        m = regex.match(path)
        if m:
            fields.extend((n, unquote(v)) for n, v in zip(names, m.groups()))
            break
    fields.extend(parse_qsl(url.query.decode("ascii"), keep_blank_values=True))
    return fields


class MerchantSigner(httpx.Auth):
    """Signs every request of an httpx client. With openapi-python-client:
    ``Client(base_url=..., httpx_args={"auth": MerchantSigner(api_key)})``.
    ``now`` gives Unix seconds (a clock you control in tests)."""

    requires_request_body = True

    def __init__(self, api_key: str, now: Callable[[], int] = lambda: int(time.time())):
        self._api_key = api_key
        self._now = now

    def auth_flow(self, request: httpx.Request) -> Iterator[httpx.Request]:
        if request.method == "GET" or not request.content:
            fields = url_fields(request.url)
        else:
            fields = body_fields(request.content.decode("utf-8"))
        request.headers["x-api-key"] = self._api_key
        request.headers["x-timestamp"] = str(self._now())
        request.headers["x-signature"] = sign(fields, self._api_key)
        yield request
