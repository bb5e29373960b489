-- PostgreSQL: see 0014_recorded_changes.sql.
CREATE INDEX history_adopted ON history (kind, at, id COLLATE "C") WHERE id < '1';
