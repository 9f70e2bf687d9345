-- Destinations beyond HTTPS (ADR 27). An endpoint's `kind` ('https', 'kafka', 'rabbitmq', 'sqs') and its
-- broker destination as one jsonb value, credentials sealed (AES-256-GCM under HERALD_MASTER_KEY, like the
-- secrets); null for an HTTPS endpoint, as on every endpoint stored before this migration. A delivery's
-- `receipt`: what the broker answered when it stored the message (partition and offset, delivery tag,
-- message id); null for HTTPS attempts and failures. A column with a constant default and nullable ones
-- without a default: adding them rewrites nothing.

ALTER TABLE endpoints
  ADD COLUMN kind text NOT NULL DEFAULT 'https',
  ADD COLUMN destination jsonb;

ALTER TABLE deliveries
  ADD COLUMN receipt jsonb;
