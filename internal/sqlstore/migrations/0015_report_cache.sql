-- The response cache (reportcache.go, package reportgate): final reports
-- kept under the key of the request that produced them, and what the
-- cache keeps of each session's user requests. It may run again (a test of
-- an upgrade from version 11 does).
CREATE TABLE IF NOT EXISTS report_cache (
	cache_key TEXT PRIMARY KEY,
	request TEXT NOT NULL DEFAULT '',
	host TEXT NOT NULL DEFAULT '',
	role TEXT NOT NULL DEFAULT '',
	plugins TEXT NOT NULL DEFAULT '',
	final_report TEXT NOT NULL DEFAULT '',
	metas TEXT NOT NULL DEFAULT '',
	session TEXT NOT NULL DEFAULT '',
	hits INTEGER NOT NULL DEFAULT 0,
	last_hit BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS report_cache_created ON report_cache (created_at);
CREATE TABLE IF NOT EXISTS report_requests (
	session TEXT PRIMARY KEY,
	sum TEXT NOT NULL DEFAULT '',
	request TEXT NOT NULL DEFAULT '',
	prompts INTEGER NOT NULL DEFAULT 0,
	served TEXT NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL DEFAULT 0
);
