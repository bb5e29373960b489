-- Migration 0013: the client address ('addr:IP', the address's own subject) of each failed sign-in
-- counted against an account.  A sign-in that succeeds takes back only the account's failures sent from
-- its own address (the user's own typing mistakes); the failures of anybody else, from other addresses,
-- stay counted until the window moves on.  Before, a success cleared them all, so an attacker guessing
-- from many addresses got a fresh allowance each time the user signed in
-- (pidkit.store.accounts.SqlAccounts._check_password).  NULL on the rows of attempts being checked
-- (subject 'pending:…') and on the rows written before: a row without an address is never taken back
-- early (the window, 15 minutes, ends it).  Never in a dump.
ALTER TABLE signin_failures ADD COLUMN address TEXT;
