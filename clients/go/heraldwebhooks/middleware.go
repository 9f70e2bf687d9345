package heraldwebhooks

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
)

type contextKey struct{}

// Middleware verifies every request before next sees it: a failure answers 400 with the error code
// as plain text (413 for a body over the limit); a success stores the envelope in the request
// context (EnvelopeFromContext) and hands next a fresh copy of the raw body. It panics when the
// secrets or options are unusable, as a configuration mistake.
func Middleware(secrets []string, next http.Handler, opts ...Option) http.Handler {
	c, err := newConfig(secrets, opts)
	if err != nil {
		panic(err)
	}
	owned := append([]string(nil), secrets...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, c.maxBodyBytes))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				http.Error(w, "payload_too_large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "unreadable_body", http.StatusBadRequest)
			return
		}
		env, err := c.verify(body, r.Header, owned)
		if err != nil {
			http.Error(w, ErrorCode(err), http.StatusBadRequest)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), contextKey{}, env))
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// EnvelopeFromContext returns the envelope Middleware verified for this request.
func EnvelopeFromContext(ctx context.Context) (*Envelope, bool) {
	env, ok := ctx.Value(contextKey{}).(*Envelope)
	return env, ok
}
