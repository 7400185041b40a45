"""Signs every request Schemathesis sends as the merchant API requires.

The signing input is the seed's: the body's top-level fields (or, for a
GET, its path and query parameters), nulls left out, sorted by key,
joined as k=v with '&', the API key appended, MD5 in lowercase hex. A
number signs as the text sent; an array or object as its compact JSON.
Load with SCHEMATHESIS_HOOKS=signing_hook (this directory on PYTHONPATH)
and the merchant key in PAYMENTS_API_KEY.
"""

import hashlib
import json
import os
import time

import schemathesis


def _text(value):
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"))


def _fields(case):
    if isinstance(case.body, dict):
        source = case.body
    else:
        source = {}
        source.update(case.path_parameters or {})
        source.update(case.query or {})
    fields = {}
    for key, value in source.items():
        if isinstance(value, list) and not isinstance(case.body, dict):
            # A repeated query parameter: the service sees its last value.
            value = value[-1] if value else None
        text = _text(value)
        if text is not None:
            fields[str(key)] = text
    return fields


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    key = os.environ["PAYMENTS_API_KEY"]
    canonical = "&".join(f"{k}={v}" for k, v in sorted(_fields(case).items()))
    signature = hashlib.md5((canonical + key).encode("utf-8")).hexdigest()
    case.headers = dict(case.headers or {})
    case.headers["x-api-key"] = key
    case.headers["x-timestamp"] = str(int(time.time()))
    case.headers["x-signature"] = signature
