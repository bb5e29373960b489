-- pidkit store schema, version 1.  Portable SQL: runs unchanged on SQLite (>= 3.35) and PostgreSQL.
-- Timestamps are ISO 8601 UTC text ("2024-05-01T12:00:00.000000Z"); booleans are 0/1 integers.

CREATE TABLE naans (
    naan     TEXT PRIMARY KEY,
    name     TEXT NOT NULL,
    created  TEXT NOT NULL
);

CREATE TABLE shoulders (
    naan      TEXT NOT NULL REFERENCES naans (naan),
    shoulder  TEXT NOT NULL,
    created   TEXT NOT NULL,
    PRIMARY KEY (naan, shoulder)
);

-- A minter's state is (template, naan, seed, counter): counter is the next position to mint.
CREATE TABLE minters (
    name      TEXT PRIMARY KEY,
    naan      TEXT NOT NULL REFERENCES naans (naan),
    template  TEXT NOT NULL,
    seed      BIGINT NOT NULL,
    counter   BIGINT NOT NULL DEFAULT 0 CHECK (counter >= 0),
    created   TEXT NOT NULL
);

-- Every id ever minted, once per NAAN: the guarantee "never minted twice" is this primary key.
CREATE TABLE minted (
    naan       TEXT NOT NULL,
    id         TEXT NOT NULL,
    minter     TEXT NOT NULL,
    position   BIGINT NOT NULL,
    minted_at  TEXT NOT NULL,
    PRIMARY KEY (naan, id)
);

CREATE INDEX minted_by_minter ON minted (minter, position);

-- Ids that must never be minted.
CREATE TABLE holds (
    naan     TEXT NOT NULL,
    id       TEXT NOT NULL,
    created  TEXT NOT NULL,
    PRIMARY KEY (naan, id)
);

-- Bindings of any id kind; key is the canonical (for ARKs: normalized) form, text the form given.
CREATE TABLE bindings (
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
    status            TEXT NOT NULL CHECK (status IN ('public', 'reserved', 'tombstoned')),
    naan              TEXT,
    shoulder          TEXT,
    tombstone_reason  TEXT,
    tombstoned_at     TEXT,
    created           TEXT NOT NULL,
    updated           TEXT NOT NULL,
    PRIMARY KEY (kind, key)
);

CREATE INDEX bindings_by_naan ON bindings (kind, naan, shoulder, key);

-- API keys: only the SHA-256 of the secret is stored.
CREATE TABLE api_keys (
    key_id       TEXT PRIMARY KEY,
    secret_hash  TEXT NOT NULL,
    naan         TEXT NOT NULL,
    shoulder     TEXT,
    label        TEXT NOT NULL,
    created      TEXT NOT NULL,
    revoked_at   TEXT
);
