-- PostgreSQL: a statement trigger (one per INSERT or COPY, over its new rows) that adds the bindings'
-- NAANs and, when one is new, tells every listening resolver (NOTIFY pidkit_naans with the store's schema:
-- a channel is the database's, and other stores may share the database; delivered at commit:
-- PostgresStore.naans_token); a NAAN added to the store tells them too; then the NAANs of the bindings
-- there (the backfill).
CREATE FUNCTION pidkit_bound_naans() RETURNS trigger LANGUAGE plpgsql AS $$ DECLARE added integer; BEGIN INSERT INTO bound_naans (naan) SELECT DISTINCT split_part(substr(key, 5), '/', 1) FROM new_bindings WHERE kind = 'ark' ON CONFLICT DO NOTHING; GET DIAGNOSTICS added = ROW_COUNT; IF added > 0 THEN PERFORM pg_notify('pidkit_naans', TG_TABLE_SCHEMA); END IF; RETURN NULL; END $$;
CREATE TRIGGER bindings_bound_naans AFTER INSERT ON bindings REFERENCING NEW TABLE AS new_bindings FOR EACH STATEMENT EXECUTE FUNCTION pidkit_bound_naans();
CREATE FUNCTION pidkit_naan_added() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_notify('pidkit_naans', TG_TABLE_SCHEMA); RETURN NULL; END $$;
CREATE TRIGGER naans_added AFTER INSERT ON naans FOR EACH STATEMENT EXECUTE FUNCTION pidkit_naan_added();
INSERT INTO bound_naans (naan) SELECT DISTINCT split_part(substr(key, 5), '/', 1) FROM bindings WHERE kind = 'ark' ON CONFLICT DO NOTHING;
