-- Emergency halts: a session's, or the project's (session '').
CREATE TABLE halts (
	session TEXT PRIMARY KEY,
	message TEXT NOT NULL DEFAULT '',
	by_whom TEXT NOT NULL DEFAULT '',
	at BIGINT NOT NULL DEFAULT 0
);
