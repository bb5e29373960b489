-- SQLite: the words of an ARK binding (key, target, ERC and support elements, extra metadata values) in
-- an FTS5 index (unicode61: words are runs of letters and digits, case folded, accents kept; prefixes of 2
-- and 3 characters indexed too), and its target in a trigram FTS5 index (substrings of 3 or more
-- characters).  Both are external-content tables over the view bindings_search_doc (one row per ARK
-- binding, by the binding's rowid, which VACUUM keeps): triggers keep them in step with every insert,
-- update and delete (a restore drops the insert trigger in its transaction and fills them once at its
-- end: SqliteStore._bulk_insert); the last statements fill them for the rows there (the backfill).
-- The times are indexed with the key, the scope and the status (counting a date range reads no row).
CREATE VIEW bindings_search_doc AS SELECT rowid AS rid, key || ' ' || coalesce(target, '') || ' ' || erc_who || ' ' || erc_what || ' ' || erc_when || ' ' || erc_where || ' ' || support_who || ' ' || support_what || ' ' || support_when || ' ' || support_where || ' ' || CASE WHEN json_valid(extra) THEN coalesce((SELECT group_concat(value, ' ') FROM json_each(extra)), '') ELSE extra END AS doc, target FROM bindings WHERE kind = 'ark';
CREATE VIRTUAL TABLE bindings_words USING fts5(doc, content='bindings_search_doc', content_rowid='rid', tokenize='unicode61 remove_diacritics 0', prefix='2 3');
CREATE VIRTUAL TABLE bindings_grams USING fts5(target, content='bindings_search_doc', content_rowid='rid', tokenize='trigram');
CREATE INDEX bindings_by_updated ON bindings (kind, updated, key, naan, shoulder, status);
CREATE INDEX bindings_by_created ON bindings (kind, created, key, naan, shoulder, status);
CREATE TRIGGER bindings_search_insert AFTER INSERT ON bindings WHEN new.kind = 'ark' BEGIN INSERT INTO bindings_words (rowid, doc) SELECT rid, doc FROM bindings_search_doc WHERE rid = new.rowid; INSERT INTO bindings_grams (rowid, target) VALUES (new.rowid, new.target); END;
CREATE TRIGGER bindings_search_delete BEFORE DELETE ON bindings WHEN old.kind = 'ark' BEGIN INSERT INTO bindings_words (bindings_words, rowid, doc) SELECT 'delete', rid, doc FROM bindings_search_doc WHERE rid = old.rowid; INSERT INTO bindings_grams (bindings_grams, rowid, target) VALUES ('delete', old.rowid, old.target); END;
CREATE TRIGGER bindings_search_unindex BEFORE UPDATE OF key, target, erc_who, erc_what, erc_when, erc_where, support_who, support_what, support_when, support_where, extra ON bindings WHEN old.kind = 'ark' BEGIN INSERT INTO bindings_words (bindings_words, rowid, doc) SELECT 'delete', rid, doc FROM bindings_search_doc WHERE rid = old.rowid; INSERT INTO bindings_grams (bindings_grams, rowid, target) VALUES ('delete', old.rowid, old.target); END;
CREATE TRIGGER bindings_search_reindex AFTER UPDATE OF key, target, erc_who, erc_what, erc_when, erc_where, support_who, support_what, support_when, support_where, extra ON bindings WHEN new.kind = 'ark' BEGIN INSERT INTO bindings_words (rowid, doc) SELECT rid, doc FROM bindings_search_doc WHERE rid = new.rowid; INSERT INTO bindings_grams (rowid, target) VALUES (new.rowid, new.target); END;
-- The backfill.  Not FTS5's 'rebuild' (it reads the view from inside FTS5, where json_each is refused):
-- to refill, 'delete-all' then these two statements.
INSERT INTO bindings_words (rowid, doc) SELECT rid, doc FROM bindings_search_doc;
INSERT INTO bindings_grams (rowid, target) SELECT rid, target FROM bindings_search_doc;
