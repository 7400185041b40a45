"""Holds the platform events' models to the published schemas and verifies a
delivered platform event (``{"headers": {...}, "body": "<raw text>"}``):
``python -m payments_kit.platform_check DELIVERED.json SECRET PLATFORM-WEBHOOKS.json``."""

import dataclasses
import json
import sys

from .callbacks import CallbackError
from .platform import (
    BillingStatementIssued,
    BillingStatementTotals,
    TenantOwnerInvite,
    required_fields,
    verify_platform_event,
)


def main(delivered_path: str, secret: str, document_path: str) -> int:
    schemas = json.load(open(document_path, encoding="utf-8"))["components"]["schemas"]
    for model in (TenantOwnerInvite, BillingStatementIssued, BillingStatementTotals):
        schema = schemas[model.__name__]
        if set(required_fields(model)) != set(schema["required"]) or not {
            f.name for f in dataclasses.fields(model)
        } <= set(schema["properties"]):
            print(f"python: {model.__name__} has {required_fields(model)}, the contract requires {sorted(schema['required'])}")
            return 1
    delivered = json.load(open(delivered_path, encoding="utf-8"))
    headers, body = delivered["headers"], delivered["body"].encode("utf-8")
    event = verify_platform_event(headers, body, secret)
    for tampered, other_secret in ((body + b" ", secret), (body, "whsec_" + "A" * 44)):
        try:
            verify_platform_event(headers, tampered, other_secret)
        except CallbackError as e:
            assert e.status == 401, e
        else:
            print("python: a tampered body or another secret was accepted")
            return 1
    # The specification's own package agrees.
    from standardwebhooks import Webhook

    Webhook(secret).verify(body, dict(headers))
    if isinstance(event, TenantOwnerInvite):
        what = f"tenant_owner_invite {event.invitation_id} for {event.email} ({event.reason})"
    else:
        fees = ", ".join(f"{t.total_fees} {t.currency_code}" for t in event.totals) or "no fees"
        what = f"billing_statement_issued {event.number} ({fees}, PDF {event.document_sha256[:12]}…)"
    print(f"python: {what} verified, as by the standardwebhooks package; a tampered body and another secret refused")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
