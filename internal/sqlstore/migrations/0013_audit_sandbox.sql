-- The confinement of a shell call (issue 30): its sandbox settings, and
-- whether it ran confined and under what the kernel enforces; JSON, ''
-- for a call that was not confined.
ALTER TABLE audit ADD COLUMN sandbox TEXT NOT NULL DEFAULT '';
