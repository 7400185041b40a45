"""Checks the signing helper against every published signing vector:
``python -m payments_kit.vectors ../../openapi/signing-test-vectors.json``."""

import json
import sys
import httpx

from .signing import body_fields, canonical, sign, url_fields


def main(path: str) -> int:
    vectors = json.load(open(path, encoding="utf-8"))["vectors"]
    failed = 0
    for v in vectors:
        if "body" in v:
            fields = body_fields(v["body"])
        elif "path" in v:
            # As the httpx auth sees the request: its URL, matched against
            # the path templates, and its query.
            fields = url_fields(httpx.URL("http://x" + v["path"]))
        else:
            fields = list(v.get("params", {}).items())
        got, signature = canonical(fields), sign(fields, v["api_key"])
        ok = got == v["canonical"] and signature == v["signature"]
        failed += not ok
        print(("ok   " if ok else "FAIL ") + v["description"])
        if not ok:
            print(f"     canonical {got}\n     signature {signature}")
    print(f"python: {len(vectors) - failed} of {len(vectors)} signing vectors agree")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "../../openapi/signing-test-vectors.json"))
