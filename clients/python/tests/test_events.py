"""The event TypedDicts (herald_webhooks.events) against the OpenAPI document they are generated from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, get_args

from herald_webhooks import HeraldEnvelope, events

DOCUMENT = json.loads(
    (Path(__file__).resolve().parents[3] / "openapi" / "openapi.json").read_text(encoding="utf-8")
)
SCHEMAS: Dict[str, Any] = DOCUMENT["components"]["schemas"]


def _component(ref: str) -> Dict[str, Any]:
    return SCHEMAS[ref.rsplit("/", 1)[1]]


def _keys_match(typed_dict: Any, schema: Dict[str, Any]) -> None:
    required = set(schema.get("required", []))
    assert typed_dict.__required_keys__ == required, typed_dict.__name__
    assert typed_dict.__optional_keys__ == set(schema["properties"]) - required, typed_dict.__name__


def test_every_event_type_has_an_envelope_and_data_with_the_documented_keys() -> None:
    webhooks = DOCUMENT["webhooks"]
    assert len(webhooks) == 23  # 19 published types and 4 operational ones (ADR 20)
    union = get_args(HeraldEnvelope)
    assert len(union) == len(webhooks)
    for event_type, hook in webhooks.items():
        ref = hook["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        envelope = _component(ref)
        envelope_class = getattr(events, ref.rsplit("/", 1)[1])
        assert envelope_class in union
        _keys_match(envelope_class, envelope)
        data_ref = envelope["properties"]["data"]["$ref"]
        _keys_match(getattr(events, data_ref.rsplit("/", 1)[1]), _component(data_ref))
        assert envelope["properties"]["type"]["enum"] == [event_type]


def test_dns_records_items() -> None:
    items = SCHEMAS["DomainVerifiedData"]["properties"]["dns_records"]["items"]
    _keys_match(events.DnsRecord, items)
