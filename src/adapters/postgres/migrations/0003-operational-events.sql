-- Operational events (ADR 20): what an endpoint needs so that each disable and each failure streak is
-- reported once, by whichever process gets there, after any crash. disabled_at: when it was last disabled
-- (null while enabled; null on endpoints disabled before this migration, which are never reported).
-- failing_notice and disabled_notice: the failing_since / disabled_at whose event was published; null
-- while one is owed. Nullable columns with no default: adding them rewrites nothing.

ALTER TABLE endpoints
  ADD COLUMN disabled_at timestamptz,
  ADD COLUMN disabled_notice timestamptz,
  ADD COLUMN failing_notice timestamptz;

-- The reporting job's two reads: endpoints owing an event (few rows; none while all is well).
CREATE INDEX endpoints_failing_unreported ON endpoints (failing_since)
  WHERE enabled AND failing_since IS NOT NULL AND failing_notice IS NULL;
CREATE INDEX endpoints_disabled_unreported ON endpoints (disabled_at)
  WHERE NOT enabled AND disabled_at IS NOT NULL AND disabled_notice IS NULL;
