-- PostgreSQL: the words of an ARK binding (key, target, ERC and support elements, extra metadata values)
-- in a generated tsvector column with a GIN index.  Words are runs of letters and digits (everything else
-- is made a space first, so URLs and e-mail addresses split into words as SQLite's FTS5 splits them),
-- lower-cased by the 'simple' configuration (no stemming, no stop words, accents kept).  The column is
-- computed by PostgreSQL on every insert and update (adding it fills it for the rows there: the backfill);
-- a dump names its columns, so it never carries it.  Only the first 100,000 characters of a binding's
-- text are indexed: a tsvector holds at most 1 MB, and a write must never fail for its metadata's size.
CREATE FUNCTION pidkit_extra_text(extra text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT coalesce(string_agg(value, ' '), '') FROM json_each_text(extra::json) $$;
ALTER TABLE bindings ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, regexp_replace(left(key || ' ' || coalesce(target, '') || ' ' || erc_who || ' ' || erc_what || ' ' || erc_when || ' ' || erc_where || ' ' || support_who || ' ' || support_what || ' ' || support_when || ' ' || support_where || ' ' || pidkit_extra_text(extra), 100000), '[^[:alnum:]]+', ' ', 'g'))) STORED;
CREATE INDEX bindings_search ON bindings USING gin (search) WHERE kind = 'ark';
-- Keys in code point order (COLLATE "C", as SQLite's BINARY): the order of a Find by key, and key prefixes
-- as ranges, whatever the database's collation.
CREATE INDEX bindings_key_c ON bindings (kind, key COLLATE "C");
CREATE INDEX bindings_by_updated ON bindings (kind, updated, key COLLATE "C") INCLUDE (naan, shoulder, status);
CREATE INDEX bindings_by_created ON bindings (kind, created, key COLLATE "C") INCLUDE (naan, shoulder, status);
-- Target substrings (ILIKE '%…%'): a pg_trgm GIN index.  Creating the extension needs the privilege to
-- (a superuser, or a trusted extension and CREATE on the schema); when it cannot be created the store
-- works without the index (a target search then reads the ARK rows of the scope: slower, same answers)
-- and the migration says so in a WARNING.  The extension goes in schema public when made here, and the
-- operator class is named with the schema the extension is in (no '%' in this file: the driver reads it
-- as a placeholder).
DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN BEGIN CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public; EXCEPTION WHEN OTHERS THEN RAISE WARNING USING MESSAGE = 'pidkit: pg_trgm could not be created (' || SQLERRM || '): target searches are not indexed'; END; END IF; END $$;
DO $$ DECLARE ext_schema text; BEGIN SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'; IF ext_schema IS NOT NULL THEN EXECUTE 'CREATE INDEX bindings_target_grams ON bindings USING gin (target ' || quote_ident(ext_schema) || '.gin_trgm_ops) WHERE kind = ''ark'''; END IF; END $$;
