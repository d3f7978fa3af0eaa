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
CREATE TRIGGER IF NOT EXISTS halts_inserted AFTER INSERT ON halts BEGIN UPDATE changes SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS halts_updated AFTER UPDATE ON halts BEGIN UPDATE changes SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS halts_deleted AFTER DELETE ON halts BEGIN UPDATE changes SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS grants_inserted AFTER INSERT ON grants BEGIN UPDATE changes SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS grants_updated AFTER UPDATE ON grants BEGIN UPDATE changes SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS grants_deleted AFTER DELETE ON grants BEGIN UPDATE changes SET n = n + 1 WHERE id = 1; END;
