-- pidkit store schema, version 4: the back office's accounts (issue 14).
-- * users: people who sign in; the password is kept only as its Argon2id hash (PHC string).  A user's
--   scope is a NAAN, optionally one shoulder of it, or everything (admin), as an API key's.
-- * sessions: signed-in sessions; id is the SHA-256 of the cookie's token (the token itself is never
--   stored), csrf the session's CSRF token.  Revoked by sign-out, "sign out everywhere", or disabling
--   the user; expired ones are refused.  Not in a dump (credentials that expire).
-- * signin_failures: failed sign-ins per account ('user:NAME') and per address ('addr:IP'), so that
--   every worker and instance on the store applies one rate limit.  Not in a dump.
-- * service_secrets: keys the service makes for itself (the session cookies' HMAC key), shared by every
--   worker and instance on the store.  Never in a dump (secrets).
-- * api_keys.owner: the user who created the key (NULL: a local command).

CREATE TABLE users (
    name           TEXT PRIMARY KEY,
    password_hash  TEXT NOT NULL,
    naan           TEXT NOT NULL,
    shoulder       TEXT,
    admin          INTEGER NOT NULL DEFAULT 0,
    created        TEXT NOT NULL,
    disabled_at    TEXT
);

CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    user_name   TEXT NOT NULL REFERENCES users (name),
    csrf        TEXT NOT NULL,
    created     TEXT NOT NULL,
    expires     TEXT NOT NULL,
    revoked_at  TEXT
);

CREATE INDEX sessions_by_user ON sessions (user_name);

CREATE TABLE signin_failures (
    subject  TEXT NOT NULL,
    at       TEXT NOT NULL
);

CREATE INDEX signin_failures_by_subject ON signin_failures (subject, at);

CREATE TABLE service_secrets (
    name     TEXT PRIMARY KEY,
    value    TEXT NOT NULL,
    created  TEXT NOT NULL
);

ALTER TABLE api_keys ADD COLUMN owner TEXT;
