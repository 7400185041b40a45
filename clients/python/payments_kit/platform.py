"""The platform's side: verifying the platform-level events the service
posts to ``platform_events_url`` (``generated/openapi/platform-webhooks.json``),
signed the Standard Webhooks way with ``platform_events_secret``.

The merchant client is generated from ``openapi/merchant.json``, which does
not hold these events, so their model is written here; ``main`` holds it to
the published schema's fields (``payments_kit.platform_check`` holds it to
them)."""

from __future__ import annotations

import dataclasses
import time
from typing import Callable, Mapping, Optional, Union

from .callbacks import CallbackError, check_standard_signature, event_of


@dataclasses.dataclass(frozen=True)
class TenantOwnerInvite:
    """``tenant_owner_invite``: an owner invitation link was issued. ``link``
    is secret: whoever holds it can become the merchant's owner."""

    event: str
    invitation_id: str
    tenant_id: str
    tenant_name: str
    email: str
    role: str
    state: str
    reason: str
    issued_by: str
    issued_at: str
    expires_at: str
    link: str


@dataclasses.dataclass(frozen=True)
class BillingStatementTotals:
    """What one currency's balance lines charged in the statement's period;
    amounts are decimal strings, as the ledger keeps them."""

    currency_code: str
    deposit_count: int
    deposit_amount: str
    deposit_fees: str
    withdrawal_count: int
    withdrawal_amount: str
    withdrawal_fees: str
    total_fees: str


@dataclasses.dataclass(frozen=True)
class BillingStatementIssued:
    """``billing_statement_issued``: a billing statement (a version of one)
    was issued; its PDF is at ``document_url`` with ``document_sha256``.
    ``supersedes`` names the version it replaced, from version 2 on."""

    event: str
    statement_id: str
    number: str
    version: int
    tenant_id: str
    tenant_name: str
    billing_period: str
    period_start: str
    period_end: str
    issued_at: str
    totals: tuple
    document_url: str
    document_sha256: str
    document_bytes: int
    supersedes: Optional[str] = None


PlatformEvent = Union[TenantOwnerInvite, BillingStatementIssued]
PLATFORM_EVENTS = {
    "tenant_owner_invite": TenantOwnerInvite,
    "billing_statement_issued": BillingStatementIssued,
}


def required_fields(model) -> list[str]:
    """The fields a model needs: those without a default."""
    return [f.name for f in dataclasses.fields(model) if f.default is dataclasses.MISSING]


def _build(model, data: dict):
    """``data`` as ``model``, each field of its declared kind; a missing or
    mistyped one is a 400."""
    kinds = {"str": str, "int": int, "tuple": list, "Optional[str]": (str, type(None))}
    wrong = []
    values = {}
    for f in dataclasses.fields(model):
        if f.name not in data and f.default is not dataclasses.MISSING:
            continue
        value = data.get(f.name)
        kind = kinds[f.type]
        if not isinstance(value, kind) or isinstance(value, bool):
            wrong.append(f.name)
            continue
        if f.type == "tuple":
            try:
                value = tuple(_build(BillingStatementTotals, item) for item in value)
            except (CallbackError, TypeError, AttributeError):
                wrong.append(f.name)
                continue
        values[f.name] = value
    if wrong:
        raise CallbackError(f"the event lacks {', '.join(wrong)}", 400)
    return model(**values)


def verify_platform_event(
    headers: Mapping[str, str],
    body: bytes,
    secret: str,
    max_skew_seconds: int = 300,
    now: Callable[[], int] = lambda: int(time.time()),
) -> PlatformEvent:
    """Checks a platform event's Standard Webhooks signature under the
    platform's secret, then returns it as its model (``TenantOwnerInvite``
    or ``BillingStatementIssued``, by ``event``). Fields added later are
    tolerated; a missing one is a 400."""
    check_standard_signature(headers, body, secret, max_skew_seconds, now)
    data, model = event_of(body, PLATFORM_EVENTS)
    return _build(model, data)
