-- Mutual TLS to endpoints (ADR 22): an endpoint's client certificate, as one jsonb value holding the PEM
-- chain and its facts (subject, issuer, validity, fingerprint) in clear and the private key sealed
-- (`sealed_key`, AES-256-GCM under HERALD_MASTER_KEY, like the secrets). Null: none, as on every endpoint
-- stored before this migration. A nullable column with no default: adding it rewrites nothing.

ALTER TABLE endpoints
  ADD COLUMN client_certificate jsonb;
