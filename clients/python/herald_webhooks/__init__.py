"""Verify Herald webhook deliveries on the receiving side.

Standard library only, except Ed25519 (``standard-webhooks-ed25519``), which needs the
``cryptography`` package (``pip install "herald-webhooks[ed25519]"``). The shared vectors in ``clients/test-vectors.json`` pin the behaviour to the
TypeScript and Go libraries: same checks, same order, same error codes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import re
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union, cast

from . import events
from .events import HeraldEnvelope

__all__ = [
    "DEFAULT_TOLERANCE",
    "HERALD_V1",
    "ID_HEADER",
    "SIGNATURE_HEADER",
    "STANDARD_WEBHOOKS",
    "STANDARD_WEBHOOKS_ED25519",
    "TIMESTAMP_HEADER",
    "InvalidPayloadError",
    "MalformedHeaderError",
    "MissingTimestampError",
    "SignatureMismatchError",
    "TimestampOutOfToleranceError",
    "WebhookVerificationError",
    "HeraldEnvelope",
    "events",
    "verify",
]

__version__ = "0.1.0"

#: Header carrying the unix time (seconds, decimal) at which Herald signed the delivery.
TIMESTAMP_HEADER = "X-Webhook-Timestamp"
#: Header carrying one or more ``v1=<hex>`` signatures separated by whitespace, newest secret first.
SIGNATURE_HEADER = "X-Webhook-Signature"
#: Header carrying the event id. It is not signed: deduplicate on the verified envelope's ``id``.
ID_HEADER = "X-Webhook-Id"
#: Seconds the signing time may lie from the receiver's clock, in the past or the future.
DEFAULT_TOLERANCE = 300

#: The endpoint's ``signature_scheme``: X-Webhook-* headers, ``v1=`` + hex HMAC of "<timestamp>.<body>"
#: keyed with the whole secret string (the default).
HERALD_V1 = "herald-v1"
#: Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature, ``v1,`` + base64 HMAC of
#: "<id>.<timestamp>.<body>" keyed with the base64-decoded part after ``whsec_``.
STANDARD_WEBHOOKS = "standard-webhooks"
#: Standard Webhooks with asymmetric signatures: the same headers, ``v1a,`` + base64 Ed25519 signature
#: of "<id>.<timestamp>.<body>", verified with the endpoint's public key (``whpk_...``).
STANDARD_WEBHOOKS_ED25519 = "standard-webhooks-ed25519"
_SCHEMES = (HERALD_V1, STANDARD_WEBHOOKS, STANDARD_WEBHOOKS_ED25519)

_SW_ENTRY = re.compile(r"([^,\s]+),(\S*)")
_SW_V1 = re.compile(r"[A-Za-z0-9+/]{43}=")
_SW_V1A = re.compile(r"[A-Za-z0-9+/]{86}==")
_PUBLIC_KEY = re.compile(r"[A-Za-z0-9+/]{43}=")
_SW_ID = re.compile(r"[^\s,]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")

_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE_ENTRY = re.compile(r"v1=[0-9a-f]{64}")
# HTTP optional whitespace: space and tab only, the same set in every Herald library.
_OWS = " \t"
_OWS_RUN = re.compile(r"[ \t]+")
_STRING_FIELDS = ("id", "type", "version", "occurred_at", "tenant_id", "project_id", "resource_id")


class WebhookVerificationError(Exception):
    """Base of every verification failure; ``code`` is a stable string to log and branch on."""

    code = "webhook_verification_error"


class MissingTimestampError(WebhookVerificationError):
    """The X-Webhook-Timestamp header is absent or blank."""

    code = "missing_timestamp"


class TimestampOutOfToleranceError(WebhookVerificationError):
    """The signing time is further from now than the tolerance allows (a replay, or a skewed clock)."""

    code = "timestamp_out_of_tolerance"


class MalformedHeaderError(WebhookVerificationError):
    """A header is unusable: non-numeric timestamp, an entry that is not ``v1=<64 hex>``, empty, repeated."""

    code = "malformed_header"


class SignatureMismatchError(WebhookVerificationError):
    """No signature in the header matches the body under any of the given secrets (or public keys)."""

    code = "signature_mismatch"


class InvalidPayloadError(WebhookVerificationError):
    """The signature is valid but the body is not UTF-8 JSON holding an envelope object."""

    code = "invalid_payload"


def verify(
    body: bytes,
    headers: Mapping[str, Any],
    secrets: Union[str, Sequence[str], None] = None,
    tolerance: float = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
    scheme: str = HERALD_V1,
    public_keys: Union[str, Sequence[str], None] = None,
) -> HeraldEnvelope:
    """Verify a delivery and return its envelope as a dict.

    ``body`` is the raw request body (bytes, exactly as received). ``headers`` is any mapping of
    header names (matched case-insensitively) to values; ``items()`` may yield a name more than
    once, as multi-dicts do. ``secrets`` is the endpoint secret (``whsec_...`` as handed out) or
    several while rotating. ``tolerance`` is in seconds; ``now`` is unix seconds (default
    ``time.time()``). ``scheme`` is the endpoint's ``signature_scheme``: ``HERALD_V1`` (default),
    ``STANDARD_WEBHOOKS`` or ``STANDARD_WEBHOOKS_ED25519``. The last verifies with ``public_keys``
    (the endpoint's ``public_key``, ``whpk_...``, or several while rotating) instead of ``secrets``,
    and needs the ``cryptography`` package.

    Raises a ``WebhookVerificationError`` subclass when the delivery fails a check, ``TypeError``
    or ``ValueError`` when the arguments themselves are wrong.
    """
    if scheme not in _SCHEMES:
        raise ValueError("scheme must be one of " + ", ".join(f'"{x}"' for x in _SCHEMES))
    asymmetric = scheme == STANDARD_WEBHOOKS_ED25519
    secret_list = [] if asymmetric else _key_list(secrets, "secrets", "secret")
    verifiers = [_ed25519_public_key(k) for k in _key_list(public_keys, "public_keys", "public key")] if asymmetric else []
    keys = [_standard_key(s) for s in secret_list] if scheme == STANDARD_WEBHOOKS else [
        s.encode("utf-8") for s in secret_list
    ]
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not (
        math.isfinite(tolerance) and tolerance >= 0
    ):
        raise ValueError("tolerance must be a finite number of seconds >= 0")
    now_seconds = math.floor(time.time() if now is None else now)
    if not isinstance(body, (bytes, bytearray, memoryview)):
        raise TypeError("body must be the raw request body as bytes, not decoded text or parsed JSON")
    raw = bytes(body)
    if scheme != HERALD_V1:
        timestamp_name, signature_name = "webhook-timestamp", "webhook-signature"
    else:
        timestamp_name, signature_name = TIMESTAMP_HEADER, SIGNATURE_HEADER

    timestamps = _header_values(headers, timestamp_name)
    if len(timestamps) > 1:
        raise MalformedHeaderError(f"{timestamp_name} appears more than once")
    timestamp = timestamps[0].strip(_OWS) if timestamps else ""
    if timestamp == "":
        raise MissingTimestampError(f"{timestamp_name} is missing")
    if not _TIMESTAMP.fullmatch(timestamp):
        raise MalformedHeaderError(f"{timestamp_name} is not unix seconds in decimal digits")
    if abs(now_seconds - int(timestamp)) > tolerance:
        raise TimestampOutOfToleranceError(
            f"{timestamp_name} is more than {tolerance} seconds away from the current time"
        )

    if scheme != HERALD_V1:
        ids = _header_values(headers, "webhook-id")
        if len(ids) > 1:
            raise MalformedHeaderError("webhook-id appears more than once")
        msg_id = ids[0].strip(_OWS) if ids else ""
        if msg_id == "":
            raise MalformedHeaderError("webhook-id is missing")
        if not _SW_ID.fullmatch(msg_id):
            raise MalformedHeaderError("webhook-id is not one id")
        received = _standard_entries(_header_values(headers, signature_name), "v1a" if asymmetric else "v1")
        message = f"{msg_id}.{timestamp}.".encode("utf-8") + raw
    else:
        received = _signature_entries(_header_values(headers, signature_name))
        message = timestamp.encode("ascii") + b"." + raw
    matched = False
    # A public key holds nothing to leak, so each check may answer in its own time.
    for verifier in verifiers:
        for entry in received:
            matched = verifier(entry, message) or matched
    for key in keys:
        expected = hmac.new(key, message, hashlib.sha256).digest()
        # Every comparison runs, so timing reveals neither which secret nor which entry matched.
        for entry in received:
            matched = hmac.compare_digest(expected, entry) or matched
    if not matched:
        raise SignatureMismatchError(
            f"no signature matches the body under the given {'public keys' if asymmetric else 'secrets'}"
        )

    # Herald checked data against the type before signing; narrow on envelope["type"].
    return cast(HeraldEnvelope, _parse_envelope(raw))


def _standard_key(secret: str) -> bytes:
    """The Standard Webhooks key: the base64 after an optional ``whsec_``, as the specification's libraries read it."""
    encoded = secret[len("whsec_"):] if secret.startswith("whsec_") else secret
    key = b""
    if _BASE64.fullmatch(encoded) and len(encoded) % 4 == 0:
        try:
            key = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            key = b""
    if not key:
        raise ValueError("a standard-webhooks secret must be whsec_ followed by base64")
    return key


def _ed25519_public_key(public_key: str) -> Any:
    """A check of Ed25519 signatures under a ``whpk_...`` key (base64 of the 32 raw bytes; the prefix optional)."""
    if not isinstance(public_key, str):
        raise TypeError("every public key must be a non-empty str")
    encoded = public_key[len("whpk_"):] if public_key.startswith("whpk_") else public_key
    if not _PUBLIC_KEY.fullmatch(encoded):
        raise ValueError("a public key must be whpk_ followed by the base64 of 32 bytes")
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(
            'standard-webhooks-ed25519 needs the cryptography package: pip install "herald-webhooks[ed25519]"'
        ) from error
    key = Ed25519PublicKey.from_public_bytes(base64.b64decode(encoded))

    def check(signature: bytes, message: bytes) -> bool:
        try:
            key.verify(signature, message)
            return True
        except InvalidSignature:
            return False

    return check


def _standard_entries(values: List[str], version: str = "v1") -> List[bytes]:
    """The signatures of one version (v1: HMAC, v1a: Ed25519) in webhook-signature; other versions are skipped."""
    if len(values) > 1:
        raise MalformedHeaderError("webhook-signature appears more than once")
    text = values[0].strip(_OWS) if values else ""
    if text == "":
        raise MalformedHeaderError("webhook-signature is missing or empty")
    entries = []
    for entry in _OWS_RUN.split(text):
        m = _SW_ENTRY.fullmatch(entry)
        if not m:
            raise MalformedHeaderError("webhook-signature holds an entry that is not <version>,<signature>")
        if m.group(1) != version:
            continue
        if not (_SW_V1 if version == "v1" else _SW_V1A).fullmatch(m.group(2)):
            size = 32 if version == "v1" else 64
            raise MalformedHeaderError(f"webhook-signature holds a {version} entry that is not base64 of {size} bytes")
        entries.append(base64.b64decode(m.group(2)))
    return entries


def _key_list(keys: Union[str, Sequence[str], None], option: str, what: str) -> List[str]:
    items = [] if keys is None else [keys] if isinstance(keys, str) else list(keys)
    if not items:
        raise ValueError(f"{option} must name at least one {what}")
    for key in items:
        if not isinstance(key, str) or key == "":
            raise TypeError(f"every {what} must be a non-empty str")
    return items


def _text(value: Union[str, bytes]) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value


def _header_values(headers: Mapping[str, Any], name: str) -> List[str]:
    """Every value of one header; several mean the header was sent more than once."""
    wanted = name.lower()
    values: List[str] = []
    for key, value in headers.items():
        if _text(key).lower() != wanted or value is None:
            continue
        if isinstance(value, (str, bytes)):
            values.append(_text(value))
        else:
            values.extend(_text(v) for v in value)
    return values


def _signature_entries(values: List[str]) -> List[bytes]:
    if len(values) > 1:
        raise MalformedHeaderError("X-Webhook-Signature appears more than once")
    text = values[0].strip(_OWS) if values else ""
    if text == "":
        raise MalformedHeaderError("X-Webhook-Signature is missing or empty")
    entries = []
    for entry in _OWS_RUN.split(text):
        if not _SIGNATURE_ENTRY.fullmatch(entry):
            raise MalformedHeaderError(
                "X-Webhook-Signature holds an entry that is not v1=<64 lowercase hex>"
            )
        entries.append(bytes.fromhex(entry[3:]))
    return entries


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_envelope(raw: bytes) -> HeraldEnvelope:
    try:
        # Decode explicitly: json.loads(bytes) would also guess UTF-16/32, and a BOM stays and fails.
        text = raw.decode("utf-8")
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as error:
        raise InvalidPayloadError("the body is not UTF-8 JSON") from error
    if not isinstance(value, dict):
        raise InvalidPayloadError("the body is not a JSON object")
    for field in _STRING_FIELDS:
        if not isinstance(value.get(field), str):
            raise InvalidPayloadError(f"envelope field {field} is not a string")
    if not isinstance(value.get("data"), dict):
        raise InvalidPayloadError("envelope field data is not an object")
    return value
