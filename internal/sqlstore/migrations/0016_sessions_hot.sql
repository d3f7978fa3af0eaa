-- A decision updates its session's row (calls, last_seen). An index on
-- last_seen made every such update write a new entry in each of the
-- table's indexes, and kept PostgreSQL from a HOT update (the new version
-- on the same page, no index entry): a busy session left thousands of
-- dead versions its next lookups walked through. The two queries that
-- used the index (`warden sessions`, ordered by last_seen, and the
-- archive of sessions not seen since a time) read the whole table
-- instead, which holds one row a session.
DROP INDEX IF EXISTS sessions_last_seen;
