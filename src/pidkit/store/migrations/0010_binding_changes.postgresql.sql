-- PostgreSQL: see 0010_binding_changes.sql.
CREATE FUNCTION pidkit_bindings_changed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_notify('pidkit_bindings', TG_TABLE_SCHEMA); RETURN NULL; END $$;
CREATE TRIGGER bindings_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON bindings FOR EACH STATEMENT EXECUTE FUNCTION pidkit_bindings_changed();
