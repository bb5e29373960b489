-- pidkit store schema, version 3: the persistence promise (issue 13).
-- * bindings: status 'unavailable' (withdrawn with a reason, reversible), the reason of that status, and
--   extra metadata elements beside the ERC (a JSON object of strings, keys sorted, written compact).
--   SQLite cannot change a CHECK constraint in place: the table is rebuilt (portable SQL, one transaction).
-- * history: one row per change, written in the same transaction as the change; append-only (triggers in
--   0003_history.sqlite.sql / 0003_history.postgresql.sql refuse UPDATE and DELETE).

CREATE TABLE bindings_v3 (
    kind              TEXT NOT NULL,
    key               TEXT NOT NULL,
    text              TEXT NOT NULL,
    target            TEXT,
    erc_who           TEXT NOT NULL DEFAULT '',
    erc_what          TEXT NOT NULL DEFAULT '',
    erc_when          TEXT NOT NULL DEFAULT '',
    erc_where         TEXT NOT NULL DEFAULT '',
    support_who       TEXT NOT NULL DEFAULT '',
    support_what      TEXT NOT NULL DEFAULT '',
    support_when      TEXT NOT NULL DEFAULT '',
    support_where     TEXT NOT NULL DEFAULT '',
    passthrough       INTEGER NOT NULL DEFAULT 0,
    status            TEXT NOT NULL CHECK (status IN ('public', 'reserved', 'unavailable', 'tombstoned')),
    naan              TEXT,
    shoulder          TEXT,
    tombstone_reason  TEXT,
    tombstoned_at     TEXT,
    reason            TEXT,
    extra             TEXT NOT NULL DEFAULT '{}',
    created           TEXT NOT NULL,
    updated           TEXT NOT NULL,
    PRIMARY KEY (kind, key)
);

INSERT INTO bindings_v3 (kind, key, text, target, erc_who, erc_what, erc_when, erc_where, support_who, support_what, support_when, support_where, passthrough, status, naan, shoulder, tombstone_reason, tombstoned_at, reason, extra, created, updated)
SELECT kind, key, text, target, erc_who, erc_what, erc_when, erc_where, support_who, support_what, support_when, support_where, passthrough, status, naan, shoulder, tombstone_reason, tombstoned_at, NULL, '{}', created, updated FROM bindings;

DROP TABLE bindings;

ALTER TABLE bindings_v3 RENAME TO bindings;

CREATE INDEX bindings_by_naan ON bindings (kind, naan, shoulder, key);

-- id: a TID (sortable by time, unique across processes); rows adopted by this migration use '0:KIND:KEY',
-- which sorts before every TID.  before / after: the fields a change changed, as JSON objects (NULL for
-- "did not exist" / "no longer exists").
CREATE TABLE history (
    id         TEXT PRIMARY KEY,
    at         TEXT NOT NULL,
    principal  TEXT NOT NULL,
    operation  TEXT NOT NULL,
    kind       TEXT NOT NULL,
    key        TEXT NOT NULL,
    before     TEXT,
    after      TEXT
);

-- (kind, key) only: an index entry must stay under PostgreSQL's btree limit (2704 bytes) for every key the
-- bindings' primary key takes; an id's few rows are sorted by (at, id) when read.
CREATE INDEX history_by_key ON history (kind, key);

-- Every binding made before history was kept gets one row: it existed, as the binding row shows, when the
-- store was upgraded.
INSERT INTO history (id, at, principal, operation, kind, key, before, after)
SELECT '0:' || kind || ':' || key, updated, 'system:migration-0003', 'adopt', kind, key, NULL, NULL FROM bindings;
