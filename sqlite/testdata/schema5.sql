PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE warden_schema (version INTEGER NOT NULL);
INSERT INTO warden_schema VALUES(1);
INSERT INTO warden_schema VALUES(2);
INSERT INTO warden_schema VALUES(3);
INSERT INTO warden_schema VALUES(4);
INSERT INTO warden_schema VALUES(5);
CREATE TABLE sessions (
		id TEXT PRIMARY KEY,
		role TEXT NOT NULL DEFAULT '',
		host TEXT NOT NULL DEFAULT '',
		parent TEXT NOT NULL DEFAULT '',
		depth INTEGER NOT NULL DEFAULT 0,
		first_tool TEXT NOT NULL DEFAULT '',
		calls INTEGER NOT NULL DEFAULT 0,
		violations INTEGER NOT NULL DEFAULT 0,
		governance INTEGER NOT NULL DEFAULT 0,
		compactions INTEGER NOT NULL DEFAULT 0,
		resumes INTEGER NOT NULL DEFAULT 0,
		intent_id TEXT NOT NULL DEFAULT '',
		intent TEXT NOT NULL DEFAULT '',
		status TEXT NOT NULL DEFAULT '',
		started_at BIGINT NOT NULL DEFAULT 0,
		last_seen BIGINT NOT NULL DEFAULT 0,
		ended_at BIGINT NOT NULL DEFAULT 0,
		archived INTEGER NOT NULL DEFAULT 0
	);
INSERT INTO sessions VALUES('s-old','dev','claude','',0,'',3,0,0,0,0,'','fix the build; then test','',1767323045000000,1767323045000000,0,0);
CREATE TABLE grants (
		id TEXT PRIMARY KEY,
		tool TEXT NOT NULL,
		role TEXT NOT NULL DEFAULT '',
		session TEXT NOT NULL DEFAULT '',
		subject TEXT NOT NULL,
		value TEXT NOT NULL DEFAULT '',
		pattern TEXT NOT NULL DEFAULT '',
		expires BIGINT NOT NULL DEFAULT 0,
		uses_left INTEGER NOT NULL DEFAULT -1,
		created_at BIGINT NOT NULL,
		created_by TEXT NOT NULL DEFAULT '',
		approval TEXT NOT NULL DEFAULT '',
		revoked_at BIGINT NOT NULL DEFAULT 0
	);
INSERT INTO grants VALUES('g-old','Bash','','s-old','command','make test','',0,-1,1767323045000000,'','',0);
CREATE TABLE approvals (
		id TEXT PRIMARY KEY,
		session TEXT NOT NULL DEFAULT '',
		role TEXT NOT NULL DEFAULT '',
		host TEXT NOT NULL DEFAULT '',
		tool TEXT NOT NULL,
		args TEXT NOT NULL DEFAULT '{}',
		summary TEXT NOT NULL DEFAULT '',
		code TEXT NOT NULL DEFAULT '',
		rule TEXT NOT NULL DEFAULT '',
		reason TEXT NOT NULL DEFAULT '',
		parts TEXT NOT NULL DEFAULT '[]',
		fingerprint TEXT NOT NULL DEFAULT '',
		status TEXT NOT NULL,
		scope TEXT NOT NULL DEFAULT '',
		message TEXT NOT NULL DEFAULT '',
		decided_by TEXT NOT NULL DEFAULT '',
		created_at BIGINT NOT NULL,
		decided_at BIGINT NOT NULL DEFAULT 0,
		grants TEXT NOT NULL DEFAULT '[]',
		consumed INTEGER NOT NULL DEFAULT 0
	);
INSERT INTO approvals VALUES('a-96e87d362e','s-old','','','Bash','{"command":"rm -rf build; echo '';''"}','rm','','','','null','fp-1','pending','','','',1767323045000000,0,'[]',0);
INSERT INTO approvals VALUES('a-f3a89f841c','s-old','','','Write','{"file_path":"a.go"}','','','','','null','fp-2','pending','','','',1767323045000000,0,'[]',0);
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
	, call_id TEXT NOT NULL DEFAULT '');
INSERT INTO audit VALUES(1,1767323045000000,'s-old','dev','claude','Bash',0,'{"command":"ls; pwd"}','deny','DENY_RULE','no-ls','listing; not allowed','[]','[]','[]','','','',0,'call-1');
CREATE TABLE state (
		id INTEGER PRIMARY KEY,
		phase TEXT NOT NULL DEFAULT '',
		updated_at BIGINT NOT NULL DEFAULT 0
	);
INSERT INTO state VALUES(1,'build',1767323045000000);
CREATE TABLE anchors (
		id TEXT PRIMARY KEY,
		priority TEXT NOT NULL,
		content TEXT NOT NULL,
		created_at BIGINT NOT NULL,
		demoted_at BIGINT NOT NULL DEFAULT 0
	);
INSERT INTO anchors VALUES('n-old','high','never push to main',1767323045000000,0);
CREATE TABLE history (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		time BIGINT NOT NULL,
		session TEXT NOT NULL DEFAULT '',
		agent TEXT NOT NULL DEFAULT '',
		action TEXT NOT NULL,
		result TEXT NOT NULL DEFAULT '',
		archived INTEGER NOT NULL DEFAULT 0
	);
INSERT INTO history VALUES(1,1767323045000000,'s-old','dev','edit','ok',0);
CREATE TABLE halts (
		session TEXT PRIMARY KEY,
		message TEXT NOT NULL DEFAULT '',
		by_whom TEXT NOT NULL DEFAULT '',
		at BIGINT NOT NULL DEFAULT 0
	);
INSERT INTO halts VALUES('s-old','stop; now','ops',1767323045000000);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('history',1);
INSERT INTO sqlite_sequence VALUES('audit',1);
CREATE INDEX sessions_last_seen ON sessions (last_seen);
CREATE INDEX approvals_status ON approvals (status);
CREATE INDEX approvals_fingerprint ON approvals (fingerprint);
CREATE INDEX audit_time ON audit (time);
CREATE INDEX audit_session ON audit (session);
CREATE UNIQUE INDEX approvals_pending_fingerprint ON approvals (fingerprint) WHERE status = 'pending' AND fingerprint <> '';
CREATE INDEX history_live ON history (archived, id);
CREATE UNIQUE INDEX audit_call ON audit (call_id) WHERE call_id <> '';
COMMIT;
