-- A session belongs to the agent that opened it (the agent token's name
-- for warden serve; '' for the local hooks): no other agent decides in it.
ALTER TABLE sessions ADD COLUMN agent TEXT NOT NULL DEFAULT '';
-- A call id answers only the call it was given for: the digest of that
-- call (its tool and arguments, salted with the id), kept with its record.
ALTER TABLE audit ADD COLUMN call_sum TEXT NOT NULL DEFAULT '';
-- Halts of an agent token (agent set, session '') beside a session's and
-- the project's (agent ''): the key is the pair.
CREATE TABLE halts_by_agent (
	agent TEXT NOT NULL DEFAULT '',
	session TEXT NOT NULL DEFAULT '',
	message TEXT NOT NULL DEFAULT '',
	by_whom TEXT NOT NULL DEFAULT '',
	at BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (agent, session)
);
INSERT INTO halts_by_agent (agent, session, message, by_whom, at) SELECT '', session, message, by_whom, at FROM halts;
DROP TABLE halts;
ALTER TABLE halts_by_agent RENAME TO halts;
