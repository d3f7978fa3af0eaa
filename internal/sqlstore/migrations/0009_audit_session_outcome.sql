-- The sequence rules read the ids and outcomes of a session's latest
-- records on every decision (Store.Recent): with them in the session's
-- index, that read is the index alone, not a lookup of every record.
DROP INDEX audit_session;
CREATE INDEX audit_session ON audit (session, id, outcome);
