-- Herald's schema on PostgreSQL (docs/adr/0018-postgres-store.md says why each index earns its cost).
-- Ids are text: event ids are `evt_<hex>`, and every id arrives from a URL path, so a malformed one must
-- match nothing rather than fail a cast. Ids and keys are COLLATE "C": they sort by code point as the other
-- stores' ids do (a list's tie-break, a FIFO endpoint's order by event id) whatever the database's locale,
-- and their indexes compare bytes rather than call the locale's collation. Times are timestamptz; JSON that
-- Herald only stores and reads back whole is jsonb, except the payload filter, kept as the exact text given
-- (its key order is kept).

CREATE TABLE endpoints (
  id text COLLATE "C" PRIMARY KEY,
  tenant_id text COLLATE "C" NOT NULL,
  project_id text COLLATE "C" NOT NULL,
  url text NOT NULL,
  events text[] NOT NULL,
  description text,
  enabled boolean NOT NULL,
  disabled_reason text,
  secrets jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  failing_since timestamptz,
  headers jsonb NOT NULL DEFAULT '[]',
  signature_scheme text NOT NULL,
  filter text,
  rate_limit jsonb,
  ordering text NOT NULL DEFAULT 'none'
);
-- Lists (newest first), fan-out (every endpoint of a project subscribed to a type) and the scope checks.
CREATE INDEX endpoints_scope_created ON endpoints (tenant_id, project_id, created_at DESC, id DESC);
-- The disable job: enabled endpoints in a failure streak (few rows; none while all is well).
CREATE INDEX endpoints_failing ON endpoints (failing_since) WHERE enabled AND failing_since IS NOT NULL;
-- Endpoints with ordering "fifo", read by the engine and /metrics.
CREATE INDEX endpoints_fifo ON endpoints (id) WHERE ordering = 'fifo';

CREATE TABLE events (
  id text COLLATE "C" PRIMARY KEY,
  tenant_id text COLLATE "C" NOT NULL,
  project_id text COLLATE "C" NOT NULL,
  type text NOT NULL,
  body text NOT NULL,
  occurred_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  targets text[] NOT NULL,
  fanout_pending boolean NOT NULL DEFAULT false,
  resource_id text COLLATE "C",
  recipient_key text COLLATE "C",
  sequence bigint NOT NULL
);
-- Recovery and the console: a project's events in a time window, oldest first.
CREATE INDEX events_scope_created ON events (tenant_id, project_id, created_at, id);
-- Retention: events arrive in time order, so a block range index finds the old ones for a few pages.
CREATE INDEX events_created_brin ON events USING brin (created_at);
-- Erasure (ADR 15): a subject's events by index. The scope is checked on the few rows found.
CREATE INDEX events_resource ON events (resource_id) WHERE resource_id IS NOT NULL;
CREATE INDEX events_recipient ON events (recipient_key) WHERE recipient_key IS NOT NULL;
-- The subject backfill (ADR 15) at every start: events stored without subject fields, none on this store, so
-- the index is empty and the start reads nothing rather than the whole table.
CREATE INDEX events_without_subjects ON events (id) WHERE resource_id IS NULL;
-- Events written by a version that stored the event before its deliveries (none on this store).
CREATE INDEX events_fanout_pending ON events (created_at) WHERE fanout_pending;

CREATE TABLE deliveries (
  id text COLLATE "C" PRIMARY KEY,
  tenant_id text COLLATE "C" NOT NULL,
  project_id text COLLATE "C" NOT NULL,
  webhook_id text COLLATE "C" NOT NULL,
  event_id text COLLATE "C" NOT NULL,
  event_type text NOT NULL,
  attempt integer NOT NULL,
  trigger text NOT NULL,
  status text NOT NULL,
  url text NOT NULL,
  response_status integer,
  response_body text,
  error text,
  duration_ms integer,
  scheduled_at timestamptz NOT NULL,
  attempted_at timestamptz,
  next_attempt_at timestamptz,
  created_at timestamptz NOT NULL,
  shard integer NOT NULL,
  erased_at timestamptz,
  sequence bigint NOT NULL
) WITH (fillfactor = 80);
-- An endpoint's deliveries newest first (the API's list), led by the scope so that the console can also
-- walk a project's endpoints through it (one probe each) and merge their newest rows, instead of reading
-- the project's rows (one project is often the whole table): no index of its own for project-wide lists.
CREATE INDEX deliveries_webhook_created ON deliveries (tenant_id, project_id, webhook_id, created_at DESC, id DESC);
-- The latest attempt of an event to an endpoint (manual retry, recovery), and erasure by event.
CREATE INDEX deliveries_event_webhook ON deliveries (event_id, webhook_id, attempt DESC);
-- Due work: only pending rows are in it, so it stays as small as the backlog.
CREATE INDEX deliveries_due ON deliveries (scheduled_at, shard) WHERE status = 'pending';
-- An endpoint's pending work in acceptance order: the head of a FIFO endpoint, counts, cancellation.
CREATE INDEX deliveries_webhook_pending ON deliveries (webhook_id, sequence, event_id) WHERE status = 'pending';
-- The console's attempts since a moment (health, charts, live view) and each endpoint's last success, per
-- (endpoint, status) newest first. Only attempted rows are in it: inserting a pending row adds no entry;
-- recording a result adds one (that update is never HOT, as it changes the status the partial indexes name).
CREATE INDEX deliveries_webhook_attempted ON deliveries (webhook_id, status, attempted_at DESC)
  WHERE attempted_at IS NOT NULL;
-- Retention, as for events.
CREATE INDEX deliveries_created_brin ON deliveries USING brin (created_at);

-- One generation of one shard's lease (ADR 9): the primary key makes "who holds generation n" atomic.
CREATE TABLE shard_leases (
  shard integer NOT NULL,
  generation integer NOT NULL,
  owner text COLLATE "C" NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (shard, generation)
);

CREATE TABLE processes (
  id text COLLATE "C" PRIMARY KEY,
  expires_at timestamptz NOT NULL
);

CREATE TABLE tokens (
  id text COLLATE "C" PRIMARY KEY,
  hash text COLLATE "C" NOT NULL UNIQUE,
  prefix text NOT NULL,
  tenant_id text COLLATE "C" NOT NULL,
  project_id text COLLATE "C" NOT NULL,
  name text,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz
);

CREATE TABLE idempotency_keys (
  scope_key text COLLATE "C" PRIMARY KEY,
  event_id text COLLATE "C" NOT NULL,
  fingerprint text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX idempotency_keys_event ON idempotency_keys (event_id);
CREATE INDEX idempotency_keys_created_brin ON idempotency_keys USING brin (created_at);

CREATE TABLE erasures (
  id text COLLATE "C" PRIMARY KEY,
  tenant_id text COLLATE "C" NOT NULL,
  project_id text COLLATE "C" NOT NULL,
  subject text NOT NULL,
  resource_id text COLLATE "C",
  events_erased integer NOT NULL,
  deliveries_erased integer NOT NULL,
  deliveries_cancelled integer NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX erasures_scope_created ON erasures (tenant_id, project_id, created_at DESC, id DESC);

CREATE TABLE project_settings (
  tenant_id text COLLATE "C" NOT NULL,
  project_id text COLLATE "C" NOT NULL,
  retention_ms bigint,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, project_id)
);

CREATE TABLE console_sessions (
  id text COLLATE "C" PRIMARY KEY,
  hash text COLLATE "C" NOT NULL UNIQUE,
  kind text NOT NULL,
  tenant_id text COLLATE "C" NOT NULL,
  project_id text COLLATE "C" NOT NULL,
  webhook_ids text[],
  csrf_token text NOT NULL,
  parent_id text COLLATE "C",
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);
