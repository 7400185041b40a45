"""Signing and callback verification for a client generated from the
merchant API's OpenAPI document by openapi-python-client."""

from .callbacks import CallbackError, verify_callback, verify_standard_callback
from .signing import MerchantSigner, body_fields, canonical, sign

__all__ = ["CallbackError", "MerchantSigner", "body_fields", "canonical", "sign", "verify_callback", "verify_standard_callback"]
