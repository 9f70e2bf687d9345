// Code generated from openapi/openapi.json by `npm run openapi`. DO NOT EDIT.

package heraldwebhooks

import (
	"encoding/json"
	"fmt"
)

// The event types of the catalog: the values of Envelope.Type.
const (
	EventMessageAccepted           = "message.accepted"
	EventMessageSent               = "message.sent"
	EventMessageDelivered          = "message.delivered"
	EventMessagePartiallyDelivered = "message.partially_delivered"
	EventMessageDeferred           = "message.deferred"
	EventMessageBounced            = "message.bounced"
	EventMessageFailed             = "message.failed"
	EventMessageRejected           = "message.rejected"
	EventMessageUndeliverable      = "message.undeliverable"
	EventMessageExpired            = "message.expired"
	EventMessageCancelled          = "message.cancelled"
	EventMessageSuppressed         = "message.suppressed"
	EventMessageOpened             = "message.opened"
	EventMessageClicked            = "message.clicked"
	EventMessageComplained         = "message.complained"
	EventMessageUnsubscribed       = "message.unsubscribed"
	EventDomainVerificationFailed  = "domain.verification_failed"
	EventDomainSendingPaused       = "domain.sending_paused"
	EventDomainVerified            = "domain.verified"
	EventEndpointDisabled          = "endpoint.disabled"
	EventEndpointFailing           = "endpoint.failing"
	EventEndpointRecovered         = "endpoint.recovered"
	EventDeliveryExhausted         = "delivery.exhausted"
)

// DnsRecord is an object nested in event data.
type DnsRecord struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
	Valid *bool  `json:"valid,omitempty"`
}

// MessageAcceptedData is the data of message.accepted: The provider took the message.
type MessageAcceptedData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // accepted
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MessageSentData is the data of message.sent: Handed off to the destination.
type MessageSentData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // sent
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MessageDeliveredData is the data of message.delivered: Confirmed delivered.
type MessageDeliveredData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // delivered
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MessagePartiallyDeliveredData is the data of message.partially_delivered: Delivered to only part of the recipients.
type MessagePartiallyDeliveredData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // partially_delivered
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MessageDeferredData is the data of message.deferred: Temporarily postponed; still in flight.
type MessageDeferredData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // deferred
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MessageBouncedData is the data of message.bounced: Permanently rejected by the recipient server.
type MessageBouncedData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // bounced
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MessageFailedData is the data of message.failed: Could not be sent.
type MessageFailedData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // failed
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MessageRejectedData is the data of message.rejected: Could not be sent.
type MessageRejectedData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // rejected
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MessageUndeliverableData is the data of message.undeliverable: Accepted but could not be delivered; terminal.
type MessageUndeliverableData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // undeliverable
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MessageExpiredData is the data of message.expired: The validity window ran out before delivery.
type MessageExpiredData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // expired
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MessageCancelledData is the data of message.cancelled: Cancelled by the client before submission.
type MessageCancelledData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // cancelled
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MessageSuppressedData is the data of message.suppressed: Recipient was on the suppression list; nothing was sent.
type MessageSuppressedData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // suppressed
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MessageOpenedData is the data of message.opened: Engagement; does not change delivery status.
type MessageOpenedData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // accepted, sent, delivered, partially_delivered, deferred, bounced, failed, rejected, undeliverable, expired, cancelled, suppressed
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MessageClickedData is the data of message.clicked: Engagement; does not change delivery status.
type MessageClickedData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // accepted, sent, delivered, partially_delivered, deferred, bounced, failed, rejected, undeliverable, expired, cancelled, suppressed
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MessageComplainedData is the data of message.complained: Marked as spam; to be treated as a hard signal.
type MessageComplainedData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // accepted, sent, delivered, partially_delivered, deferred, bounced, failed, rejected, undeliverable, expired, cancelled, suppressed
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MessageUnsubscribedData is the data of message.unsubscribed: Recipient opted out; suppressed automatically from then on.
type MessageUnsubscribedData struct {
	MessageID   string         `json:"message_id"`
	Status      string         `json:"status"`       // accepted, sent, delivered, partially_delivered, deferred, bounced, failed, rejected, undeliverable, expired, cancelled, suppressed
	Channel     string         `json:"channel"`      // email, sms, push, webhook
	MessageType string         `json:"message_type"` // transactional, marketing
	Recipient   string         `json:"recipient"`
	Reason      *string        `json:"reason,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// DomainVerificationFailedData is the data of domain.verification_failed: A sending domain's DNS changed; it entered a grace period before sending is paused.
type DomainVerificationFailedData struct {
	DomainID          string      `json:"domain_id"`
	Domain            string      `json:"domain"`
	Status            string      `json:"status"` // verification_failed
	GracePeriodEndsAt *string     `json:"grace_period_ends_at,omitempty"`
	Reason            *string     `json:"reason,omitempty"`
	DNSRecords        []DnsRecord `json:"dns_records,omitempty"`
}

// DomainSendingPausedData is the data of domain.sending_paused: A sending domain was paused after its DNS stayed out of sync.
type DomainSendingPausedData struct {
	DomainID          string      `json:"domain_id"`
	Domain            string      `json:"domain"`
	Status            string      `json:"status"` // sending_paused
	GracePeriodEndsAt *string     `json:"grace_period_ends_at,omitempty"`
	Reason            *string     `json:"reason,omitempty"`
	DNSRecords        []DnsRecord `json:"dns_records,omitempty"`
}

// DomainVerifiedData is the data of domain.verified: A sending domain passed verification again; sending resumed.
type DomainVerifiedData struct {
	DomainID          string      `json:"domain_id"`
	Domain            string      `json:"domain"`
	Status            string      `json:"status"` // verified
	GracePeriodEndsAt *string     `json:"grace_period_ends_at,omitempty"`
	Reason            *string     `json:"reason,omitempty"`
	DNSRecords        []DnsRecord `json:"dns_records,omitempty"`
}

// EndpointDisabledData is the data of endpoint.disabled: Operational, emitted by Herald: an endpoint of the project was disabled (`disabled_reason`: `gone` after a 410, `failing` after failing without success for HERALD_DISABLE_AFTER, `manual`); nothing is sent to it until it is enabled.
type EndpointDisabledData struct {
	EndpointID     string  `json:"endpoint_id"`
	Url            string  `json:"url"`
	Description    *string `json:"description,omitempty"`
	DisabledReason string  `json:"disabled_reason"` // manual, failing, gone
	DisabledAt     string  `json:"disabled_at"`
	FailingSince   *string `json:"failing_since,omitempty"`
}

// EndpointFailingData is the data of endpoint.failing: Operational, emitted by Herald: an endpoint of the project has failed without a single success for HERALD_FAILING_AFTER (1 hour by default); once per failure streak.
type EndpointFailingData struct {
	EndpointID   string  `json:"endpoint_id"`
	Url          string  `json:"url"`
	Description  *string `json:"description,omitempty"`
	FailingSince string  `json:"failing_since"`
}

// EndpointRecoveredData is the data of endpoint.recovered: Operational, emitted by Herald: the first success of an endpoint after a failure streak that was reported by `endpoint.failing`.
type EndpointRecoveredData struct {
	EndpointID   string  `json:"endpoint_id"`
	Url          string  `json:"url"`
	Description  *string `json:"description,omitempty"`
	FailingSince string  `json:"failing_since"`
}

// DeliveryExhaustedData is the data of delivery.exhausted: Operational, emitted by Herald: the last automatic attempt of an event to an endpoint failed; Herald gives the event up for that endpoint (it can still be retried by hand).
type DeliveryExhaustedData struct {
	EndpointID     string  `json:"endpoint_id"`
	Url            string  `json:"url"`
	Description    *string `json:"description,omitempty"`
	EventID        string  `json:"event_id"`
	EventType      string  `json:"event_type"` // message.accepted, message.sent, message.delivered, message.partially_delivered, message.deferred, message.bounced, message.failed, message.rejected, message.undeliverable, message.expired, message.cancelled, message.suppressed, message.opened, message.clicked, message.complained, message.unsubscribed, domain.verification_failed, domain.sending_paused, domain.verified
	DeliveryID     string  `json:"delivery_id"`
	Attempt        int64   `json:"attempt"`
	AttemptedAt    string  `json:"attempted_at"`
	ResponseStatus *int64  `json:"response_status,omitempty"`
	Error          *string `json:"error,omitempty"` // timeout, connection_error, dns_error, tls_error, blocked_address, http_status, redirect, auth_error, destination_not_found, unroutable, broker_rejected, message_too_large
}

// DecodeData decodes Data into the struct of the envelope's Type: a *MessageDeliveredData for
// message.delivered, and so on for every type of the catalog. A type this library does not know is
// an error; Data stays available to decode by hand.
func (e *Envelope) DecodeData() (any, error) {
	switch e.Type {
	case EventMessageAccepted:
		return decodeData[MessageAcceptedData](e.Data)
	case EventMessageSent:
		return decodeData[MessageSentData](e.Data)
	case EventMessageDelivered:
		return decodeData[MessageDeliveredData](e.Data)
	case EventMessagePartiallyDelivered:
		return decodeData[MessagePartiallyDeliveredData](e.Data)
	case EventMessageDeferred:
		return decodeData[MessageDeferredData](e.Data)
	case EventMessageBounced:
		return decodeData[MessageBouncedData](e.Data)
	case EventMessageFailed:
		return decodeData[MessageFailedData](e.Data)
	case EventMessageRejected:
		return decodeData[MessageRejectedData](e.Data)
	case EventMessageUndeliverable:
		return decodeData[MessageUndeliverableData](e.Data)
	case EventMessageExpired:
		return decodeData[MessageExpiredData](e.Data)
	case EventMessageCancelled:
		return decodeData[MessageCancelledData](e.Data)
	case EventMessageSuppressed:
		return decodeData[MessageSuppressedData](e.Data)
	case EventMessageOpened:
		return decodeData[MessageOpenedData](e.Data)
	case EventMessageClicked:
		return decodeData[MessageClickedData](e.Data)
	case EventMessageComplained:
		return decodeData[MessageComplainedData](e.Data)
	case EventMessageUnsubscribed:
		return decodeData[MessageUnsubscribedData](e.Data)
	case EventDomainVerificationFailed:
		return decodeData[DomainVerificationFailedData](e.Data)
	case EventDomainSendingPaused:
		return decodeData[DomainSendingPausedData](e.Data)
	case EventDomainVerified:
		return decodeData[DomainVerifiedData](e.Data)
	case EventEndpointDisabled:
		return decodeData[EndpointDisabledData](e.Data)
	case EventEndpointFailing:
		return decodeData[EndpointFailingData](e.Data)
	case EventEndpointRecovered:
		return decodeData[EndpointRecoveredData](e.Data)
	case EventDeliveryExhausted:
		return decodeData[DeliveryExhaustedData](e.Data)
	}
	return nil, fmt.Errorf("heraldwebhooks: unknown event type %q", e.Type)
}

func decodeData[T any](raw json.RawMessage) (any, error) {
	var data T
	if err := json.Unmarshal(raw, &data); err != nil {
		return nil, fmt.Errorf("heraldwebhooks: data: %w", err)
	}
	return &data, nil
}
