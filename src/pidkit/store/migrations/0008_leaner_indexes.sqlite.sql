-- SQLite: see 0008_leaner_indexes.sql.  The triggers of migration 0006 name the tables, not their options,
-- and stay as they are.
DROP INDEX IF EXISTS bindings_by_update;
DROP TABLE bindings_words;
DROP TABLE bindings_grams;
CREATE VIRTUAL TABLE bindings_words USING fts5(doc, content='bindings_search_doc', content_rowid='rid', tokenize='unicode61 remove_diacritics 0', prefix='2 3', columnsize=0);
CREATE VIRTUAL TABLE bindings_grams USING fts5(target, content='bindings_search_doc', content_rowid='rid', tokenize='trigram', columnsize=0);
INSERT INTO bindings_words (rowid, doc) SELECT rid, doc FROM bindings_search_doc;
INSERT INTO bindings_grams (rowid, target) SELECT rid, target FROM bindings_search_doc;
