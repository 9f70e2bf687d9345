// Package heraldwebhooks verifies Herald webhook deliveries on the receiving side.
//
// Verify checks, in this order: X-Webhook-Timestamp present, decimal unix seconds, within the
// tolerance of now (past or future); X-Webhook-Signature well formed; one of its v1= entries
// matches HMAC-SHA256("<timestamp>.<raw body>") under one of the secrets (constant time); the body
// is a UTF-8 JSON envelope. WithScheme(SchemeStandardWebhooks) checks an endpoint in Standard
// Webhooks mode instead: webhook-timestamp, webhook-id, and a "v1,<base64>" entry of
// webhook-signature matching HMAC-SHA256("<id>.<timestamp>.<raw body>") keyed with the
// base64-decoded part after whsec_. WithScheme(SchemeStandardWebhooksEd25519) checks "v1a,<base64>"
// entries instead, Ed25519 signatures of the same message, under the public keys given by
// WithPublicKeys (crypto/ed25519). Each failure wraps a distinct sentinel error for errors.Is. The shared
// vectors in clients/test-vectors.json pin this behaviour to the TypeScript and Python libraries.
package heraldwebhooks

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Header names Herald sends. The id header is not signed: deduplicate on Envelope.ID instead.
const (
	TimestampHeader = "X-Webhook-Timestamp"
	SignatureHeader = "X-Webhook-Signature"
	IDHeader        = "X-Webhook-Id"
)

// Scheme is an endpoint's signature_scheme.
type Scheme string

const (
	// SchemeHeraldV1 is the default: X-Webhook-* headers, "v1=" + hex HMAC keyed with the whole secret string.
	SchemeHeraldV1 Scheme = "herald-v1"
	// SchemeStandardWebhooks is the Standard Webhooks specification's webhook-id, webhook-timestamp and
	// webhook-signature ("v1," + base64 HMAC of "<id>.<timestamp>.<body>", keyed with the base64 after whsec_).
	SchemeStandardWebhooks Scheme = "standard-webhooks"
	// SchemeStandardWebhooksEd25519 is the same headers with Standard Webhooks' asymmetric signature:
	// "v1a," + base64 Ed25519 signature of "<id>.<timestamp>.<body>", verified with the endpoint's public
	// key (whpk_..., given by WithPublicKeys); no secret is needed.
	SchemeStandardWebhooksEd25519 Scheme = "standard-webhooks-ed25519"
)

// Header names of an endpoint in standard-webhooks mode.
const (
	StandardIDHeader        = "webhook-id"
	StandardTimestampHeader = "webhook-timestamp"
	StandardSignatureHeader = "webhook-signature"
)

// DefaultTolerance is how far the signing time may lie from now, in the past or the future.
const DefaultTolerance = 300 * time.Second

// Sentinel errors; Verify wraps exactly one of them (with details) when a delivery fails a check.
var (
	// ErrMissingTimestamp: the X-Webhook-Timestamp header is absent or blank.
	ErrMissingTimestamp = errors.New("missing_timestamp")
	// ErrTimestampOutOfTolerance: the signing time is too far from now (a replay or a skewed clock).
	ErrTimestampOutOfTolerance = errors.New("timestamp_out_of_tolerance")
	// ErrMalformedHeader: a non-numeric timestamp, an entry that is not v1=<64 hex>, empty, or repeated.
	ErrMalformedHeader = errors.New("malformed_header")
	// ErrSignatureMismatch: no signature matches the body under any of the secrets (or public keys).
	ErrSignatureMismatch = errors.New("signature_mismatch")
	// ErrInvalidPayload: the signature is valid but the body is not a UTF-8 JSON envelope object.
	ErrInvalidPayload = errors.New("invalid_payload")
)

var sentinels = []error{
	ErrMissingTimestamp, ErrTimestampOutOfTolerance, ErrMalformedHeader, ErrSignatureMismatch, ErrInvalidPayload,
}

// ErrorCode returns the stable code of a verification failure ("signature_mismatch", ...), the same
// strings as the TypeScript and Python libraries, or "" when err is not one.
func ErrorCode(err error) string {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return ""
}

// Envelope is the event body Herald posts. Data is kept raw so it can be decoded into the caller's
// own type for the event Type; OccurredAt is ISO 8601 UTC with milliseconds.
type Envelope struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Version    string          `json:"version"`
	OccurredAt string          `json:"occurred_at"`
	TenantID   string          `json:"tenant_id"`
	ProjectID  string          `json:"project_id"`
	ResourceID string          `json:"resource_id"`
	Data       json.RawMessage `json:"data"`
}

type config struct {
	scheme       Scheme
	keys         [][]byte
	publicKeys   []ed25519.PublicKey
	tolerance    time.Duration
	now          func() time.Time
	maxBodyBytes int64
	err          error
}

// Option adjusts Verify and Middleware.
type Option func(*config)

// WithTolerance sets how far the signing time may lie from now (default 300 s); it must not be negative.
func WithTolerance(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.err = errors.New("heraldwebhooks: tolerance must not be negative")
		}
		c.tolerance = d
	}
}

// WithNow replaces the clock (default time.Now), for tests.
func WithNow(now func() time.Time) Option {
	return func(c *config) {
		if now == nil {
			c.err = errors.New("heraldwebhooks: WithNow needs a function")
		}
		c.now = now
	}
}

// WithScheme sets the endpoint's signature_scheme (default SchemeHeraldV1).
func WithScheme(s Scheme) Option {
	return func(c *config) {
		if s != SchemeHeraldV1 && s != SchemeStandardWebhooks && s != SchemeStandardWebhooksEd25519 {
			c.err = errors.New(`heraldwebhooks: scheme must be "herald-v1", "standard-webhooks" or "standard-webhooks-ed25519"`)
		}
		c.scheme = s
	}
}

// WithPublicKeys gives the endpoint's public key (its public_key, whpk_ + base64 of 32 bytes; the
// prefix optional), or several while rotating. Required by SchemeStandardWebhooksEd25519, which takes
// no secrets; the other schemes do not use it.
func WithPublicKeys(keys ...string) Option {
	return func(c *config) {
		for _, k := range keys {
			raw, err := base64.StdEncoding.Strict().DecodeString(strings.TrimPrefix(k, "whpk_"))
			if err != nil || len(raw) != ed25519.PublicKeySize {
				c.err = errors.New("heraldwebhooks: a public key must be whpk_ followed by the base64 of 32 bytes")
				return
			}
			c.publicKeys = append(c.publicKeys, ed25519.PublicKey(raw))
		}
	}
}

// WithMaxBodyBytes caps the body Middleware reads (default 1 MiB); larger requests get 413.
func WithMaxBodyBytes(n int64) Option {
	return func(c *config) {
		if n <= 0 {
			c.err = errors.New("heraldwebhooks: max body bytes must be positive")
		}
		c.maxBodyBytes = n
	}
}

func newConfig(secrets []string, opts []Option) (*config, error) {
	c := &config{scheme: SchemeHeraldV1, tolerance: DefaultTolerance, now: time.Now, maxBodyBytes: 1 << 20}
	for _, o := range opts {
		o(c)
	}
	if c.err != nil {
		return nil, c.err
	}
	if c.scheme == SchemeStandardWebhooksEd25519 {
		if len(c.publicKeys) == 0 {
			return nil, errors.New("heraldwebhooks: standard-webhooks-ed25519 needs WithPublicKeys")
		}
		return c, nil
	}
	if len(secrets) == 0 {
		return nil, errors.New("heraldwebhooks: no secrets given")
	}
	for _, s := range secrets {
		if s == "" {
			return nil, errors.New("heraldwebhooks: empty secret")
		}
		if c.scheme == SchemeStandardWebhooks {
			key, err := standardKey(s)
			if err != nil {
				return nil, err
			}
			c.keys = append(c.keys, key)
		} else {
			c.keys = append(c.keys, []byte(s))
		}
	}
	return c, nil
}

// standardKey is the Standard Webhooks key of a secret: the base64 after an optional whsec_, as the
// specification's libraries read it.
func standardKey(secret string) ([]byte, error) {
	encoded := strings.TrimPrefix(secret, "whsec_")
	key, err := base64.StdEncoding.Strict().DecodeString(encoded)
	if err != nil || len(key) == 0 {
		return nil, errors.New("heraldwebhooks: a standard-webhooks secret must be whsec_ followed by base64")
	}
	return key, nil
}

// Verify checks a delivery from its raw body, its headers and the endpoint secret(s) (whsec_...,
// exactly as handed out; several while rotating; nil for SchemeStandardWebhooksEd25519, which
// verifies with WithPublicKeys) and returns the envelope. A failed check returns
// an error wrapping one of the sentinels; bad arguments return an error wrapping none of them.
func Verify(body []byte, header http.Header, secrets []string, opts ...Option) (*Envelope, error) {
	c, err := newConfig(secrets, opts)
	if err != nil {
		return nil, err
	}
	return c.verify(body, header, secrets)
}

func (c *config) verify(body []byte, header http.Header, _ []string) (*Envelope, error) {
	timestampName, signatureName := TimestampHeader, SignatureHeader
	if c.scheme != SchemeHeraldV1 {
		timestampName, signatureName = StandardTimestampHeader, StandardSignatureHeader
	}
	timestamps := headerValues(header, timestampName)
	if len(timestamps) > 1 {
		return nil, fmt.Errorf("%w: %s appears more than once", ErrMalformedHeader, timestampName)
	}
	timestamp := ""
	if len(timestamps) == 1 {
		timestamp = trimOWS(timestamps[0])
	}
	if timestamp == "" {
		return nil, fmt.Errorf("%w: %s is missing", ErrMissingTimestamp, timestampName)
	}
	if !isTimestamp(timestamp) {
		return nil, fmt.Errorf("%w: %s is not unix seconds in decimal digits", ErrMalformedHeader, timestampName)
	}
	ts, _ := strconv.ParseInt(timestamp, 10, 64) // at most 12 digits: cannot fail
	age := c.now().Unix() - ts
	if age < 0 {
		age = -age
	}
	// Whole seconds on both sides, so truncating the tolerance loses nothing.
	if age > int64(c.tolerance/time.Second) {
		return nil, fmt.Errorf("%w: %s is more than %s away from the current time",
			ErrTimestampOutOfTolerance, timestampName, c.tolerance)
	}

	var received [][]byte
	var prefix string
	var err error
	if c.scheme != SchemeHeraldV1 {
		ids := headerValues(header, StandardIDHeader)
		if len(ids) > 1 {
			return nil, fmt.Errorf("%w: %s appears more than once", ErrMalformedHeader, StandardIDHeader)
		}
		id := ""
		if len(ids) == 1 {
			id = trimOWS(ids[0])
		}
		if id == "" {
			return nil, fmt.Errorf("%w: %s is missing", ErrMalformedHeader, StandardIDHeader)
		}
		if strings.ContainsAny(id, " \t\r\n,") {
			return nil, fmt.Errorf("%w: %s is not one id", ErrMalformedHeader, StandardIDHeader)
		}
		version := "v1"
		if c.scheme == SchemeStandardWebhooksEd25519 {
			version = "v1a"
		}
		received, err = standardEntries(headerValues(header, signatureName), version)
		prefix = id + "." + timestamp + "."
	} else {
		received, err = signatureEntries(headerValues(header, signatureName))
		prefix = timestamp + "."
	}
	if err != nil {
		return nil, err
	}
	matched := 0
	if c.scheme == SchemeStandardWebhooksEd25519 {
		message := append([]byte(prefix), body...)
		// A public key holds nothing to leak, so each check may answer in its own time.
		for _, key := range c.publicKeys {
			for _, r := range received {
				if ed25519.Verify(key, message, r) {
					matched++
				}
			}
		}
		if matched == 0 {
			return nil, fmt.Errorf("%w: no signature matches the body under the given public keys", ErrSignatureMismatch)
		}
		return parseEnvelope(body)
	}
	for _, key := range c.keys {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(prefix))
		mac.Write(body)
		expected := mac.Sum(nil)
		// Every comparison runs, so timing reveals neither which secret nor which entry matched.
		for _, r := range received {
			if hmac.Equal(expected, r) {
				matched++
			}
		}
	}
	if matched == 0 {
		return nil, fmt.Errorf("%w: no signature matches the body under the given secrets", ErrSignatureMismatch)
	}
	return parseEnvelope(body)
}

// standardEntries returns the signatures of one version of webhook-signature (v1: HMAC, v1a:
// Ed25519); entries of another version are skipped, as the specification asks.
func standardEntries(values []string, version string) ([][]byte, error) {
	if len(values) > 1 {
		return nil, fmt.Errorf("%w: %s appears more than once", ErrMalformedHeader, StandardSignatureHeader)
	}
	text := ""
	if len(values) == 1 {
		text = trimOWS(values[0])
	}
	if text == "" {
		return nil, fmt.Errorf("%w: %s is missing or empty", ErrMalformedHeader, StandardSignatureHeader)
	}
	var out [][]byte
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' }) {
		v, sig, ok := strings.Cut(f, ",")
		if !ok || v == "" {
			return nil, fmt.Errorf("%w: %s holds an entry that is not <version>,<signature>",
				ErrMalformedHeader, StandardSignatureHeader)
		}
		if v != version {
			continue
		}
		size := sha256.Size
		if version == "v1a" {
			size = ed25519.SignatureSize
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(sig)
		if err != nil || len(raw) != size || len(sig) != base64.StdEncoding.EncodedLen(size) {
			return nil, fmt.Errorf("%w: %s holds a %s entry that is not base64 of %d bytes",
				ErrMalformedHeader, StandardSignatureHeader, version, size)
		}
		out = append(out, raw)
	}
	return out, nil
}

// headerValues finds a header whatever the case of its key, even in an http.Header built by hand.
func headerValues(header http.Header, name string) []string {
	var out []string
	for key, values := range header {
		if strings.EqualFold(key, name) {
			out = append(out, values...)
		}
	}
	return out
}

// trimOWS removes HTTP optional whitespace (space and tab only), the same set in every Herald library.
func trimOWS(s string) string { return strings.Trim(s, " \t") }

func isTimestamp(s string) bool {
	if len(s) == 0 || len(s) > 12 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func signatureEntries(values []string) ([][]byte, error) {
	if len(values) > 1 {
		return nil, fmt.Errorf("%w: %s appears more than once", ErrMalformedHeader, SignatureHeader)
	}
	text := ""
	if len(values) == 1 {
		text = trimOWS(values[0])
	}
	if text == "" {
		return nil, fmt.Errorf("%w: %s is missing or empty", ErrMalformedHeader, SignatureHeader)
	}
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' })
	out := make([][]byte, 0, len(fields))
	for _, f := range fields {
		if !isSignatureEntry(f) {
			return nil, fmt.Errorf("%w: %s holds an entry that is not v1=<64 lowercase hex>",
				ErrMalformedHeader, SignatureHeader)
		}
		raw, _ := hex.DecodeString(f[3:]) // checked above
		out = append(out, raw)
	}
	return out, nil
}

func isSignatureEntry(s string) bool {
	if len(s) != 3+64 || !strings.HasPrefix(s, "v1=") {
		return false
	}
	for i := 3; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func parseEnvelope(body []byte) (*Envelope, error) {
	// encoding/json would turn invalid UTF-8 into U+FFFD; the other libraries reject it, so do we.
	if !utf8.Valid(body) {
		return nil, fmt.Errorf("%w: the body is not UTF-8", ErrInvalidPayload)
	}
	// Through a map: exact key names (no case folding) and explicit JSON types, as in TS and Python.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, fmt.Errorf("%w: the body is not a JSON object: %v", ErrInvalidPayload, err)
	}
	if fields == nil {
		return nil, fmt.Errorf("%w: the body is not a JSON object", ErrInvalidPayload)
	}
	env := &Envelope{}
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{"id", &env.ID}, {"type", &env.Type}, {"version", &env.Version}, {"occurred_at", &env.OccurredAt},
		{"tenant_id", &env.TenantID}, {"project_id", &env.ProjectID}, {"resource_id", &env.ResourceID},
	} {
		raw := bytes.TrimSpace(fields[f.name])
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, f.dst) != nil {
			return nil, fmt.Errorf("%w: envelope field %s is not a string", ErrInvalidPayload, f.name)
		}
	}
	data := bytes.TrimSpace(fields["data"])
	if len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("%w: envelope field data is not an object", ErrInvalidPayload)
	}
	env.Data = data
	return env, nil
}
