"""Verifying the callbacks the service posts, then reading them as the
generated event models. Give the raw body as received: the signature covers
the text of its numbers, which ``json.loads`` does not keep."""

from __future__ import annotations

import base64
import hashlib
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


def check_standard_signature(
    headers: Mapping[str, str],
    body: bytes,
    secret: str,
    max_skew_seconds: int = 300,
    now: Callable[[], int] = lambda: int(time.time()),
) -> None:
    """The Standard Webhooks check, for a merchant's callbacks and the
    platform's events alike; raises CallbackError (401) if it fails."""
    msg_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not (msg_id and timestamp and signatures):
        raise CallbackError("a Standard Webhooks header is missing", 401)
    try:
        sent_at = int(timestamp)
    except ValueError:
        raise CallbackError("webhook-timestamp is not Unix seconds", 401) from None
    if abs(now() - sent_at) > max_skew_seconds:
        raise CallbackError("webhook-timestamp is outside the tolerated window", 401)
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    offered = [s.split(",", 1)[1] for s in signatures.split(" ") if s.startswith("v1,")]
    # Every offered signature is compared, so the time taken does not say which matched.
    matched = [hmac.compare_digest(expected.encode(), s.encode()) for s in offered]
    if not any(matched):
        raise CallbackError("no signature matches the body", 401)


def verify_standard_callback(
    headers: Mapping[str, str],
    body: bytes,
    secret: str,
    max_skew_seconds: int = 300,
    now: Callable[[], int] = lambda: int(time.time()),
) -> CallbackEvent:
    """Checks a callback of a merchant on the ``standard_webhooks`` scheme
    (``webhook-id``, ``webhook-timestamp``, ``webhook-signature``: any one
    ``v1`` signature of ``{id}.{timestamp}.{body}`` under the callback
    secret ``whsec_...``), then returns it as its event's generated model.
    The ``standardwebhooks`` package from PyPI does the same check; this
    one needs nothing beyond the standard library."""
    check_standard_signature(headers, body, secret, max_skew_seconds, now)
    data, model = event_of(body, EVENTS)
    return model.from_dict(data)


def event_of(body: bytes, events: Mapping[str, Any]) -> tuple[dict, Any]:
    """The verified body as JSON and the model its ``event`` names among
    ``events``; a CallbackError (400) if it is neither."""
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise CallbackError(f"the body is not JSON: {e}", 400) from None
    model = events.get(data.get("event")) if isinstance(data, dict) else None
    if model is None:
        raise CallbackError(f"unknown event {data!r:.60}", 400)
    return data, model
