package heraldwebhooks

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// headerValue is a vector header: a string, or an array when the header is sent more than once.
type headerValue []string

func (h *headerValue) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*h = []string{one}
		return nil
	}
	return json.Unmarshal(b, (*[]string)(h))
}

type vector struct {
	Name       string                 `json:"name"`
	Scheme     Scheme                 `json:"scheme"`
	BodyBase64 string                 `json:"body_base64"`
	Headers    map[string]headerValue `json:"headers"`
	Secrets    []string               `json:"secrets"`
	PublicKeys []string               `json:"public_keys"`
	Now        int64                  `json:"now"`
	Tolerance  int64                  `json:"tolerance"`
	Expect     string                 `json:"expect"`
	EnvelopeID string                 `json:"envelope_id"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	raw, err := os.ReadFile("../../test-vectors.json")
	if err != nil {
		t.Fatalf("shared vectors: %v", err)
	}
	var file struct {
		Vectors []vector `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatalf("shared vectors: %v", err)
	}
	if len(file.Vectors) < 50 {
		t.Fatalf("only %d vectors", len(file.Vectors))
	}
	return file.Vectors
}

func findVector(t *testing.T, name string) vector {
	for _, v := range loadVectors(t) {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no vector %q", name)
	return vector{}
}

func (v vector) body(t *testing.T) []byte {
	b, err := base64.StdEncoding.DecodeString(v.BodyBase64)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// headerVariants: canonical keys (as net/http builds them) and the vector's keys as written.
func (v vector) headerVariants() map[string]http.Header {
	canonical, asWritten := http.Header{}, http.Header{}
	for k, values := range v.Headers {
		for _, one := range values {
			canonical.Add(k, one)
		}
		asWritten[k] = append([]string(nil), values...)
	}
	return map[string]http.Header{"canonical": canonical, "as written": asWritten}
}

func (v vector) options() []Option {
	return []Option{
		WithTolerance(time.Duration(v.Tolerance) * time.Second),
		WithNow(func() time.Time { return time.Unix(v.Now, 0) }),
		WithScheme(v.Scheme),
		WithPublicKeys(v.PublicKeys...),
	}
}

func TestVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			for kind, header := range v.headerVariants() {
				env, err := Verify(v.body(t), header, v.Secrets, v.options()...)
				if v.Expect == "ok" {
					if err != nil {
						t.Fatalf("%s: unexpected error %v", kind, err)
					}
					if env.ID != v.EnvelopeID {
						t.Fatalf("%s: envelope id %q, want %q", kind, env.ID, v.EnvelopeID)
					}
					continue
				}
				if env != nil {
					t.Fatalf("%s: got an envelope with error expected", kind)
				}
				for _, s := range sentinels {
					if errors.Is(err, s) != (s.Error() == v.Expect) {
						t.Fatalf("%s: error %v; errors.Is(%v) should be %v", kind, err, s, !errors.Is(err, s))
					}
				}
				if got := ErrorCode(err); got != v.Expect {
					t.Fatalf("%s: ErrorCode %q, want %q", kind, got, v.Expect)
				}
			}
		})
	}
}

func sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", ts)
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

func TestEnvelopeFields(t *testing.T) {
	v := findVector(t, "valid")
	env, err := Verify(v.body(t), v.headerVariants()["canonical"], v.Secrets, v.options()...)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal(v.body(t), &want); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(env)
	var gotFields map[string]json.RawMessage
	_ = json.Unmarshal(got, &gotFields)
	for k, w := range want {
		if string(gotFields[k]) != string(w) {
			t.Errorf("field %s: %s, want %s", k, gotFields[k], w)
		}
	}
	var data struct {
		Recipient string `json:"recipient"`
	}
	if err := json.Unmarshal(env.Data, &data); err != nil || data.Recipient == "" {
		t.Fatalf("data not decodable: %v %q", err, data.Recipient)
	}
}

func TestDefaultClockAndTolerance(t *testing.T) {
	v := findVector(t, "valid")
	body := v.body(t)
	ts := time.Now().Unix()
	h := http.Header{}
	h.Set(TimestampHeader, strconv.FormatInt(ts, 10))
	h.Set(SignatureHeader, sign(v.Secrets[0], ts, body))
	if _, err := Verify(body, h, v.Secrets); err != nil {
		t.Fatalf("fresh delivery: %v", err)
	}
	old := ts - 3600
	h.Set(TimestampHeader, strconv.FormatInt(old, 10))
	h.Set(SignatureHeader, sign(v.Secrets[0], old, body))
	if _, err := Verify(body, h, v.Secrets); !errors.Is(err, ErrTimestampOutOfTolerance) {
		t.Fatalf("hour-old delivery: %v", err)
	}
	if _, err := Verify(body, h, v.Secrets, WithTolerance(time.Hour)); err != nil {
		t.Fatalf("hour-old delivery with an hour's tolerance: %v", err)
	}
}

func TestStandardWebhooksScheme(t *testing.T) {
	v := findVector(t, "sw_valid")
	if v.Scheme != SchemeStandardWebhooks {
		t.Fatalf("scheme %q", v.Scheme)
	}
	body := v.body(t)
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(v.Secrets[0], "whsec_"))
	ts := time.Now().Unix()
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", v.EnvelopeID, ts)
	mac.Write(body)
	h := http.Header{}
	h.Set(StandardIDHeader, v.EnvelopeID)
	h.Set(StandardTimestampHeader, strconv.FormatInt(ts, 10))
	h.Set(StandardSignatureHeader, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	if _, err := Verify(body, h, v.Secrets, WithScheme(SchemeStandardWebhooks)); err != nil {
		t.Fatalf("fresh standard-webhooks delivery: %v", err)
	}
	if _, err := Verify(body, h, v.Secrets); !errors.Is(err, ErrMissingTimestamp) {
		t.Fatalf("checked as herald-v1: %v", err)
	}
}

func TestStandardWebhooksEd25519Scheme(t *testing.T) {
	v := findVector(t, "ed25519_valid")
	if v.Scheme != SchemeStandardWebhooksEd25519 || len(v.Secrets) != 0 || len(v.PublicKeys) != 1 {
		t.Fatalf("vector %+v", v)
	}
	// A fresh delivery signed here with a key pair of our own: the public key alone verifies it.
	public, private, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	body := v.body(t)
	ts := time.Now().Unix()
	message := append([]byte(fmt.Sprintf("%s.%d.", v.EnvelopeID, ts)), body...)
	h := http.Header{}
	h.Set(StandardIDHeader, v.EnvelopeID)
	h.Set(StandardTimestampHeader, strconv.FormatInt(ts, 10))
	h.Set(StandardSignatureHeader, "v1a,"+base64.StdEncoding.EncodeToString(ed25519.Sign(private, message)))
	whpk := "whpk_" + base64.StdEncoding.EncodeToString(public)
	ed := WithScheme(SchemeStandardWebhooksEd25519)
	if env, err := Verify(body, h, nil, ed, WithPublicKeys(whpk)); err != nil || env.ID != v.EnvelopeID {
		t.Fatalf("fresh v1a delivery: %v", err)
	}
	if _, err := Verify(body, h, nil, ed, WithPublicKeys(v.PublicKeys...)); !errors.Is(err, ErrSignatureMismatch) {
		t.Fatalf("another public key: %v", err)
	}
	// The middleware takes no secrets under this scheme.
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	req := httptest.NewRequest(http.MethodPost, "/hooks", strings.NewReader(string(body)))
	req.Header = h
	rec := httptest.NewRecorder()
	Middleware(nil, next, ed, WithPublicKeys(whpk)).ServeHTTP(rec, req)
	if rec.Code != http.StatusNoContent {
		t.Fatalf("middleware: %d %s", rec.Code, rec.Body.String())
	}
	for name, opts := range map[string][]Option{
		"no public key":       {ed},
		"a secret, not a key": {ed, WithPublicKeys("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8zDdPGsEOqM")},
		"key of 31 bytes":     {ed, WithPublicKeys("whpk_" + base64.StdEncoding.EncodeToString(public[:31]))},
		"key not base64":      {ed, WithPublicKeys("whpk_not base64!")},
	} {
		if _, err := Verify(body, h, nil, opts...); err == nil || ErrorCode(err) != "" {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestBadArgumentsAreNotVerificationFailures(t *testing.T) {
	v := findVector(t, "valid")
	for name, call := range map[string]func() error{
		"unknown scheme": func() error {
			_, err := Verify(v.body(t), http.Header{}, v.Secrets, WithScheme("herald-v2"))
			return err
		},
		"secret not base64": func() error {
			_, err := Verify(v.body(t), http.Header{}, []string{"whsec_not base64!"}, WithScheme(SchemeStandardWebhooks))
			return err
		},
		"no secrets":         func() error { _, err := Verify(v.body(t), http.Header{}, nil); return err },
		"empty secret":       func() error { _, err := Verify(v.body(t), http.Header{}, []string{""}); return err },
		"negative tolerance": func() error { _, err := Verify(nil, nil, v.Secrets, WithTolerance(-time.Second)); return err },
		"nil clock":          func() error { _, err := Verify(nil, nil, v.Secrets, WithNow(nil)); return err },
	} {
		err := call()
		if err == nil || ErrorCode(err) != "" {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func serve(t *testing.T, v vector, body []byte, opts ...Option) (*httptest.ResponseRecorder, string) {
	t.Helper()
	var seen string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		env, ok := EnvelopeFromContext(r.Context())
		rest, _ := io.ReadAll(r.Body)
		if !ok || string(rest) != string(body) {
			t.Errorf("handler got envelope %v, body %q", ok, rest)
		}
		seen = env.ID
		w.WriteHeader(http.StatusNoContent)
	})
	req := httptest.NewRequest(http.MethodPost, "/hooks", strings.NewReader(string(body)))
	req.Header = v.headerVariants()["canonical"]
	rec := httptest.NewRecorder()
	Middleware(v.Secrets, next, append(v.options(), opts...)...).ServeHTTP(rec, req)
	return rec, seen
}

func TestMiddleware(t *testing.T) {
	v := findVector(t, "rotation_header_old_secret_matches")
	rec, seen := serve(t, v, v.body(t))
	if rec.Code != http.StatusNoContent || seen != v.EnvelopeID {
		t.Fatalf("valid delivery: %d %q", rec.Code, seen)
	}

	bad := findVector(t, "tampered_body")
	rec, seen = serve(t, bad, bad.body(t))
	if rec.Code != http.StatusBadRequest || strings.TrimSpace(rec.Body.String()) != "signature_mismatch" || seen != "" {
		t.Fatalf("tampered delivery: %d %q", rec.Code, rec.Body.String())
	}

	rec, _ = serve(t, v, v.body(t), WithMaxBodyBytes(10))
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: %d", rec.Code)
	}
}

func TestMiddlewarePanicsWithoutSecrets(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	Middleware(nil, http.NotFoundHandler())
}
