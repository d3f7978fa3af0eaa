-- Grants' values and approvals' parts and summaries that hold a secret are
-- kept redacted, with a hash of the exact value (warden.RedactExact): the
-- rows an older warden wrote are rewritten by the Go step of this version
-- (redactAtRest, internal/sqlstore/atrest.go). No change to the schema.
UPDATE grants SET value = value WHERE 1 = 0;
