-- Trimming the live history after each violation reads this index
-- instead of the whole table.
CREATE INDEX history_live ON history (archived, id);
