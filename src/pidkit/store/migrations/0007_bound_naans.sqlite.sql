-- SQLite: the trigger that adds a binding's NAAN, and the NAANs of the bindings there (the backfill).
CREATE TRIGGER bindings_bound_naan AFTER INSERT ON bindings WHEN new.kind = 'ark' BEGIN INSERT OR IGNORE INTO bound_naans (naan) VALUES (CASE WHEN instr(substr(new.key, 5), '/') > 0 THEN substr(new.key, 5, instr(substr(new.key, 5), '/') - 1) ELSE substr(new.key, 5) END); END;
INSERT OR IGNORE INTO bound_naans (naan) SELECT DISTINCT CASE WHEN instr(substr(key, 5), '/') > 0 THEN substr(key, 5, instr(substr(key, 5), '/') - 1) ELSE substr(key, 5) END FROM bindings WHERE kind = 'ark';
