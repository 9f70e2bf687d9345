-- Every change to an endpoint or a token is announced on the channel herald_cache (payload: the table's
-- name) when its transaction commits, so that each Herald process drops what it cached of that table
-- (src/adapters/postgres/cache.ts, ADR 18). Row triggers fire only for rows a statement changed: the
-- engine's streak updates that match no row (most of them) announce nothing. NOTIFY folds identical
-- payloads of one transaction into one.
CREATE FUNCTION herald_announce_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('herald_cache', TG_TABLE_NAME);
  RETURN NULL;
END
$$;
CREATE TRIGGER endpoints_changed AFTER INSERT OR UPDATE OR DELETE ON endpoints
  FOR EACH ROW EXECUTE FUNCTION herald_announce_change();
CREATE TRIGGER endpoints_truncated AFTER TRUNCATE ON endpoints
  FOR EACH STATEMENT EXECUTE FUNCTION herald_announce_change();
CREATE TRIGGER tokens_changed AFTER INSERT OR UPDATE OR DELETE ON tokens
  FOR EACH ROW EXECUTE FUNCTION herald_announce_change();
CREATE TRIGGER tokens_truncated AFTER TRUNCATE ON tokens
  FOR EACH STATEMENT EXECUTE FUNCTION herald_announce_change();
