-- A process that keeps a session lock as its proof of life (ADR 25) writes the lock's key in its
-- heartbeat row; the others count it live only while that lock is held, and take its shards at once
-- when it is not. A new key is taken whenever the lock had to be taken again, so a stale session of the
-- same process (left behind by a silent network, still holding the old key) cannot keep it looking
-- alive nor keep it from proving itself again. A process of an earlier version leaves the key null and
-- is counted live by its heartbeat alone, so a rolling upgrade does not read the processes it replaces
-- as dead while they still send.
ALTER TABLE processes ADD COLUMN lock_key bigint;
