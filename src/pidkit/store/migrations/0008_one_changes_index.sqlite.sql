-- SQLite: the older, narrower index goes (see 0008_one_changes_index.sql).
DROP INDEX IF EXISTS bindings_by_update;
