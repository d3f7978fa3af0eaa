-- At most one pending approval per call: concurrent hook processes
-- asking for the same call share one approval.
UPDATE approvals SET fingerprint = fingerprint || ':' || id WHERE status = 'pending' AND fingerprint <> ''
	AND id NOT IN (SELECT MIN(id) FROM approvals WHERE status = 'pending' AND fingerprint <> '' GROUP BY fingerprint);
CREATE UNIQUE INDEX approvals_pending_fingerprint ON approvals (fingerprint) WHERE status = 'pending' AND fingerprint <> '';
