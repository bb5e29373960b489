-- Migration 0005: an index for Store.list_changed (OAI-PMH's incremental harvests and their paging).
-- list_changed reads ARK bindings WHERE kind = 'ark' AND updated in a range, past a keyset
-- (updated, key), ORDER BY updated, key: this index serves the filter and the order without a sort.
CREATE INDEX IF NOT EXISTS bindings_by_update ON bindings (kind, updated, key);
