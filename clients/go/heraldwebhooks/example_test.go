package heraldwebhooks_test

import (
	"io"
	"log"
	"net/http"
	"os"

	"github.com/herald-webhooks/herald/clients/go/heraldwebhooks"
)

func ExampleMiddleware() {
	secrets := []string{os.Getenv("HERALD_WEBHOOK_SECRET")}
	http.Handle("POST /webhooks/herald", heraldwebhooks.Middleware(secrets,
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			env, _ := heraldwebhooks.EnvelopeFromContext(r.Context())
			log.Printf("event %s (%s)", env.ID, env.Type) // deduplicate on env.ID
			w.WriteHeader(http.StatusNoContent)
		})))
}

func ExampleVerify() {
	secrets := []string{os.Getenv("HERALD_WEBHOOK_SECRET")}
	http.HandleFunc("POST /webhooks/herald", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		env, err := heraldwebhooks.Verify(body, r.Header, secrets)
		if err != nil {
			http.Error(w, heraldwebhooks.ErrorCode(err), http.StatusBadRequest)
			return
		}
		log.Printf("event %s (%s)", env.ID, env.Type)
		w.WriteHeader(http.StatusNoContent)
	})
}
