#!/usr/bin/env python3
"""Prints a sandbox merchant's first callback secret, issued as every one
is since operator 0.16.0: by two admins (one files `issue_callback_secret`
as an approval request, a second approves it and is shown the secret).
The admins are made with the sandbox's bootstrap token, which counts them
as people at once. Standard library only.

  first-callback-secret.py BASE OPERATOR_TOKEN   (the sandbox's one merchant)
"""
import json
import sys
import urllib.request
import uuid


def call(base, token, method, path, body=None):
    request = urllib.request.Request(
        base + path, method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"authorization": f"Bearer {token}", "content-type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        return json.load(answer)


def main(base, token):
    merchant = call(base, token, "GET", "/api/v1/operator/merchants")["items"][0]["merchant_id"]
    admins = []
    for name in ("maker", "checker"):
        made = call(base, token, "POST", "/api/v1/operator/operators", {
            "name": f"kits {name}", "role": "admin", "email": f"kits-{name}-{uuid.uuid4().hex}@example.test"})
        admins.append(call(base, token, "POST", f"/api/v1/operator/operators/{made['operator_id']}/tokens",
                           {"label": "kits"})["token"])
    filed = call(base, admins[0], "POST", "/api/v1/operator/approval-requests", {
        "action": "issue_callback_secret", "target": merchant, "parameters": {"overlap_seconds": 0}})
    approved = call(base, admins[1], "POST",
                    f"/api/v1/operator/approval-requests/{filed['change_request_id']}/approve", {})
    print(approved["result"]["callback_secret"])


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
