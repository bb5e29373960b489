-- Migration 0012: the one-time tokens of the back office's forms that mint (the mint and reserve forms
-- of /office/create).  Each rendering of such a form carries a random token; the first request that
-- sends it claims it here and records the page its answer redirects to once the ids are minted, so the
-- same form sent again (a double click, a retried request, the browser's "send again") is answered with
-- that page instead of minting as many more ids (pidkit.store.accounts.SqlAccounts.claim_form).
-- result: NULL while the first request is at work (or if it stopped before it ended).  Tokens older than
-- a day are deleted as new ones are claimed; they are never in a dump (like sessions).
CREATE TABLE form_tokens (
    user_name  TEXT NOT NULL,
    token      TEXT NOT NULL,
    created    TEXT NOT NULL,
    result     TEXT,
    PRIMARY KEY (user_name, token)
);
CREATE INDEX form_tokens_by_created ON form_tokens (created);
