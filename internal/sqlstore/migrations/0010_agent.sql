-- Who sent a call (the agent token's name, for calls to warden serve).
ALTER TABLE audit ADD COLUMN agent TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN agent TEXT NOT NULL DEFAULT '';
