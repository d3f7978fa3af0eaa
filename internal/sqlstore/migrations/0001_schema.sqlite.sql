-- The tables whose ids the database numbers (audit, history): the
-- column type differs between the databases.
CREATE TABLE audit (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	time BIGINT NOT NULL,
	session TEXT NOT NULL DEFAULT '',
	role TEXT NOT NULL DEFAULT '',
	host TEXT NOT NULL DEFAULT '',
	tool TEXT NOT NULL,
	depth INTEGER NOT NULL DEFAULT 0,
	args TEXT NOT NULL DEFAULT '{}',
	decision TEXT NOT NULL,
	code TEXT NOT NULL DEFAULT '',
	rule TEXT NOT NULL DEFAULT '',
	reason TEXT NOT NULL DEFAULT '',
	matched TEXT NOT NULL DEFAULT '[]',
	warnings TEXT NOT NULL DEFAULT '[]',
	grants TEXT NOT NULL DEFAULT '[]',
	approval TEXT NOT NULL DEFAULT '',
	mode TEXT NOT NULL DEFAULT '',
	enforced TEXT NOT NULL DEFAULT '',
	latency BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX audit_time ON audit (time);
CREATE INDEX audit_session ON audit (session);
CREATE TABLE history (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	time BIGINT NOT NULL,
	session TEXT NOT NULL DEFAULT '',
	agent TEXT NOT NULL DEFAULT '',
	action TEXT NOT NULL,
	result TEXT NOT NULL DEFAULT '',
	archived INTEGER NOT NULL DEFAULT 0
);
