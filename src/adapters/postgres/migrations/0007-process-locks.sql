-- A process that keeps a session lock as its proof of life (ADR 25) says so in its heartbeat row; the
-- others then count it live only while that lock is held, and take its shards at once when it is not.
-- A process of an earlier version leaves this false and is counted live by its heartbeat alone, so a
-- rolling upgrade does not read the processes it replaces as dead while they still send.
ALTER TABLE processes ADD COLUMN locked boolean NOT NULL DEFAULT false;
