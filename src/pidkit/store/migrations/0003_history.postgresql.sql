-- PostgreSQL: history rows are never changed, deleted nor truncated.
CREATE FUNCTION pidkit_history_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION USING MESSAGE = 'history is append-only: ' || TG_OP || ' refused', ERRCODE = 'insufficient_privilege'; END $$;
CREATE TRIGGER history_no_change BEFORE UPDATE OR DELETE OR TRUNCATE ON history FOR EACH STATEMENT EXECUTE FUNCTION pidkit_history_append_only();
