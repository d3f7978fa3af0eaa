-- A count of the changes to the halts and the grants, which a decision
-- reads: a process that keeps what it read (warden serve) checks the
-- count, one row, inside the transaction that records the decision, and
-- reads them again when it moved. It may run again (a test of an
-- upgrade from version 11 does).
CREATE TABLE IF NOT EXISTS changes (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n BIGINT NOT NULL DEFAULT 0
);
INSERT INTO changes (id, n) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;
CREATE OR REPLACE FUNCTION warden_changed() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	UPDATE changes SET n = n + 1 WHERE id = 1;
	RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS halts_changed ON halts;
CREATE TRIGGER halts_changed AFTER INSERT OR UPDATE OR DELETE ON halts FOR EACH STATEMENT EXECUTE FUNCTION warden_changed();
DROP TRIGGER IF EXISTS grants_changed ON grants;
CREATE TRIGGER grants_changed AFTER INSERT OR UPDATE OR DELETE ON grants FOR EACH STATEMENT EXECUTE FUNCTION warden_changed();
