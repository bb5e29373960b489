"""The back office's accounts in the SQL store: users (Argon2id password hashes), signed-in sessions
(server-side, revocable) and the sign-in rate limit (in the store, so every worker and instance agrees).

The rules kept here, once:

* **Passwords** are hashed with Argon2id (``argon2-cffi``, its default parameters — RFC 9106's second
  recommended option) and never stored, logged or handed out; :func:`check_password` is the one rule
  for an acceptable password, :func:`check_user_name` for a user name.
* **Sessions**: the cookie carries a random 256-bit token (signed by the web layer with
  :meth:`SqlAccounts.cookie_key`); the store keeps only its SHA-256 (as for API keys), so a forged or
  altered token matches no session, and a stolen database opens none.  Each
  session has its own CSRF token, an expiry, and is revoked by sign-out, "sign out everywhere", a
  password change or disabling the user.
* **Rate limit**: at most :data:`MAX_FAILURES_PER_USER` failed sign-ins per account and
  :data:`MAX_FAILURES_PER_ADDRESS` per client address in :data:`FAILURE_WINDOW`; past either, sign-in is
  refused (even with the right password) until the window moves on.  Attempts being checked count too:
  one that would pass the limit with them waits for them to end, so attempts sent at once are held to
  the same limits, and right passwords sent at once all get in.  A success takes back only the
  account's failures from its own address.

>>> check_user_name("ann.archivist")
'ann.archivist'
>>> check_password("short")
Traceback (most recent call last):
...
pidkit.errors.StoreError: a password is 10 to 1024 characters
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import os
import re
import secrets
import threading
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Final

from ..errors import ConflictError, NotFoundError, StoreError
from .keys import check_naan, check_shoulder
from .records import Principal, SessionInfo, User
from .rows import USER_COLS, stored_time, time_from_stored, user_from_row

#: The DB-API cursor the store hands its helpers (:class:`pidkit.store.sql.Cursor`; not imported: the
#: SQL store imports this module).
Cursor = Any

__all__ = [
    "FAILURE_WINDOW",
    "FORM_TOKEN_LIFETIME",
    "MAX_FAILURES_PER_ADDRESS",
    "MAX_FAILURES_PER_USER",
    "SESSION_LIFETIME",
    "SignInRefusedError",
    "SqlAccounts",
    "TooManySignInsError",
    "check_password",
    "check_user_name",
    "hash_password",
]

#: Failed sign-ins counted per account and per address over this window.
FAILURE_WINDOW: Final = _dt.timedelta(minutes=15)
#: Failed sign-ins an account may have in :data:`FAILURE_WINDOW` before sign-in is refused.
MAX_FAILURES_PER_USER: Final = 5
#: Failed sign-ins one client address may have in :data:`FAILURE_WINDOW` before it is refused.
MAX_FAILURES_PER_ADDRESS: Final = 20
#: How long a session lasts unless told otherwise.
SESSION_LIFETIME: Final = _dt.timedelta(hours=8)
#: How long a form's one-time token is remembered (:meth:`SqlAccounts.claim_form`).
FORM_TOKEN_LIFETIME: Final = _dt.timedelta(days=1)
#: A form's one-time token: what :func:`secrets.token_urlsafe` makes, 16 to 64 characters.
_FORM_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
_MIN_PASSWORD: Final = 10
_MAX_PASSWORD: Final = 1024
#: An Argon2id hash as a PHC string (what argon2-cffi writes): version, memory, time and parallelism, then
#: the salt (at least 8 bytes) and the hash (at least 4), in base64 without padding.
_ARGON2ID = re.compile(r"\$argon2id\$(?:v=\d+\$)?m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]{11,}\$[A-Za-z0-9+/]{6,}")


class SignInRefusedError(StoreError):
    """A sign-in refused: unknown user, wrong password or disabled user (one message for all three, so
    the answer does not tell which names exist)."""


class TooManySignInsError(StoreError):
    """Too many failed sign-ins for the account or the address: ``retry_after`` seconds to wait."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def check_user_name(name: str) -> str:
    """Return ``name`` if it can name a user: 1 to 64 letters, digits, ``.``, ``_``, ``@``, ``-``,
    starting with a letter or digit; else :class:`~pidkit.errors.StoreError` naming it.

    >>> check_user_name("-x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: a user name is 1 to 64 letters, ... starting with a letter or digit in '-x'
    """
    if not _NAME.fullmatch(name):
        raise StoreError(
            "a user name is 1 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit",
            text=name,
        )
    return name


def check_password(password: str) -> str:
    """Return ``password`` if acceptable: 10 to 1024 characters, no NUL.  The message never repeats
    the password.

    >>> len(check_password("correct horse battery"))
    21
    """
    if not _MIN_PASSWORD <= len(password) <= _MAX_PASSWORD:
        raise StoreError(f"a password is {_MIN_PASSWORD} to {_MAX_PASSWORD} characters")
    if "\x00" in password:
        raise StoreError("a password has no NUL character")
    return password


def _hasher() -> Any:
    try:
        from argon2 import PasswordHasher
    except ImportError:  # pragma: no cover - the server extra is installed wherever accounts are used
        raise StoreError("accounts need argon2-cffi (pip install 'pidkit[server]')") from None
    return PasswordHasher()


def hash_password(password: str) -> str:
    """The Argon2id hash (PHC string) of an acceptable ``password``.

    >>> hash_password("correct horse battery").startswith("$argon2id$")
    True
    """
    return str(_hasher().hash(check_password(password)))


def _verify(password_hash: str, password: str) -> bool:
    from argon2.exceptions import InvalidHashError, VerificationError

    try:
        return bool(_hasher().verify(password_hash, password))
    except (VerificationError, InvalidHashError):
        return False


#: The limits of failed sign-ins of the two subjects of :func:`_subjects`, in their order.
_LIMITS: Final = (MAX_FAILURES_PER_USER, MAX_FAILURES_PER_ADDRESS)


def _subjects(name: str, address: str) -> tuple[str, str]:
    """The subjects an attempt's failures are counted under: its account, its address.

    >>> _subjects("ann", "192.0.2.1")
    ('user:ann', 'addr:192.0.2.1')
    """
    return f"user:{name}"[:200], f"addr:{address}"[:200]


#: The subject prefix of the rows of attempts being checked now (a row per account and address).
_PENDING: Final = "pending:"
#: A pending row older than this is a check that never ended (its process died): ignored.
_PENDING_FOR: Final = _dt.timedelta(seconds=60)
#: Seconds an attempt waits for the checks under way of its account or address before it is refused.
_PENDING_WAIT: Final = 10.0
#: Seconds before its second look while it waits (then twice as long each time, up to half a second).
_PENDING_POLL: Final = 0.05
#: Password checks running at once in this process: each Argon2id check takes 64 MiB, so a burst of
#: sign-ins (24 at once took a worker from 95 MB to 1.6 GB) waits its turn instead.
_VERIFYING: Final = threading.BoundedSemaphore(max(2, os.cpu_count() or 2))

#: How long :meth:`SqlAccounts.authenticate` remembers a verified password (seconds).
_VERIFIED_FOR: Final = 300.0
#: Most users remembered at once (then forgotten all together: each comes back with one check).
_VERIFIED_MAX: Final = 1000
#: The key of the digests of verified passwords: this process's own, never stored.
_MAC_KEY: Final = secrets.token_bytes(32)


def _password_mac(password: str) -> bytes:
    """A keyed digest of ``password`` (HMAC-SHA-256 with :data:`_MAC_KEY`): what is remembered of a
    verified one, compared in constant time.

    >>> _password_mac("a") == _password_mac("a") != _password_mac("b")
    True
    """
    return hmac.new(_MAC_KEY, password.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()


_DUMMY: list[str] = []


def _dummy_hash() -> str:
    """A hash to verify against when the user does not exist (the answer takes as long)."""
    if not _DUMMY:
        _DUMMY.append(hash_password(secrets.token_urlsafe(16)))
    return _DUMMY[0]


def _token_id(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def _at(when: _dt.datetime) -> str:
    text = stored_time(when)
    assert text is not None
    return text


class SqlAccounts:
    """Users, sessions and the sign-in rate limit, for :class:`~pidkit.store.sql.SqlStore` (a mixin: it
    uses the store's transactions and history)."""

    #: :meth:`cookie_key`, once read.
    _cookie_key: bytes | None = None

    if TYPE_CHECKING:

        def _transaction(self, *, write: bool) -> AbstractContextManager[Cursor]: ...

        def _exec(self, cur: Cursor, sql: str, params: Sequence[Any] = ()) -> Any: ...

        def _q(self, sql: str) -> str: ...

        def _lock_signin(self, cur: Cursor, subject: str) -> None: ...

        def _record(
            self, cur: Cursor, principal: Principal | None, operation: str, kind: str, key: str,
            before: dict[str, Any] | None, after: dict[str, Any] | None, at: str | None = None,
        ) -> None: ...

    # -- users --------------------------------------------------------------------------------------
    def add_user(
        self, name: str, password: str, *, naan: str, shoulder: str | None = None, admin: bool = False,
        principal: Principal | None = None,
    ) -> User:
        """Create a user with a password (hashed here) and a scope; :class:`~pidkit.errors.ConflictError`
        if the name is taken."""
        check_user_name(name)
        check_naan(naan)
        if shoulder is not None:
            check_shoulder(shoulder)
        digest = hash_password(password)
        with self._transaction(write=True) as cur:
            self._exec(
                cur,
                "INSERT INTO users (name, password_hash, naan, shoulder, admin, created, disabled_at) "
                f"VALUES (?, ?, ?, ?, ?, ?, NULL) ON CONFLICT DO NOTHING RETURNING {USER_COLS}",
                (name, digest, naan, shoulder, int(admin), _at(_now())),
            )
            row = cur.fetchone()
            if row is None:
                raise ConflictError("a user of this name exists", text=name)
            user = user_from_row(row)
            self._record(cur, principal, "user.add", "user", name, None,
                         {"naan": naan, "shoulder": shoulder, "admin": admin})  # fmt: skip
        return user

    def get_user(self, name: str) -> User:
        """The user named ``name``; :class:`~pidkit.errors.NotFoundError` if there is none."""
        with self._transaction(write=False) as cur:
            self._exec(cur, f"SELECT {USER_COLS} FROM users WHERE name = ?", (name,))
            row = cur.fetchone()
        if row is None:
            raise NotFoundError("no such user", text=name)
        return user_from_row(row)

    def list_users(self) -> list[User]:
        """Every user, by name."""
        with self._transaction(write=False) as cur:
            self._exec(cur, f"SELECT {USER_COLS} FROM users ORDER BY name")
            return [user_from_row(row) for row in cur.fetchall()]

    def disable_user(self, name: str, *, principal: Principal | None = None) -> User:
        """Disable a user (idempotent): they can no longer sign in, and their sessions end now."""
        stamp = _at(_now())
        with self._transaction(write=True) as cur:
            self._exec(
                cur,
                "UPDATE users SET disabled_at = COALESCE(disabled_at, ?) WHERE name = ? "
                f"RETURNING {USER_COLS}",
                (stamp, name),
            )
            row = cur.fetchone()
            if row is None:
                raise NotFoundError("no such user", text=name)
            user = user_from_row(row)
            self._revoke_sessions(cur, name, stamp)
            if stored_time(user.disabled_at) == stamp:
                self._record(cur, principal, "user.disable", "user", name, {"disabled_at": None},
                             {"disabled_at": stamp}, stamp)  # fmt: skip
        return user

    def enable_user(self, name: str, *, principal: Principal | None = None) -> User:
        """Enable a disabled user again (idempotent): they may sign in with their password."""
        with self._transaction(write=True) as cur:
            self._exec(cur, f"SELECT {USER_COLS} FROM users WHERE name = ?", (name,))
            row = cur.fetchone()
            if row is None:
                raise NotFoundError("no such user", text=name)
            before = user_from_row(row)
            self._exec(cur, f"UPDATE users SET disabled_at = NULL WHERE name = ? RETURNING {USER_COLS}",
                       (name,))  # fmt: skip
            user = user_from_row(cur.fetchone())
            if before.disabled_at is not None:
                was = {"disabled_at": stored_time(before.disabled_at)}
                self._record(cur, principal, "user.enable", "user", name, was, {"disabled_at": None})
        return user

    def set_user_scope(
        self, name: str, *, naan: str, shoulder: str | None = None, admin: bool = False,
        principal: Principal | None = None,
    ) -> User:
        """Change a user's scope (NAAN, shoulder, administrator); their sessions end when it narrows or
        changes (they sign in again under the new scope)."""
        check_naan(naan)
        if shoulder is not None:
            check_shoulder(shoulder)
        stamp = _at(_now())
        with self._transaction(write=True) as cur:
            self._exec(cur, f"SELECT {USER_COLS} FROM users WHERE name = ?", (name,))
            row = cur.fetchone()
            if row is None:
                raise NotFoundError("no such user", text=name)
            before = user_from_row(row)
            self._exec(cur, "UPDATE users SET naan = ?, shoulder = ?, admin = ? WHERE name = ? "
                       f"RETURNING {USER_COLS}", (naan, shoulder, int(admin), name))  # fmt: skip
            user = user_from_row(cur.fetchone())
            old = {"naan": before.naan, "shoulder": before.shoulder, "admin": before.admin}
            new = {"naan": naan, "shoulder": shoulder, "admin": admin}
            if old != new:
                self._revoke_sessions(cur, name, stamp)
                self._record(cur, principal, "user.scope", "user", name, old, new, stamp)
        return user

    def set_password(self, name: str, password: str, *, principal: Principal | None = None) -> User:
        """Set a user's password; every session of the user ends (they sign in again)."""
        digest = hash_password(password)
        stamp = _at(_now())
        with self._transaction(write=True) as cur:
            self._exec(cur, f"UPDATE users SET password_hash = ? WHERE name = ? RETURNING {USER_COLS}",
                       (digest, name))  # fmt: skip
            row = cur.fetchone()
            if row is None:
                raise NotFoundError("no such user", text=name)
            self._revoke_sessions(cur, name, stamp)
            self._record(cur, principal, "user.passwd", "user", name, None, None, stamp)  # no hash in history
        return user_from_row(row)

    # -- signing in ---------------------------------------------------------------------------------
    def _failures(self, cur: Cursor, subject: str, since: str) -> tuple[int, str | None]:
        self._exec(cur, "SELECT COUNT(*), MIN(at) FROM signin_failures WHERE subject = ? AND at > ?",
                   (subject, since))  # fmt: skip
        count, first = cur.fetchone()
        return int(count), first

    def authenticate(self, name: str, password: str, *, address: str) -> User:
        """Check ``name`` and ``password`` without opening a session (HTTP Basic authentication, EZID's
        API) and return the user.  The same rules as :meth:`sign_in`: rate limited per account and per
        ``address`` (:class:`TooManySignInsError`); a wrong name or password, or a disabled user, raises
        :class:`SignInRefusedError` (one message) and counts as a failure; a success checked in full
        clears the account's failures sent from ``address`` (:meth:`sign_in`).

        A client sends its credentials with every request, and each Argon2id check takes 64 MiB and a
        tenth of a second: a password verified here is remembered by this store object (a server
        process) for :data:`_VERIFIED_FOR` as a keyed digest of it beside the stored hash it matched
        (:meth:`_still_verified`).  The same password is then let in after a read alone — while the stored
        hash is the same (a new password forgets it), the user is active and its account and address are
        under their limits; otherwise the full check decides.  A success let in so clears no failure."""
        user = self._still_verified(name, password, address)
        if user is not None:
            return user
        user, _, digest = self._check_password(name, password, address=address, lifetime=None)
        verified = self._verified()
        if len(verified) >= _VERIFIED_MAX:
            verified.clear()
        verified[name] = (digest, _password_mac(password), time.monotonic())
        return user

    def _verified(self) -> dict[str, tuple[str, bytes, float]]:
        """This store object's verified credentials: user name → (the stored hash it matched, the
        password's keyed digest, when, by ``time.monotonic``); made once (``setdefault``: one dict
        whichever thread asks first)."""
        verified: dict[str, tuple[str, bytes, float]] = self.__dict__.setdefault("_verified_credentials", {})
        return verified

    def _still_verified(self, name: str, password: str, address: str) -> User | None:
        """The user, if ``password`` is the one verified for ``name`` within :data:`_VERIFIED_FOR` and the
        store still says the same: the same stored hash, an active user, neither the account nor
        ``address`` at its limit of failures; else ``None`` (the full check decides)."""
        known = self._verified().get(name)
        if known is None or time.monotonic() - known[2] >= _VERIFIED_FOR or len(password) > _MAX_PASSWORD:
            return None  # (an overlong password: no digest made of it, as the full check hashes none)
        if not hmac.compare_digest(known[1], _password_mac(password)):
            return None
        since = _at(_now() - FAILURE_WINDOW)
        with self._transaction(write=False) as cur:
            self._exec(cur, f"SELECT password_hash, {USER_COLS} FROM users WHERE name = ?", (name,))
            row = cur.fetchone()
            limited = zip(_subjects(name, address), _LIMITS, strict=True)
            if any(self._failures(cur, subject, since)[0] >= limit for subject, limit in limited):
                return None
        if row is None or str(row[0]) != known[0]:  # the stored hash (not a secret): the same text
            return None
        user = user_from_row(row[1:])
        return user if user.active else None

    def sign_in(
        self, name: str, password: str, *, address: str, lifetime: _dt.timedelta = SESSION_LIFETIME,
    ) -> tuple[User, SessionInfo, str]:
        """Check ``name`` and ``password`` and open a session: return the user, the session and its token
        (for the cookie; only its SHA-256 is kept).  Rate limited per account and per ``address``
        (:class:`TooManySignInsError`); a wrong name or password, or a disabled user, raises
        :class:`SignInRefusedError` (the same message) and counts as a failure.  A success clears the
        account's failures sent from ``address`` (the user's own mistakes); failures from other addresses
        stay counted until :data:`FAILURE_WINDOW` moves past them, so an attacker guessing from elsewhere
        gets no fresh allowance each time the user signs in."""
        user, opened, _ = self._check_password(name, password, address=address, lifetime=lifetime)
        if opened is None:  # pragma: no cover - a lifetime always opens one
            raise SignInRefusedError("wrong user name or password")
        return user, *opened

    def _check_password(
        self, name: str, password: str, *, address: str, lifetime: _dt.timedelta | None,
    ) -> tuple[User, tuple[SessionInfo, str] | None, str]:
        """The one password check (rate limit, Argon2id, failures counted) and, given a ``lifetime``,
        the session opened in the same transaction as the success is recorded; with the stored hash the
        password matched.

        An attempt is checked only while the failures of its account (and address) and the attempts of
        it being checked now (rows of subject ``pending:…``, each removed when its check ends, ignored
        once older than :data:`_PENDING_FOR`) stay under the limit: more wait for those to end (up to
        :data:`_PENDING_WAIT` seconds), so attempts sent at once are held to the limit — a burst of
        wrong passwords gets as many checks as the limit allows, and one of right passwords (an EZID
        client's requests in parallel) waits a moment instead of being refused."""
        subjects = _subjects(name, address)
        pending = tuple(_PENDING + subject for subject in subjects)
        deadline, pause = time.monotonic() + _PENDING_WAIT, _PENDING_POLL
        while True:
            with self._transaction(write=True) as cur:
                for subject in sorted(subjects):  # the counts and this attempt's rows: one at a time
                    self._lock_signin(cur, subject)
                stamp = _now()
                since = _at(stamp - FAILURE_WINDOW)
                self._exec(cur, "DELETE FROM signin_failures WHERE at <= ?", (since,))
                crowded = False
                for subject, waiting, limit in zip(subjects, pending, _LIMITS, strict=True):
                    count, first = self._failures(cur, subject, since)
                    if count >= limit and first is not None:
                        first_at = time_from_stored(first) or stamp
                        wait = max(1, int((first_at + FAILURE_WINDOW - stamp).total_seconds()) + 1)
                        what = "this account" if subject.startswith("user:") else "this address"
                        raise TooManySignInsError(f"too many failed sign-ins for {what}: try again in "
                                                  f"{wait // 60 + 1} minutes", wait)  # fmt: skip
                    crowded |= count + self._failures(cur, waiting, _at(stamp - _PENDING_FOR))[0] >= limit
                if not crowded:
                    self._exec(cur, f"SELECT password_hash, {USER_COLS} FROM users WHERE name = ?", (name,))
                    row = cur.fetchone()
                    cur.executemany(self._q("INSERT INTO signin_failures (subject, at) VALUES (?, ?)"),
                                    [(subject, _at(stamp)) for subject in pending])  # fmt: skip
                    break
            if time.monotonic() >= deadline:
                raise TooManySignInsError("too many sign-ins at once for this account or address: try "
                                          "again in a moment", 1)  # fmt: skip
            time.sleep(pause)
            pause = min(2 * pause, 0.5)  # a look is a write transaction: fewer, the longer it waits
        ended = self._q("DELETE FROM signin_failures WHERE subject = ? AND at = ?")  # this attempt's rows
        mine = [(subject, _at(stamp)) for subject in pending]
        try:
            # a password longer than any accepted one is wrong without hashing it (no work for a huge body)
            digest = row[0] if row is not None else _dummy_hash()
            with _VERIFYING:
                ok = len(password) <= _MAX_PASSWORD and _verify(digest, password)
        except BaseException:  # not checked (interrupted, out of memory): not counted either
            with self._transaction(write=True) as cur:
                cur.executemany(ended, mine)
            raise
        user = user_from_row(row[1:]) if row is not None else None
        opened: tuple[SessionInfo, str] | None = None
        with self._transaction(write=True) as cur:
            cur.executemany(ended, mine)
            if not ok or user is None or not user.active:
                failed = "INSERT INTO signin_failures (subject, at, address) VALUES (?, ?, ?)"
                cur.executemany(self._q(failed), [(subject, _at(stamp), subjects[1]) for subject in subjects])
                refused = SignInRefusedError("wrong user name or password (or the account is disabled)")
            else:
                refused = None
                # the account's failures from this address only: another's, from elsewhere, stay counted
                self._exec(cur, "DELETE FROM signin_failures WHERE subject = ? AND address = ?", subjects)
                if lifetime is not None:
                    token = secrets.token_urlsafe(32)
                    csrf = secrets.token_urlsafe(32)
                    session = SessionInfo(_token_id(token), name, csrf, stamp, stamp + lifetime)
                    self._exec(
                        cur,
                        "INSERT INTO sessions (id, user_name, csrf, created, expires, revoked_at) "
                        "VALUES (?, ?, ?, ?, ?, NULL)",
                        (session.id, name, session.csrf, _at(stamp), _at(stamp + lifetime)),
                    )
                    opened = (session, token)
        if refused is not None or user is None:
            raise refused or SignInRefusedError("wrong user name or password")
        return user, opened, str(digest)

    def session(self, token: str) -> tuple[User, SessionInfo] | None:
        """The live session of a cookie's ``token`` and its user, or ``None`` (unknown, revoked,
        expired, or the user disabled)."""
        if not token or len(token) > 200:
            return None
        sid = _token_id(token)
        with self._transaction(write=False) as cur:
            self._exec(
                cur,
                "SELECT s.id, s.user_name, s.csrf, s.created, s.expires, s.revoked_at, "
                + ", ".join(f"u.{c.strip()}" for c in USER_COLS.split(","))
                + " FROM sessions s JOIN users u ON u.name = s.user_name WHERE s.id = ?",
                (sid,),
            )
            row = cur.fetchone()
        if row is None or not hmac.compare_digest(str(row[0]), sid) or row[5] is not None:
            return None
        info = SessionInfo(row[0], row[1], row[2], time_from_stored(row[3]), time_from_stored(row[4]))
        user = user_from_row(row[6:])
        if info.expires is None or info.expires <= _now() or not user.active:
            return None
        return user, info

    def end_session(self, token: str) -> None:
        """Revoke the session of ``token`` (sign-out; nothing happens for an unknown token)."""
        with self._transaction(write=True) as cur:
            self._exec(cur, "UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                       (_at(_now()), _token_id(token)))  # fmt: skip

    def end_sessions(self, name: str) -> int:
        """Revoke every session of the user ``name`` ("sign out everywhere"); return how many."""
        with self._transaction(write=True) as cur:
            return self._revoke_sessions(cur, name, _at(_now()))

    def _revoke_sessions(self, cur: Cursor, name: str, stamp: str) -> int:
        self._exec(cur, "UPDATE sessions SET revoked_at = ? WHERE user_name = ? AND revoked_at IS NULL",
                   (stamp, name))  # fmt: skip
        return max(int(cur.rowcount), 0)

    def claim_form(self, name: str, token: str, *, keep: _dt.timedelta = FORM_TOKEN_LIFETIME) -> str | None:
        """Claim the one-time ``token`` of a form the user ``name`` sends (the back office's forms that
        mint): ``None`` the first time — the caller does the form's work, then :meth:`settle_form` — and
        on every later claim what the first one settled (the page its answer redirects to), or ``""``
        while it is not settled (still at work, or stopped before it ended).  The user's tokens older
        than ``keep`` (at least as long as a form can be sent: its session's life) are forgotten first.
        A token that is not one a form carries raises :class:`~pidkit.errors.StoreError`."""
        if _FORM_TOKEN.fullmatch(token) is None:
            raise StoreError("this form is damaged (its one-time token is not one the office made): "
                             "open it again")  # fmt: skip
        now = _now()
        with self._transaction(write=True) as cur:  # the user's own: claims of two users never meet
            self._exec(cur, "DELETE FROM form_tokens WHERE user_name = ? AND created < ?",
                       (name, _at(now - keep)))  # fmt: skip
        with self._transaction(write=True) as cur:
            self._exec(cur, "INSERT INTO form_tokens (user_name, token, created, result) "
                            "VALUES (?, ?, ?, NULL) ON CONFLICT DO NOTHING",
                       (name, token, _at(now)))  # fmt: skip
            if cur.rowcount == 1:
                return None
            self._exec(cur, "SELECT result FROM form_tokens WHERE user_name = ? AND token = ?", (name, token))
            row = cur.fetchone()
        return "" if row is None or row[0] is None else str(row[0])

    def settle_form(self, name: str, token: str, result: str | None) -> None:
        """Record ``result`` (the page the answer redirects to) for the form token ``name`` claimed
        (:meth:`claim_form`); ``None`` forgets the token instead: the work was refused and did nothing,
        so sending the form again is a new try."""
        with self._transaction(write=True) as cur:
            if result is None:
                self._exec(cur, "DELETE FROM form_tokens WHERE user_name = ? AND token = ?", (name, token))
            else:
                self._exec(cur, "UPDATE form_tokens SET result = ? WHERE user_name = ? AND token = ?",
                           (result, name, token))  # fmt: skip

    def cookie_key(self) -> bytes:
        """The key that signs the session cookies (HMAC-SHA256): made once, at random, and kept in the
        store so every worker and instance signs alike; never in a dump."""
        if self._cookie_key is not None:
            return self._cookie_key
        with self._transaction(write=True) as cur:
            self._exec(cur, "INSERT INTO service_secrets (name, value, created) VALUES (?, ?, ?) "
                            "ON CONFLICT DO NOTHING", ("session-cookie", secrets.token_hex(32), _at(_now())))
            self._exec(cur, "SELECT value FROM service_secrets WHERE name = ?", ("session-cookie",))
            key = bytes.fromhex(str(cur.fetchone()[0]))
        self._cookie_key = key
        return key

    def _account_problems(self, query: Any) -> list[str]:
        """``pidkit check``'s findings about accounts: a password hash that is not a well-formed Argon2id
        PHC string (:data:`_ARGON2ID`; the prefix alone is not enough), an API key's owner that names no
        user."""
        problems = [f"user {name}: password_hash is not an Argon2id hash"
                    for name, digest in query("SELECT name, password_hash FROM users ORDER BY name")
                    if not _ARGON2ID.fullmatch(str(digest))]  # fmt: skip
        sql = ("SELECT k.key_id, k.owner FROM api_keys k LEFT JOIN users u ON u.name = k.owner "
               "WHERE k.owner IS NOT NULL AND u.name IS NULL ORDER BY k.key_id")
        problems += [f"API key {key_id}: owner {owner} is not a user" for key_id, owner in query(sql)]
        return problems
