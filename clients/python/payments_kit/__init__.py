"""Signing and callback verification for a client generated from the
merchant API's OpenAPI document by openapi-python-client, and the
platform's check of the platform events."""

from .callbacks import CallbackError, check_standard_signature, verify_callback, verify_standard_callback
from .platform import BillingStatementIssued, BillingStatementTotals, TenantOwnerInvite, verify_platform_event
from .signing import MerchantSigner, body_fields, canonical, sign

__all__ = [
    "BillingStatementIssued",
    "BillingStatementTotals",
    "CallbackError",
    "MerchantSigner",
    "TenantOwnerInvite",
    "body_fields",
    "canonical",
    "check_standard_signature",
    "sign",
    "verify_callback",
    "verify_platform_event",
    "verify_standard_callback",
]
