"""The envelopes Herald posts, one TypedDict per event type.

Generated from openapi/openapi.json by `npm run openapi`; do not edit. Narrow a verified envelope on
its ``type`` to get that type's ``data``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, TypedDict, Union

__all__ = [
    "DnsRecord",
    "MessageAcceptedData",
    "MessageAcceptedEvent",
    "MessageSentData",
    "MessageSentEvent",
    "MessageDeliveredData",
    "MessageDeliveredEvent",
    "MessagePartiallyDeliveredData",
    "MessagePartiallyDeliveredEvent",
    "MessageDeferredData",
    "MessageDeferredEvent",
    "MessageBouncedData",
    "MessageBouncedEvent",
    "MessageFailedData",
    "MessageFailedEvent",
    "MessageRejectedData",
    "MessageRejectedEvent",
    "MessageUndeliverableData",
    "MessageUndeliverableEvent",
    "MessageExpiredData",
    "MessageExpiredEvent",
    "MessageCancelledData",
    "MessageCancelledEvent",
    "MessageSuppressedData",
    "MessageSuppressedEvent",
    "MessageOpenedData",
    "MessageOpenedEvent",
    "MessageClickedData",
    "MessageClickedEvent",
    "MessageComplainedData",
    "MessageComplainedEvent",
    "MessageUnsubscribedData",
    "MessageUnsubscribedEvent",
    "DomainVerificationFailedData",
    "DomainVerificationFailedEvent",
    "DomainSendingPausedData",
    "DomainSendingPausedEvent",
    "DomainVerifiedData",
    "DomainVerifiedEvent",
    "EndpointDisabledData",
    "EndpointDisabledEvent",
    "EndpointFailingData",
    "EndpointFailingEvent",
    "EndpointRecoveredData",
    "EndpointRecoveredEvent",
    "DeliveryExhaustedData",
    "DeliveryExhaustedEvent",
    "HeraldEnvelope",
]


class _DnsRecordRequired(TypedDict):
    type: str
    name: str
    value: str


class DnsRecord(_DnsRecordRequired, total=False):
    """An object nested in event data (DnsRecord)."""

    valid: bool


class _MessageAcceptedDataRequired(TypedDict):
    message_id: str
    status: Literal["accepted"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessageAcceptedData(_MessageAcceptedDataRequired, total=False):
    """The data of message.accepted: The provider took the message."""

    reason: str
    metadata: Dict[str, Any]


class MessageAcceptedEvent(TypedDict):
    """The envelope of message.accepted."""

    id: str
    type: Literal["message.accepted"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessageAcceptedData


class _MessageSentDataRequired(TypedDict):
    message_id: str
    status: Literal["sent"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessageSentData(_MessageSentDataRequired, total=False):
    """The data of message.sent: Handed off to the destination."""

    reason: str
    metadata: Dict[str, Any]


class MessageSentEvent(TypedDict):
    """The envelope of message.sent."""

    id: str
    type: Literal["message.sent"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessageSentData


class _MessageDeliveredDataRequired(TypedDict):
    message_id: str
    status: Literal["delivered"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessageDeliveredData(_MessageDeliveredDataRequired, total=False):
    """The data of message.delivered: Confirmed delivered."""

    reason: str
    metadata: Dict[str, Any]


class MessageDeliveredEvent(TypedDict):
    """The envelope of message.delivered."""

    id: str
    type: Literal["message.delivered"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessageDeliveredData


class _MessagePartiallyDeliveredDataRequired(TypedDict):
    message_id: str
    status: Literal["partially_delivered"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessagePartiallyDeliveredData(_MessagePartiallyDeliveredDataRequired, total=False):
    """The data of message.partially_delivered: Delivered to only part of the recipients."""

    reason: str
    metadata: Dict[str, Any]


class MessagePartiallyDeliveredEvent(TypedDict):
    """The envelope of message.partially_delivered."""

    id: str
    type: Literal["message.partially_delivered"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessagePartiallyDeliveredData


class _MessageDeferredDataRequired(TypedDict):
    message_id: str
    status: Literal["deferred"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessageDeferredData(_MessageDeferredDataRequired, total=False):
    """The data of message.deferred: Temporarily postponed; still in flight."""

    reason: str
    metadata: Dict[str, Any]


class MessageDeferredEvent(TypedDict):
    """The envelope of message.deferred."""

    id: str
    type: Literal["message.deferred"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessageDeferredData


class _MessageBouncedDataRequired(TypedDict):
    message_id: str
    status: Literal["bounced"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessageBouncedData(_MessageBouncedDataRequired, total=False):
    """The data of message.bounced: Permanently rejected by the recipient server."""

    reason: str
    metadata: Dict[str, Any]


class MessageBouncedEvent(TypedDict):
    """The envelope of message.bounced."""

    id: str
    type: Literal["message.bounced"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessageBouncedData


class _MessageFailedDataRequired(TypedDict):
    message_id: str
    status: Literal["failed"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessageFailedData(_MessageFailedDataRequired, total=False):
    """The data of message.failed: Could not be sent."""

    reason: str
    metadata: Dict[str, Any]


class MessageFailedEvent(TypedDict):
    """The envelope of message.failed."""

    id: str
    type: Literal["message.failed"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessageFailedData


class _MessageRejectedDataRequired(TypedDict):
    message_id: str
    status: Literal["rejected"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessageRejectedData(_MessageRejectedDataRequired, total=False):
    """The data of message.rejected: Could not be sent."""

    reason: str
    metadata: Dict[str, Any]


class MessageRejectedEvent(TypedDict):
    """The envelope of message.rejected."""

    id: str
    type: Literal["message.rejected"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessageRejectedData


class _MessageUndeliverableDataRequired(TypedDict):
    message_id: str
    status: Literal["undeliverable"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessageUndeliverableData(_MessageUndeliverableDataRequired, total=False):
    """The data of message.undeliverable: Accepted but could not be delivered; terminal."""

    reason: str
    metadata: Dict[str, Any]


class MessageUndeliverableEvent(TypedDict):
    """The envelope of message.undeliverable."""

    id: str
    type: Literal["message.undeliverable"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessageUndeliverableData


class _MessageExpiredDataRequired(TypedDict):
    message_id: str
    status: Literal["expired"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessageExpiredData(_MessageExpiredDataRequired, total=False):
    """The data of message.expired: The validity window ran out before delivery."""

    reason: str
    metadata: Dict[str, Any]


class MessageExpiredEvent(TypedDict):
    """The envelope of message.expired."""

    id: str
    type: Literal["message.expired"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessageExpiredData


class _MessageCancelledDataRequired(TypedDict):
    message_id: str
    status: Literal["cancelled"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessageCancelledData(_MessageCancelledDataRequired, total=False):
    """The data of message.cancelled: Cancelled by the client before submission."""

    reason: str
    metadata: Dict[str, Any]


class MessageCancelledEvent(TypedDict):
    """The envelope of message.cancelled."""

    id: str
    type: Literal["message.cancelled"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessageCancelledData


class _MessageSuppressedDataRequired(TypedDict):
    message_id: str
    status: Literal["suppressed"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessageSuppressedData(_MessageSuppressedDataRequired, total=False):
    """The data of message.suppressed: Recipient was on the suppression list; nothing was sent."""

    reason: str
    metadata: Dict[str, Any]


class MessageSuppressedEvent(TypedDict):
    """The envelope of message.suppressed."""

    id: str
    type: Literal["message.suppressed"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessageSuppressedData


class _MessageOpenedDataRequired(TypedDict):
    message_id: str
    status: Literal["accepted", "sent", "delivered", "partially_delivered", "deferred", "bounced", "failed", "rejected", "undeliverable", "expired", "cancelled", "suppressed"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessageOpenedData(_MessageOpenedDataRequired, total=False):
    """The data of message.opened: Engagement; does not change delivery status."""

    reason: str
    metadata: Dict[str, Any]


class MessageOpenedEvent(TypedDict):
    """The envelope of message.opened."""

    id: str
    type: Literal["message.opened"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessageOpenedData


class _MessageClickedDataRequired(TypedDict):
    message_id: str
    status: Literal["accepted", "sent", "delivered", "partially_delivered", "deferred", "bounced", "failed", "rejected", "undeliverable", "expired", "cancelled", "suppressed"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessageClickedData(_MessageClickedDataRequired, total=False):
    """The data of message.clicked: Engagement; does not change delivery status."""

    reason: str
    metadata: Dict[str, Any]


class MessageClickedEvent(TypedDict):
    """The envelope of message.clicked."""

    id: str
    type: Literal["message.clicked"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessageClickedData


class _MessageComplainedDataRequired(TypedDict):
    message_id: str
    status: Literal["accepted", "sent", "delivered", "partially_delivered", "deferred", "bounced", "failed", "rejected", "undeliverable", "expired", "cancelled", "suppressed"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessageComplainedData(_MessageComplainedDataRequired, total=False):
    """The data of message.complained: Marked as spam; to be treated as a hard signal."""

    reason: str
    metadata: Dict[str, Any]


class MessageComplainedEvent(TypedDict):
    """The envelope of message.complained."""

    id: str
    type: Literal["message.complained"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessageComplainedData


class _MessageUnsubscribedDataRequired(TypedDict):
    message_id: str
    status: Literal["accepted", "sent", "delivered", "partially_delivered", "deferred", "bounced", "failed", "rejected", "undeliverable", "expired", "cancelled", "suppressed"]
    channel: Literal["email", "sms", "push", "webhook"]
    message_type: Literal["transactional", "marketing"]
    recipient: str


class MessageUnsubscribedData(_MessageUnsubscribedDataRequired, total=False):
    """The data of message.unsubscribed: Recipient opted out; suppressed automatically from then on."""

    reason: str
    metadata: Dict[str, Any]


class MessageUnsubscribedEvent(TypedDict):
    """The envelope of message.unsubscribed."""

    id: str
    type: Literal["message.unsubscribed"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: MessageUnsubscribedData


class _DomainVerificationFailedDataRequired(TypedDict):
    domain_id: str
    domain: str
    status: Literal["verification_failed"]


class DomainVerificationFailedData(_DomainVerificationFailedDataRequired, total=False):
    """The data of domain.verification_failed: A sending domain's DNS changed; it entered a grace period before sending is paused."""

    grace_period_ends_at: str
    reason: str
    dns_records: List[DnsRecord]


class DomainVerificationFailedEvent(TypedDict):
    """The envelope of domain.verification_failed."""

    id: str
    type: Literal["domain.verification_failed"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: DomainVerificationFailedData


class _DomainSendingPausedDataRequired(TypedDict):
    domain_id: str
    domain: str
    status: Literal["sending_paused"]


class DomainSendingPausedData(_DomainSendingPausedDataRequired, total=False):
    """The data of domain.sending_paused: A sending domain was paused after its DNS stayed out of sync."""

    grace_period_ends_at: str
    reason: str
    dns_records: List[DnsRecord]


class DomainSendingPausedEvent(TypedDict):
    """The envelope of domain.sending_paused."""

    id: str
    type: Literal["domain.sending_paused"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: DomainSendingPausedData


class _DomainVerifiedDataRequired(TypedDict):
    domain_id: str
    domain: str
    status: Literal["verified"]


class DomainVerifiedData(_DomainVerifiedDataRequired, total=False):
    """The data of domain.verified: A sending domain passed verification again; sending resumed."""

    grace_period_ends_at: str
    reason: str
    dns_records: List[DnsRecord]


class DomainVerifiedEvent(TypedDict):
    """The envelope of domain.verified."""

    id: str
    type: Literal["domain.verified"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: DomainVerifiedData


class _EndpointDisabledDataRequired(TypedDict):
    endpoint_id: str
    url: str
    disabled_reason: Literal["manual", "failing", "gone"]
    disabled_at: str


class EndpointDisabledData(_EndpointDisabledDataRequired, total=False):
    """The data of endpoint.disabled: Operational, emitted by Herald: an endpoint of the project was disabled (`disabled_reason`: `gone` after a 410, `failing` after failing without success for HERALD_DISABLE_AFTER, `manual`); nothing is sent to it until it is enabled."""

    description: str
    failing_since: str


class EndpointDisabledEvent(TypedDict):
    """The envelope of endpoint.disabled."""

    id: str
    type: Literal["endpoint.disabled"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: EndpointDisabledData


class _EndpointFailingDataRequired(TypedDict):
    endpoint_id: str
    url: str
    failing_since: str


class EndpointFailingData(_EndpointFailingDataRequired, total=False):
    """The data of endpoint.failing: Operational, emitted by Herald: an endpoint of the project has failed without a single success for HERALD_FAILING_AFTER (1 hour by default); once per failure streak."""

    description: str


class EndpointFailingEvent(TypedDict):
    """The envelope of endpoint.failing."""

    id: str
    type: Literal["endpoint.failing"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: EndpointFailingData


class _EndpointRecoveredDataRequired(TypedDict):
    endpoint_id: str
    url: str
    failing_since: str


class EndpointRecoveredData(_EndpointRecoveredDataRequired, total=False):
    """The data of endpoint.recovered: Operational, emitted by Herald: the first success of an endpoint after a failure streak that was reported by `endpoint.failing`."""

    description: str


class EndpointRecoveredEvent(TypedDict):
    """The envelope of endpoint.recovered."""

    id: str
    type: Literal["endpoint.recovered"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: EndpointRecoveredData


class _DeliveryExhaustedDataRequired(TypedDict):
    endpoint_id: str
    url: str
    event_id: str
    event_type: Literal["message.accepted", "message.sent", "message.delivered", "message.partially_delivered", "message.deferred", "message.bounced", "message.failed", "message.rejected", "message.undeliverable", "message.expired", "message.cancelled", "message.suppressed", "message.opened", "message.clicked", "message.complained", "message.unsubscribed", "domain.verification_failed", "domain.sending_paused", "domain.verified"]
    delivery_id: str
    attempt: int
    attempted_at: str


class DeliveryExhaustedData(_DeliveryExhaustedDataRequired, total=False):
    """The data of delivery.exhausted: Operational, emitted by Herald: the last automatic attempt of an event to an endpoint failed; Herald gives the event up for that endpoint (it can still be retried by hand)."""

    description: str
    response_status: int
    error: Literal["timeout", "connection_error", "dns_error", "tls_error", "blocked_address", "http_status", "redirect", "auth_error", "destination_not_found", "unroutable", "broker_rejected", "message_too_large"]


class DeliveryExhaustedEvent(TypedDict):
    """The envelope of delivery.exhausted."""

    id: str
    type: Literal["delivery.exhausted"]
    version: Literal["1"]
    occurred_at: str
    tenant_id: str
    project_id: str
    resource_id: str
    data: DeliveryExhaustedData


#: Every envelope Herald posts, discriminated by ``type``.
HeraldEnvelope = Union[
    MessageAcceptedEvent,
    MessageSentEvent,
    MessageDeliveredEvent,
    MessagePartiallyDeliveredEvent,
    MessageDeferredEvent,
    MessageBouncedEvent,
    MessageFailedEvent,
    MessageRejectedEvent,
    MessageUndeliverableEvent,
    MessageExpiredEvent,
    MessageCancelledEvent,
    MessageSuppressedEvent,
    MessageOpenedEvent,
    MessageClickedEvent,
    MessageComplainedEvent,
    MessageUnsubscribedEvent,
    DomainVerificationFailedEvent,
    DomainSendingPausedEvent,
    DomainVerifiedEvent,
    EndpointDisabledEvent,
    EndpointFailingEvent,
    EndpointRecoveredEvent,
    DeliveryExhaustedEvent,
]
