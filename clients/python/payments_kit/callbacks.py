"""Verifying the callbacks the service posts, then reading them as the
generated event models. Give the raw body as received: the signature covers
the text of its numbers, which ``json.loads`` does not keep."""

from __future__ import annotations

import hmac
import json
import time
from typing import Any, Callable, Mapping, Optional, Union

from payments_merchant_client.models import (
    DepositCancelledEvent,
    DepositCompletedEvent,
    DepositExpiredEvent,
    DepositMatchedEvent,
    WithdrawalApprovedEvent,
    WithdrawalCompletedEvent,
    WithdrawalFailedEvent,
    WithdrawalRejectedEvent,
)

from .signing import SigningError, body_fields, same_signature, sign

CallbackEvent = Union[
    DepositMatchedEvent,
    DepositCompletedEvent,
    DepositExpiredEvent,
    DepositCancelledEvent,
    WithdrawalApprovedEvent,
    WithdrawalCompletedEvent,
    WithdrawalRejectedEvent,
    WithdrawalFailedEvent,
]

# The spec's discriminator mappings: `event` value -> generated model.
EVENTS: dict[str, Any] = {
    "deposit.matched": DepositMatchedEvent,
    "deposit.completed": DepositCompletedEvent,
    "deposit.expired": DepositExpiredEvent,
    "deposit.cancelled": DepositCancelledEvent,
    "withdrawal.approved": WithdrawalApprovedEvent,
    "withdrawal.completed": WithdrawalCompletedEvent,
    "withdrawal.rejected": WithdrawalRejectedEvent,
    "withdrawal.failed": WithdrawalFailedEvent,
}


class CallbackError(Exception):
    """A callback that failed a check; ``status`` is what to answer (401 for
    a failed check, 400 for a body that is not an event)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    for k, v in headers.items():
        if k.lower() == name:
            return v
    return None


def verify_callback(
    headers: Mapping[str, str],
    body: bytes,
    api_key: str,
    max_skew_seconds: Optional[int] = None,
    now: Callable[[], int] = lambda: int(time.time()),
) -> CallbackEvent:
    """Checks a callback's key, timestamp (if asked) and signature, then
    returns it as its event's generated model."""
    sent_key = _header(headers, "x-api-key")
    timestamp = _header(headers, "x-timestamp")
    signature = _header(headers, "x-signature")
    if sent_key is None or timestamp is None or signature is None:
        raise CallbackError("a signing header is missing", 401)
    if not hmac.compare_digest(sent_key.encode(), api_key.encode()):
        raise CallbackError("the callback is for another API key", 401)
    try:
        sent_at = int(timestamp)
    except ValueError:
        raise CallbackError("X-Timestamp is not Unix seconds", 401) from None
    if max_skew_seconds is not None and abs(now() - sent_at) > max_skew_seconds:
        raise CallbackError("X-Timestamp is outside the tolerated window", 401)
    try:
        text = body.decode("utf-8")
        fields = body_fields(text)
    except (UnicodeDecodeError, SigningError) as e:
        raise CallbackError(f"the body is not a JSON object: {e}", 400) from None
    if not same_signature(sign(fields, api_key), signature):
        raise CallbackError("the signature does not match the body", 401)
    data = json.loads(text)
    model = EVENTS.get(data.get("event"))
    if model is None:
        raise CallbackError(f"unknown event {data.get('event')!r}", 400)
    return model.from_dict(data)
