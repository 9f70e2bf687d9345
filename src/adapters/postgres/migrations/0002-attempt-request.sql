-- What an attempt was sent with, kept on its record so the console shows the request as it was sent rather
-- than under the endpoint's current settings: the signature scheme, and the custom header names (never their
-- values). Null before a send, and on every record written before this migration (the console says so).
-- Nullable columns with no default: adding them rewrites nothing.

ALTER TABLE deliveries
  ADD COLUMN signature_scheme text,
  ADD COLUMN header_names text[];
