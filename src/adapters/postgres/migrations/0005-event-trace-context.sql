-- The W3C traceparent of the publish's fan-out span, kept with the event so that every attempt, however
-- much later and in whichever process, is a child span in the publish's trace (ADR 24). Null when the
-- publish was not traced (tracing off) and on every event stored before this migration.
-- A nullable column with no default: adding it rewrites nothing.

ALTER TABLE events ADD COLUMN traceparent text;
