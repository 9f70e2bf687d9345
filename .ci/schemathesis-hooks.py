"""Schemathesis hooks for .ci/schemathesis: rules of Herald's API that no schema can state.

The document states what a schema can (types, formats, the per-type event payloads, "exactly one of"
as a union); these hooks keep generated requests within the rules it cannot, so schemathesis reaches the
handlers instead of hearing 409 or 422 about them:

- an Idempotency-Key names one event: a repeat with another body answers 409 by design, so every
  request that carries a key gets one of its own (a valid key stays valid: printable ASCII);
- an event's optional resource_id must equal its data.message_id or data.domain_id (a value of
  another field, which JSON Schema cannot compare), so a generated one is set to that value;
- an endpoint's client_certificate must be a real certificate, valid now, whose private key is the one
  given, on an https URL (ADR 22): a well-formed one (two strings) is replaced by a pair made with the
  openssl CLI when the hooks load, its passphrase dropped (the key is not encrypted), and the URL's
  scheme made https;
- a PATCH of an endpoint carries at most the destination object of that endpoint's own kind (`url` for
  an HTTPS one, `kafka`, `rabbitmq` or `sqs` for a broker one; a kind never changes, ADR 27): which kind
  the stored endpoint has is something no request schema can know, so the hook asks Herald (GET, with
  the run's token from HERALD_ST_TOKEN at HERALD_ST_URL) and leaves out the other kinds' fields.

Only well-formed values are touched, so negative cases (wrong types, bad formats) reach the API as
generated.
"""

import json
import os
import re
import urllib.request
import subprocess
import tempfile
import uuid

import schemathesis

PRINTABLE = re.compile(r"^[\x20-\x7e]{1,255}$")
UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def _client_pair():
    """A self-signed EC certificate for client authentication, valid from now for 30 days, and its key."""
    with tempfile.TemporaryDirectory() as d:
        cert, key = os.path.join(d, "c.pem"), os.path.join(d, "k.pem")
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", key, "-out", cert, "-days", "30", "-subj", "/CN=schemathesis",
             "-addext", "extendedKeyUsage=clientAuth"],
            check=True, capture_output=True,
        )
        with open(cert) as c, open(key) as k:
            return c.read(), k.read()


CLIENT_CERT, CLIENT_KEY = _client_pair()


def _client_certificate(body):
    if not isinstance(body, dict):
        return
    pair = body.get("client_certificate")
    if not isinstance(pair, dict):
        return
    if not isinstance(pair.get("certificate"), str) or not isinstance(pair.get("private_key"), str):
        return
    pair["certificate"], pair["private_key"] = CLIENT_CERT, CLIENT_KEY
    pair.pop("passphrase", None)
    url = body.get("url")
    if isinstance(url, str) and url.lower().startswith("http://"):
        body["url"] = "https://" + url[len("http://"):]


def _own_key(key):
    return f"st-{uuid.uuid4()}" if isinstance(key, str) and PRINTABLE.match(key) else key


def _subject(event):
    if not isinstance(event, dict) or not isinstance(event.get("data"), dict):
        return
    resource_id = event.get("resource_id")
    if not isinstance(resource_id, str) or not UUID.match(resource_id):
        return
    for field in ("message_id", "domain_id"):
        value = event["data"].get(field)
        if isinstance(value, str) and UUID.match(value):
            event["resource_id"] = value
            return


DESTINATION_FIELDS = {"https": "url", "kafka": "kafka", "rabbitmq": "rabbitmq", "sqs": "sqs"}


def _stored_kind(endpoint_id):
    """The kind of the endpoint Herald stores under this id, or None (not found, not an id, no token)."""
    base, token = os.environ.get("HERALD_ST_URL"), os.environ.get("HERALD_ST_TOKEN")
    if not base or not token or not isinstance(endpoint_id, str) or not UUID.match(endpoint_id):
        return None
    request = urllib.request.Request(f"{base}/api/v1/webhooks/{endpoint_id}", headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.load(answer).get("kind", "https")
    except Exception:
        return None


def _own_kind_only(case):
    body = case.body
    if not isinstance(body, dict) or not any(f in body for f in DESTINATION_FIELDS.values()):
        return
    kind = _stored_kind((case.path_parameters or {}).get("id"))
    if kind not in DESTINATION_FIELDS:
        return
    for other, field in DESTINATION_FIELDS.items():
        if other != kind:
            body.pop(field, None)
    if isinstance(body.get("kind"), str) and body["kind"] in DESTINATION_FIELDS and body["kind"] != kind:
        body["kind"] = kind
    if not body:
        body["description"] = None


@schemathesis.hook
def before_call(context, case, **kwargs):
    path = case.operation.path
    if path in ("/api/v1/webhooks", "/api/v1/webhooks/{id}"):
        _client_certificate(case.body)
        if path == "/api/v1/webhooks/{id}" and case.method.upper() == "PATCH":
            _own_kind_only(case)
        return
    if path not in ("/api/v1/events", "/api/v1/events/batch"):
        return
    if case.headers:
        for name in list(case.headers):
            if name.lower() == "idempotency-key":
                case.headers[name] = _own_key(case.headers[name])
    body = case.body
    if path == "/api/v1/events":
        _subject(body)
    elif isinstance(body, dict) and isinstance(body.get("events"), list):
        for event in body["events"]:
            _subject(event)
            if isinstance(event, dict) and "idempotency_key" in event:
                event["idempotency_key"] = _own_key(event["idempotency_key"])
