-- A call's outcome as the host's post-tool event reported it, found by the
-- host's id for the call (sequence rules: after.ok, repeat.failures).
ALTER TABLE audit ADD COLUMN tool_use TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN outcome TEXT NOT NULL DEFAULT '';
