-- Migration 0014: the order in which the store recorded its changes, for harvesters (OAI-PMH).
-- Store.list_recorded lists ARK bindings by their newest history row: a binding's datestamp is when its
-- last change reached this store, not its `updated` (which an import of export lines, a merge restore
-- and the importers keep as the source gave it, so that an incremental harvest past that time never saw
-- the binding).  Rows with a TID id are read in the order of the primary key, which is their time.  The
-- rows migration 3 wrote for the bindings of an older store ('0:KIND:KEY', no TID) are read by `at`
-- through this index: it holds those rows alone (every id below '1'; a TID begins with 2 … b), so no
-- change written since costs an entry in it.
CREATE INDEX history_adopted ON history (kind, at, id) WHERE id < '1';
