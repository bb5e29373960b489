-- PostgreSQL: see 0009_code_point_order.sql.
DROP INDEX IF EXISTS bindings_by_update;
DROP INDEX bindings_by_naan;
CREATE INDEX bindings_by_naan ON bindings (kind, naan, shoulder, key COLLATE "C");
