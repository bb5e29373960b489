-- pidkit store schema, version 6: the back office's Find on a large store (issue 14).
-- * Sorting and date ranges on the times: an index per time, the key last (the tie-break of a page).
-- * The full-text index is the backend's own (0006_search.sqlite.sql: FTS5 tables kept in step by
--   triggers; 0006_search.postgresql.sql: a generated tsvector column, pg_trgm for target substrings).
--   Neither is a table a dump carries: a restore fills it as it inserts the bindings.
CREATE INDEX bindings_by_updated ON bindings (kind, updated, key);
CREATE INDEX bindings_by_created ON bindings (kind, created, key);
