-- pidkit store schema, version 2: bindings made with --force, and the rule each one overrode
-- (a NAAN not registered in the store, a wrong NOID check character).  Append-only.
CREATE TABLE overrides (
    kind    TEXT NOT NULL,
    key     TEXT NOT NULL,
    reason  TEXT NOT NULL,
    at      TEXT NOT NULL,
    PRIMARY KEY (kind, key, at)
);
