-- The sessions' final reports (reports.go, package reportgate): one row
-- per session held to the report contract.
CREATE TABLE reports (
	session TEXT PRIMARY KEY,
	nonce TEXT NOT NULL DEFAULT '',
	status TEXT NOT NULL DEFAULT '',
	turns INTEGER NOT NULL DEFAULT 0,
	retries INTEGER NOT NULL DEFAULT 0,
	final_report TEXT NOT NULL DEFAULT '',
	metas TEXT NOT NULL DEFAULT '',
	problem TEXT NOT NULL DEFAULT '',
	completed INTEGER NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL DEFAULT 0,
	updated_at BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX reports_updated ON reports (updated_at);
