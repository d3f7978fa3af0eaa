-- One record per host call: a call retried after a crash (hookd
-- killed mid-call) is decided once.
ALTER TABLE audit ADD COLUMN call_id TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX audit_call ON audit (call_id) WHERE call_id <> '';
