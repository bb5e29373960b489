-- SQLite: see 0014_recorded_changes.sql.
CREATE INDEX history_adopted ON history (kind, at, id) WHERE id < '1';
