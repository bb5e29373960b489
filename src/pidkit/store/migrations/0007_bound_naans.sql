-- Migration 0007: the NAANs under which the store holds an ARK binding (of any status), served or not
-- (an import may bind ARKs of another organisation's NAAN).  What a resolver keeps in memory to answer
-- an ARK of any other NAAN from the NAAN registry without reading the store (Store.bound_naans): a NAAN
-- is added, by a trigger, with the first binding under it, and never removed (nor is a NAAN from a
-- store), so the set only grows — a stale copy can only lack a NAAN, and the copy is read again when
-- the store says it changed (Store.naans_token).  The NAAN is taken from the key, the text a lookup
-- matches: 'ark:NAAN/…'.  Derived data: a dump does not carry it, a restore fills it by the trigger.
CREATE TABLE bound_naans (naan TEXT PRIMARY KEY);
