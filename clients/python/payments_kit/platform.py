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
from typing import Callable, Mapping

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


PLATFORM_EVENTS = {"tenant_owner_invite": TenantOwnerInvite}


def verify_platform_event(
    headers: Mapping[str, str],
    body: bytes,
    secret: str,
    max_skew_seconds: int = 300,
    now: Callable[[], int] = lambda: int(time.time()),
) -> TenantOwnerInvite:
    """Checks a platform event's Standard Webhooks signature under the
    platform's secret, then returns it as its model. Fields added later are
    tolerated; a missing one is a 400."""
    check_standard_signature(headers, body, secret, max_skew_seconds, now)
    data, model = event_of(body, PLATFORM_EVENTS)
    names = [f.name for f in dataclasses.fields(model)]
    missing = [n for n in names if not isinstance(data.get(n), str)]
    if missing:
        raise CallbackError(f"the event lacks {', '.join(missing)}", 400)
    return model(**{n: data[n] for n in names})
