CREATE TABLE fixture_v5.anchors (
    id text NOT NULL,
    priority text NOT NULL,
    content text NOT NULL,
    created_at bigint NOT NULL,
    demoted_at bigint DEFAULT 0 NOT NULL
);
CREATE TABLE fixture_v5.approvals (
    id text NOT NULL,
    session text DEFAULT ''::text NOT NULL,
    role text DEFAULT ''::text NOT NULL,
    host text DEFAULT ''::text NOT NULL,
    tool text NOT NULL,
    args text DEFAULT '{}'::text NOT NULL,
    summary text DEFAULT ''::text NOT NULL,
    code text DEFAULT ''::text NOT NULL,
    rule text DEFAULT ''::text NOT NULL,
    reason text DEFAULT ''::text NOT NULL,
    parts text DEFAULT '[]'::text NOT NULL,
    fingerprint text DEFAULT ''::text NOT NULL,
    status text NOT NULL,
    scope text DEFAULT ''::text NOT NULL,
    message text DEFAULT ''::text NOT NULL,
    decided_by text DEFAULT ''::text NOT NULL,
    created_at bigint NOT NULL,
    decided_at bigint DEFAULT 0 NOT NULL,
    grants text DEFAULT '[]'::text NOT NULL,
    consumed integer DEFAULT 0 NOT NULL
);
CREATE TABLE fixture_v5.audit (
    id bigint NOT NULL,
    "time" bigint NOT NULL,
    session text DEFAULT ''::text NOT NULL,
    role text DEFAULT ''::text NOT NULL,
    host text DEFAULT ''::text NOT NULL,
    tool text NOT NULL,
    depth integer DEFAULT 0 NOT NULL,
    args text DEFAULT '{}'::text NOT NULL,
    decision text NOT NULL,
    code text DEFAULT ''::text NOT NULL,
    rule text DEFAULT ''::text NOT NULL,
    reason text DEFAULT ''::text NOT NULL,
    matched text DEFAULT '[]'::text NOT NULL,
    warnings text DEFAULT '[]'::text NOT NULL,
    grants text DEFAULT '[]'::text NOT NULL,
    approval text DEFAULT ''::text NOT NULL,
    mode text DEFAULT ''::text NOT NULL,
    enforced text DEFAULT ''::text NOT NULL,
    latency bigint DEFAULT 0 NOT NULL,
    call_id text DEFAULT ''::text NOT NULL
);
CREATE SEQUENCE fixture_v5.audit_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;
ALTER SEQUENCE fixture_v5.audit_id_seq OWNED BY fixture_v5.audit.id;
CREATE TABLE fixture_v5.grants (
    id text NOT NULL,
    tool text NOT NULL,
    role text DEFAULT ''::text NOT NULL,
    session text DEFAULT ''::text NOT NULL,
    subject text NOT NULL,
    value text DEFAULT ''::text NOT NULL,
    pattern text DEFAULT ''::text NOT NULL,
    expires bigint DEFAULT 0 NOT NULL,
    uses_left integer DEFAULT '-1'::integer NOT NULL,
    created_at bigint NOT NULL,
    created_by text DEFAULT ''::text NOT NULL,
    approval text DEFAULT ''::text NOT NULL,
    revoked_at bigint DEFAULT 0 NOT NULL
);
CREATE TABLE fixture_v5.halts (
    session text NOT NULL,
    message text DEFAULT ''::text NOT NULL,
    by_whom text DEFAULT ''::text NOT NULL,
    at bigint DEFAULT 0 NOT NULL
);
CREATE TABLE fixture_v5.history (
    id bigint NOT NULL,
    "time" bigint NOT NULL,
    session text DEFAULT ''::text NOT NULL,
    agent text DEFAULT ''::text NOT NULL,
    action text NOT NULL,
    result text DEFAULT ''::text NOT NULL,
    archived integer DEFAULT 0 NOT NULL
);
CREATE SEQUENCE fixture_v5.history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;
ALTER SEQUENCE fixture_v5.history_id_seq OWNED BY fixture_v5.history.id;
CREATE TABLE fixture_v5.sessions (
    id text NOT NULL,
    role text DEFAULT ''::text NOT NULL,
    host text DEFAULT ''::text NOT NULL,
    parent text DEFAULT ''::text NOT NULL,
    depth integer DEFAULT 0 NOT NULL,
    first_tool text DEFAULT ''::text NOT NULL,
    calls integer DEFAULT 0 NOT NULL,
    violations integer DEFAULT 0 NOT NULL,
    governance integer DEFAULT 0 NOT NULL,
    compactions integer DEFAULT 0 NOT NULL,
    resumes integer DEFAULT 0 NOT NULL,
    intent_id text DEFAULT ''::text NOT NULL,
    intent text DEFAULT ''::text NOT NULL,
    status text DEFAULT ''::text NOT NULL,
    started_at bigint DEFAULT 0 NOT NULL,
    last_seen bigint DEFAULT 0 NOT NULL,
    ended_at bigint DEFAULT 0 NOT NULL,
    archived integer DEFAULT 0 NOT NULL
);
CREATE TABLE fixture_v5.state (
    id integer NOT NULL,
    phase text DEFAULT ''::text NOT NULL,
    updated_at bigint DEFAULT 0 NOT NULL
);
CREATE TABLE fixture_v5.warden_schema (
    version integer NOT NULL
);
ALTER TABLE ONLY fixture_v5.audit ALTER COLUMN id SET DEFAULT nextval('fixture_v5.audit_id_seq'::regclass);
ALTER TABLE ONLY fixture_v5.history ALTER COLUMN id SET DEFAULT nextval('fixture_v5.history_id_seq'::regclass);
INSERT INTO fixture_v5.anchors VALUES ('n-old', 'high', 'never push to main', 1767323045000000, 0);
INSERT INTO fixture_v5.approvals VALUES ('a-059539e165', 's-old', '', '', 'Bash', '{"command":"rm -rf build; echo '';''"}', 'rm', '', '', '', 'null', 'fp-1', 'pending', '', '', '', 1767323045000000, 0, '[]', 0);
INSERT INTO fixture_v5.approvals VALUES ('a-0011f5fe17', 's-old', '', '', 'Write', '{"file_path":"a.go"}', '', '', '', '', 'null', 'fp-2', 'pending', '', '', '', 1767323045000000, 0, '[]', 0);
INSERT INTO fixture_v5.audit VALUES (1, 1767323045000000, 's-old', 'dev', 'claude', 'Bash', 0, '{"command":"ls; pwd"}', 'deny', 'DENY_RULE', 'no-ls', 'listing; not allowed', '[]', '[]', '[]', '', '', '', 0, 'call-1');
INSERT INTO fixture_v5.grants VALUES ('g-old', 'Bash', '', 's-old', 'command', 'make test', '', 0, -1, 1767323045000000, '', '', 0);
INSERT INTO fixture_v5.halts VALUES ('s-old', 'stop; now', 'ops', 1767323045000000);
INSERT INTO fixture_v5.history VALUES (1, 1767323045000000, 's-old', 'dev', 'edit', 'ok', 0);
INSERT INTO fixture_v5.sessions VALUES ('s-old', 'dev', 'claude', '', 0, '', 3, 0, 0, 0, 0, '', 'fix the build; then test', '', 1767323045000000, 1767323045000000, 0, 0);
INSERT INTO fixture_v5.state VALUES (1, 'build', 1767323045000000);
INSERT INTO fixture_v5.warden_schema VALUES (1);
INSERT INTO fixture_v5.warden_schema VALUES (2);
INSERT INTO fixture_v5.warden_schema VALUES (3);
INSERT INTO fixture_v5.warden_schema VALUES (4);
INSERT INTO fixture_v5.warden_schema VALUES (5);
SELECT pg_catalog.setval('fixture_v5.audit_id_seq', 1, true);
SELECT pg_catalog.setval('fixture_v5.history_id_seq', 1, true);
ALTER TABLE ONLY fixture_v5.anchors
    ADD CONSTRAINT anchors_pkey PRIMARY KEY (id);
ALTER TABLE ONLY fixture_v5.approvals
    ADD CONSTRAINT approvals_pkey PRIMARY KEY (id);
ALTER TABLE ONLY fixture_v5.audit
    ADD CONSTRAINT audit_pkey PRIMARY KEY (id);
ALTER TABLE ONLY fixture_v5.grants
    ADD CONSTRAINT grants_pkey PRIMARY KEY (id);
ALTER TABLE ONLY fixture_v5.halts
    ADD CONSTRAINT halts_pkey PRIMARY KEY (session);
ALTER TABLE ONLY fixture_v5.history
    ADD CONSTRAINT history_pkey PRIMARY KEY (id);
ALTER TABLE ONLY fixture_v5.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);
ALTER TABLE ONLY fixture_v5.state
    ADD CONSTRAINT state_pkey PRIMARY KEY (id);
CREATE INDEX approvals_fingerprint ON fixture_v5.approvals USING btree (fingerprint);
CREATE UNIQUE INDEX approvals_pending_fingerprint ON fixture_v5.approvals USING btree (fingerprint) WHERE ((status = 'pending'::text) AND (fingerprint <> ''::text));
CREATE INDEX approvals_status ON fixture_v5.approvals USING btree (status);
CREATE UNIQUE INDEX audit_call ON fixture_v5.audit USING btree (call_id) WHERE (call_id <> ''::text);
CREATE INDEX audit_session ON fixture_v5.audit USING btree (session);
CREATE INDEX audit_time ON fixture_v5.audit USING btree ("time");
CREATE INDEX history_live ON fixture_v5.history USING btree (archived, id);
CREATE INDEX sessions_last_seen ON fixture_v5.sessions USING btree (last_seen);
