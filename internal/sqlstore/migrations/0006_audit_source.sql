-- The plain-language sentence a compiled rule came from (warden compile).
ALTER TABLE audit ADD COLUMN source TEXT NOT NULL DEFAULT '';
