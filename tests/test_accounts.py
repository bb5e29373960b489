"""Back-office accounts (issue 14): users with Argon2id passwords, sessions, the sign-in rate limit, one
scope rule for users and API keys, and ``pidkit user`` — on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as _dt
import io
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from _schema import raw_sql
from pidkit.errors import ConflictError, NotFoundError, StoreError
from pidkit.store import ApiKey, Scope, Store, User, open_store
from pidkit.store.accounts import (
    MAX_FAILURES_PER_ADDRESS,
    MAX_FAILURES_PER_USER,
    SignInRefusedError,
    TooManySignInsError,
)
from pidkit.store.rows import stored_time

PASSWORD = "correct horse battery"


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a fresh store on each backend."""
    if request.param == "postgres":
        new_url: Callable[[], str] = request.getfixturevalue("new_postgres_url")
        return new_url()
    return f"sqlite:///{tmp_path / 'a.db'}"


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    with open_store(url) as s:
        yield s


def test_password_is_hashed_with_argon2id_and_never_stored(store: Store, real_argon2: None) -> None:
    """At the parameters a deployment uses: RFC 9106's second recommended option (t=3, p=4, 64 MiB), the
    library's default (the other tests hash at the smallest cost: conftest.CHEAP_ARGON2)."""
    store.add_user("ann", PASSWORD, naan="99999", shoulder="fk4")
    import io

    out = io.StringIO()
    store.dump(out)
    assert PASSWORD not in out.getvalue()
    assert '"password_hash":"$argon2id$v=19$m=65536,t=3,p=4$' in out.getvalue()
    assert store.authenticate("ann", PASSWORD, address="a").name == "ann"
    with pytest.raises(SignInRefusedError):
        store.authenticate("ann", PASSWORD + "x", address="a")
    assert PASSWORD not in str(store.history("user", "ann"))
    assert store.check() == []


def _set_password_hash(url: str, name: str, digest: str) -> None:
    """Write ``digest`` as the user's password hash straight into the database (no pidkit code)."""
    if url.startswith("sqlite:///"):
        import sqlite3

        conn = sqlite3.connect(url[len("sqlite:///") :])
        try:
            with conn:
                assert conn.execute("UPDATE users SET password_hash = ? WHERE name = ?",
                                    (digest, name)).rowcount == 1  # fmt: skip
        finally:
            conn.close()
        return
    import psycopg

    with psycopg.connect(url) as pg:
        assert pg.execute("UPDATE users SET password_hash = %s WHERE name = %s", (digest, name)).rowcount == 1


@pytest.mark.parametrize(
    "digest",
    [
        # an Argon2i hash (not id), a SHA-256 hex digest, a plain password stored by mistake, nothing
        "$argon2i$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG",
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        PASSWORD,
        "",
        # the Argon2id prefix on something that is not a PHC string: no sign-in can ever succeed
        "$argon2id$",
        "$argon2id$v=19$m=65536,t=3,p=4$not base64!$",
    ],
    ids=["argon2i", "sha256", "plain", "empty", "prefix-only", "malformed"],
)
def test_check_finds_a_password_hash_that_is_not_argon2id(url: str, digest: str) -> None:
    """``pidkit check`` names a user whose stored password hash is not an Argon2id PHC string (written into
    the database behind pidkit's back), and the CLI exits 1 listing it."""
    with open_store(url) as store:
        store.add_user("ann", PASSWORD, naan="99999", shoulder="fk4")
        store.add_user("bob", PASSWORD, naan="99999")
        assert store.check() == []
    _set_password_hash(url, "bob", digest)
    with open_store(url) as store:
        assert store.check() == ["user bob: password_hash is not an Argon2id hash"]
    done = _pidkit("check", "--db", url)
    assert done.returncode == 1, done.stderr
    assert done.stdout == "user bob: password_hash is not an Argon2id hash\n"
    assert done.stderr.startswith("pidkit: error: ") and "1 integrity problems" in done.stderr
    assert "Traceback" not in done.stderr


def test_add_user_refuses_bad_input(store: Store) -> None:
    store.add_user("ann", PASSWORD, naan="99999")
    with pytest.raises(ConflictError, match="exists"):
        store.add_user("ann", PASSWORD, naan="99999")
    with pytest.raises(StoreError, match="10 to 1024"):
        store.add_user("bob", "short", naan="99999")
    with pytest.raises(StoreError, match="user name"):
        store.add_user("<b>", PASSWORD, naan="99999")
    assert [u.name for u in store.list_users()] == ["ann"]


def test_sign_in_session_and_sign_out(store: Store) -> None:
    store.add_user("ann", PASSWORD, naan="99999", shoulder="fk4")
    user, info, token = store.sign_in("ann", PASSWORD, address="192.0.2.1")
    assert user.scope == Scope("99999", "fk4")
    found = store.session(token)
    assert found is not None and found[1].csrf == info.csrf and found[0].name == "ann"
    assert store.session(token + "x") is None
    assert store.session("") is None
    store.end_session(token)
    assert store.session(token) is None


def test_wrong_password_and_unknown_user_get_one_message(store: Store) -> None:
    store.add_user("ann", PASSWORD, naan="99999")
    with pytest.raises(SignInRefusedError) as wrong:
        store.sign_in("ann", PASSWORD + "!", address="192.0.2.1")
    with pytest.raises(SignInRefusedError) as unknown:
        store.sign_in("zed", PASSWORD, address="192.0.2.1")
    assert str(wrong.value) == str(unknown.value)


def test_expired_session_is_refused(store: Store) -> None:
    store.add_user("ann", PASSWORD, naan="99999")
    _, _, token = store.sign_in("ann", PASSWORD, address="a", lifetime=_dt.timedelta(seconds=-1))
    assert store.session(token) is None


def test_sign_out_everywhere_disable_and_passwd_end_sessions(store: Store) -> None:
    store.add_user("ann", PASSWORD, naan="99999")
    tokens = [store.sign_in("ann", PASSWORD, address="a")[2] for _ in range(2)]
    assert store.end_sessions("ann") == 2
    assert all(store.session(t) is None for t in tokens)
    token = store.sign_in("ann", PASSWORD, address="a")[2]
    store.set_password("ann", PASSWORD + " staple")
    assert store.session(token) is None
    with pytest.raises(SignInRefusedError):
        store.sign_in("ann", PASSWORD, address="a")
    token = store.sign_in("ann", PASSWORD + " staple", address="a")[2]
    store.disable_user("ann")
    assert store.session(token) is None
    with pytest.raises(SignInRefusedError):
        store.sign_in("ann", PASSWORD + " staple", address="a")
    assert [h.operation for h in store.history("user", "ann")] == ["user.add", "user.passwd", "user.disable"]
    with pytest.raises(NotFoundError):
        store.disable_user("zed")


def test_rate_limit_per_account_refuses_even_the_right_password(store: Store) -> None:
    store.add_user("ann", PASSWORD, naan="99999")
    for i in range(MAX_FAILURES_PER_USER):
        with pytest.raises(SignInRefusedError):
            store.sign_in("ann", "wrong password", address=f"192.0.2.{i}")
    with pytest.raises(TooManySignInsError, match="this account") as refused:
        store.sign_in("ann", PASSWORD, address="192.0.2.99")
    assert 0 < refused.value.retry_after <= 15 * 60 + 1


def test_authenticate_checks_without_a_session_and_shares_the_rate_limit(store: Store) -> None:
    """Store.authenticate (HTTP Basic, EZID's API): the same password check and failure counting as
    sign_in, but no session row."""
    store.add_user("ann", PASSWORD, naan="99999")
    assert store.authenticate("ann", PASSWORD, address="a").name == "ann"
    assert _raw_count(store, "sessions") == 0
    for _ in range(MAX_FAILURES_PER_USER - 1):
        with pytest.raises(SignInRefusedError):
            store.authenticate("ann", "wrong password", address="a")
    with pytest.raises(SignInRefusedError):  # the last allowed failure, counted by sign_in too
        store.sign_in("ann", "wrong password", address="a")
    with pytest.raises(TooManySignInsError, match="this account"):
        store.authenticate("ann", PASSWORD, address="b")
    store.add_user("off", PASSWORD, naan="99999")
    store.disable_user("off")
    with pytest.raises(SignInRefusedError):
        store.authenticate("off", PASSWORD, address="c")
    with pytest.raises(SignInRefusedError):
        store.authenticate("nobody", PASSWORD, address="c")


def _raw_count(store: Store, table: str) -> int:
    from pidkit.store.sql import SqlStore

    assert isinstance(store, SqlStore)
    with store._transaction(write=False) as cur:
        store._exec(cur, f"SELECT COUNT(*) FROM {table}")
        return int(cur.fetchone()[0])


def test_rate_limit_per_address(store: Store) -> None:
    store.add_user("ann", PASSWORD, naan="99999")
    for i in range(MAX_FAILURES_PER_ADDRESS):
        with pytest.raises(SignInRefusedError):
            store.sign_in(f"nobody{i}", "wrong password", address="198.51.100.7")
    with pytest.raises(TooManySignInsError, match="this address"):
        store.sign_in("ann", PASSWORD, address="198.51.100.7")
    assert store.sign_in("ann", PASSWORD, address="198.51.100.8")[0].name == "ann"


def test_sign_ins_at_once_are_held_to_the_limit(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Twelve wrong passwords for one account sent at once (a password check takes a while): the first
    MAX_FAILURES_PER_USER are checked, the others refused before their check — each attempt is counted
    before its check, so none slips past while the others are being checked (before, all twelve were
    checked).  The checks themselves run a few at a time."""
    from pidkit.store import accounts

    store.add_user("ann", PASSWORD, naan="99999")
    verify = accounts._verify

    running, most = [0], [0]
    lock = threading.Lock()

    def slow(digest: str, password: str) -> bool:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.3)
        with lock:
            running[0] -= 1
        return verify(digest, password)

    monkeypatch.setattr(accounts, "_verify", slow)
    monkeypatch.setattr(accounts, "_VERIFYING", threading.BoundedSemaphore(2))  # as on a 2-core machine
    outcomes: list[str] = []

    def attempt(i: int) -> None:
        try:
            store.authenticate("ann", "wrong password", address=f"192.0.2.{i}")
        except (SignInRefusedError, TooManySignInsError) as exc:
            outcomes.append(type(exc).__name__)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(outcomes) == ["SignInRefusedError"] * MAX_FAILURES_PER_USER + [
        "TooManySignInsError"] * (12 - MAX_FAILURES_PER_USER)
    # and at most a few 64 MiB checks at once in a process (24 at once took a worker to 1.6 GB)
    assert most[0] == 2


def test_right_passwords_at_once_all_succeed(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """An EZID client's requests in parallel (Basic authentication on each): more than the limit at once,
    all with the right password, are all let in — the later ones wait for the checks under way instead
    of being refused (a review found the 6th of 8 refused)."""
    from pidkit.store import accounts

    store.add_user("ann", PASSWORD, naan="99999")
    verify = accounts._verify

    def slow(digest: str, password: str) -> bool:
        time.sleep(0.2)
        return verify(digest, password)

    monkeypatch.setattr(accounts, "_verify", slow)
    names: list[str] = []

    def attempt() -> None:
        names.append(store.authenticate("ann", PASSWORD, address="192.0.2.1").name)

    threads = [threading.Thread(target=attempt) for _ in range(2 * MAX_FAILURES_PER_USER)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert names == ["ann"] * 2 * MAX_FAILURES_PER_USER
    assert _raw_count(store, "signin_failures") == 0


def test_an_attempt_never_checked_is_not_counted(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A check that fails by itself (out of memory, interrupted) leaves no row; the row of one whose
    process died is ignored after a minute; attempts under way hold the others back only so long."""
    from pidkit.store import accounts

    store.add_user("ann", PASSWORD, naan="99999")

    def broken(digest: str, password: str) -> bool:
        raise MemoryError

    with monkeypatch.context() as patch:
        patch.setattr(accounts, "_verify", broken)
        with pytest.raises(MemoryError):
            store.authenticate("ann", PASSWORD, address="192.0.2.2")
    assert _raw_count(store, "signin_failures") == 0
    now = _dt.datetime.now(_dt.UTC)
    for age in (61, 0):  # attempts of processes that died a minute ago, then of ones under way now
        for i in range(MAX_FAILURES_PER_USER):
            at = stored_time(now - _dt.timedelta(seconds=age, microseconds=i))
            row = ("pending:user:ann", at)
            raw_sql(store, "INSERT INTO signin_failures (subject, at) VALUES (?, ?)", row)
        if age:
            assert store.authenticate("ann", PASSWORD, address="192.0.2.3").name == "ann"
    monkeypatch.setattr(accounts, "_PENDING_WAIT", 0.3)
    with pytest.raises(TooManySignInsError, match="at once"):  # sign_in: never a remembered password
        store.sign_in("ann", PASSWORD, address="192.0.2.4")


def test_a_verified_password_is_remembered_while_the_store_says_the_same(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """authenticate (Basic auth on every EZID request) checks a password once with Argon2id; the same
    password is then let in after a read — but a wrong one is still checked and counted, a new password
    or a disabled user forgets it, an account at its limit is refused even so, and it ends with time."""
    from pidkit.store import accounts

    store.add_user("ann", PASSWORD, naan="99999")
    verify = accounts._verify
    checks: list[str] = []

    def counted(digest: str, password: str) -> bool:
        checks.append(password)
        return verify(digest, password)

    monkeypatch.setattr(accounts, "_verify", counted)
    for _ in range(3):
        assert store.authenticate("ann", PASSWORD, address="a").name == "ann"
    assert checks == [PASSWORD]
    with pytest.raises(SignInRefusedError):
        store.authenticate("ann", "wrong password", address="a")
    assert checks == [PASSWORD, "wrong password"] and _raw_count(store, "signin_failures") == 2
    assert store.authenticate("ann", PASSWORD, address="a").name == "ann" and len(checks) == 2
    store.set_password("ann", "another good password")  # a new hash: the old password is forgotten
    with pytest.raises(SignInRefusedError):
        store.authenticate("ann", PASSWORD, address="a")
    assert store.authenticate("ann", "another good password", address="a").name == "ann"
    assert len(checks) == 4
    store.disable_user("ann")
    with pytest.raises(SignInRefusedError):
        store.authenticate("ann", "another good password", address="a")
    store.enable_user("ann")
    assert store.authenticate("ann", "another good password", address="a").name == "ann"
    for _ in range(MAX_FAILURES_PER_USER):  # the account at its limit: refused even with the right one
        with pytest.raises((SignInRefusedError, TooManySignInsError)):
            store.authenticate("ann", "wrong password", address="b")
    with pytest.raises(TooManySignInsError):
        store.authenticate("ann", "another good password", address="a")
    raw_sql(store, "DELETE FROM signin_failures")
    assert store.authenticate("ann", "another good password", address="a").name == "ann"
    for i in range(MAX_FAILURES_PER_ADDRESS):  # the address at its limit: refused too
        with pytest.raises(SignInRefusedError):
            store.authenticate(f"nobody{i}", "wrong password", address="c")
    with pytest.raises(TooManySignInsError, match="this address"):
        store.authenticate("ann", "another good password", address="c")
    store.set_user_scope("ann", naan="99999", shoulder="b5")  # the scope is read each time
    assert store.authenticate("ann", "another good password", address="a").scope.shoulder == "b5"
    before = len(checks)
    monkeypatch.setattr(accounts, "_VERIFIED_FOR", -1.0)  # remembered no longer
    assert store.authenticate("ann", "another good password", address="a").name == "ann"
    assert len(checks) == before + 1


def test_a_success_takes_back_its_own_count(store: Store) -> None:
    """Counted before the check, an attempt that succeeds is not left counted against its address: more
    sign-ins than the address's limit from one address all succeed."""
    store.add_user("ann", PASSWORD, naan="99999")
    for _ in range(MAX_FAILURES_PER_ADDRESS + 2):
        assert store.authenticate("ann", PASSWORD, address="203.0.113.5").name == "ann"
    assert _raw_count(store, "signin_failures") == 0
    with pytest.raises(SignInRefusedError):
        store.authenticate("ann", "wrong password", address="203.0.113.5")
    assert _raw_count(store, "signin_failures") == 2  # the account's and the address's


def test_a_success_forgives_only_the_failures_of_its_own_address(store: Store) -> None:
    """Failed guesses from other addresses stay counted when the user signs in (before, any success
    cleared the account's failures: an attacker got a fresh allowance each time the user signed in);
    the user's own mistakes, from the address that then succeeds, are taken back."""
    store.add_user("ann", PASSWORD, naan="99999")
    for i in range(MAX_FAILURES_PER_USER - 2):  # an attacker, from addresses of their own
        with pytest.raises(SignInRefusedError):
            store.authenticate("ann", "guess", address=f"198.51.100.{i}")
    with pytest.raises(SignInRefusedError):  # ann mistypes once, then signs in, from her address
        store.sign_in("ann", "typo password", address="192.0.2.1")
    assert store.sign_in("ann", PASSWORD, address="192.0.2.1")[0].name == "ann"
    assert store.authenticate("ann", PASSWORD, address="192.0.2.1").name == "ann"
    with pytest.raises(SignInRefusedError):  # the attacker's guesses still count: two more reach the limit
        store.authenticate("ann", "guess", address="198.51.100.50")
    with pytest.raises(SignInRefusedError):
        store.authenticate("ann", "guess", address="198.51.100.51")
    with pytest.raises(TooManySignInsError, match="this account"):
        store.sign_in("ann", PASSWORD, address="192.0.2.1")


def test_a_success_takes_back_exactly_its_accounts_rows_from_its_address(store: Store) -> None:
    """What a success deletes, row by row: the account's failures from its address — not the address's
    own count, not another account's failures from that address, not the account's failures from
    elsewhere, not a row without an address (written before migration 13)."""
    store.add_user("ann", PASSWORD, naan="99999")
    store.add_user("bob", PASSWORD, naan="99999")
    for name, address in (("ann", "192.0.2.1"), ("bob", "192.0.2.1"), ("ann", "198.51.100.9")):
        with pytest.raises(SignInRefusedError):
            store.sign_in(name, "wrong password", address=address)
    at = stored_time(_dt.datetime.now(_dt.UTC))
    raw_sql(store, "INSERT INTO signin_failures (subject, at) VALUES (?, ?)", ("user:ann", at))
    assert store.sign_in("ann", PASSWORD, address="192.0.2.1")[0].name == "ann"
    left = raw_sql(store, "SELECT subject, address FROM signin_failures")
    assert sorted(left, key=repr) == sorted([
        ("addr:192.0.2.1", "addr:192.0.2.1"), ("addr:192.0.2.1", "addr:192.0.2.1"),
        ("addr:198.51.100.9", "addr:198.51.100.9"), ("user:ann", "addr:198.51.100.9"), ("user:ann", None),
        ("user:bob", "addr:192.0.2.1"),
    ], key=repr)  # fmt: skip


def test_one_scope_rule_for_users_and_api_keys() -> None:
    """ApiKey.allows and User.scope both decide through Scope.allows (DESIGN.md: one function)."""
    cases = [("99999", "fk4"), ("99999", "b5"), ("12345", "fk4"), ("99999", None)]
    for naan, shoulder in [("99999", None), ("99999", "fk4")]:
        key = ApiKey("k", naan, shoulder)
        user = User("u", naan, shoulder)
        for case in cases:
            assert key.allows(*case) == user.scope.allows(*case) == Scope(naan, shoulder).allows(*case)
    assert User("root", "99999", admin=True).scope.allows("12345", "x")
    revoked = ApiKey("k", "99999", revoked_at=_dt.datetime.now(_dt.UTC))
    assert not revoked.allows("99999")


def test_user_owned_api_key(store: Store) -> None:
    key, secret = store.create_api_key("99999", "fk4", label="mine", owner="ann")
    assert key.owner == "ann"
    assert store.verify_api_key(secret) is None  # its maker is not a user: the key is dead
    assert store.history("api_key", key.key_id)[0].after == {
        "label": "mine", "naan": "99999", "owner": "ann", "shoulder": "fk4"}
    assert store.check() == ["API key " + key.key_id + ": owner ann is not a user"]
    store.add_user("ann", PASSWORD, naan="99999", shoulder="fk4")
    assert store.verify_api_key(secret) == key


def test_a_key_lives_only_while_its_maker_may(store: Store) -> None:
    """A user's key stops working when the user is disabled or their scope no longer covers it
    (regression: only the user's sessions ended, the keys went on), and works again when it does."""
    store.add_user("ann", PASSWORD, naan="99999", shoulder="fk4")
    key, secret = store.create_api_key("99999", "fk4", label="nightly", owner="ann")
    local, local_secret = store.create_api_key("99999", "fk4", label="cron")  # a local command's
    assert store.verify_api_key(secret) == key
    store.disable_user("ann")
    assert store.verify_api_key(secret) is None
    store.enable_user("ann")
    assert store.verify_api_key(secret) == key
    store.set_user_scope("ann", naan="12345")
    assert store.verify_api_key(secret) is None
    store.set_user_scope("ann", naan="99999", shoulder="b5")
    assert store.verify_api_key(secret) is None  # another shoulder
    store.set_user_scope("ann", naan="99999")
    assert store.verify_api_key(secret) == key  # the whole NAAN covers fk4
    assert store.verify_api_key(local_secret) == local


def _pidkit(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pidkit", *args], input=stdin, capture_output=True,
                          text=True, timeout=120, env={**os.environ})  # fmt: skip


def test_cli_user_commands(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert _pidkit("init", "--db", db).returncode == 0
    done = _pidkit("user", "add", "ann", "--naan", "99999", "--shoulder", "fk4", "--password-stdin",
                   "--db", db, stdin=PASSWORD + "\n")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    assert "scope 99999/fk4" in done.stderr
    done = _pidkit("user", "add", "root", "--naan", "99999", "--admin", "--password-stdin", "--db", db,
                   stdin=PASSWORD + "\n")  # fmt: skip
    assert done.returncode == 0, done.stderr
    listed = _pidkit("user", "list", "--db", db).stdout.splitlines()
    assert [line.split("\t")[:4] for line in listed] == [
        ["ann", "99999", "99999/fk4", "user"], ["root", "99999", "*", "admin"]]
    done = _pidkit("user", "passwd", "ann", "--password-stdin", "--db", db, stdin="another good one\n")
    assert done.returncode == 0, done.stderr
    with open_store(db) as s:
        assert s.sign_in("ann", "another good one", address="t")[0].name == "ann"
    done = _pidkit("user", "disable", "ann", "--db", db)
    assert done.returncode == 0 and done.stdout.split("\t")[-1].strip() != "-"
    with open_store(db) as s:
        assert not s.get_user("ann").active


@pytest.mark.parametrize(
    ("args", "stdin", "code", "message"),
    [
        (["user", "add", "bob", "--naan", "99999", "--password-stdin"], "short\n", 1, "10 to 1024"),
        (["user", "add", "bob", "--naan", "99999"], "", 2, "use --password-stdin"),
        (["user", "add", "bob", "--naan", "99999", "--password-stdin"], "\n", 2, "empty password"),
        (["user", "add", "b b", "--naan", "99999", "--password-stdin"], PASSWORD + "\n", 1, "'b b'"),
        (["user", "disable", "zed"], None, 1, "no such user in 'zed'"),
        (["user", "add", "bob"], None, 2, "--naan"),
    ],
)
def test_cli_user_errors_are_one_line(
    tmp_path: Path, args: list[str], stdin: str | None, code: int, message: str
) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert _pidkit("init", "--db", db).returncode == 0
    done = _pidkit(*args, "--db", db, stdin=stdin)
    assert done.returncode == code, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    if code == 1:
        assert done.stderr.startswith("pidkit: error: ") and done.stderr.count("\n") == 1


def test_cookie_key_is_shared_by_every_opener_and_never_dumped(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'k.db'}"
    with open_store(url) as one, open_store(url) as two:
        key = one.cookie_key()
        assert len(key) == 32 and two.cookie_key() == key == one.cookie_key()
        import io

        out = io.StringIO()
        one.dump(out)
        assert key.hex() not in out.getvalue() and "service_secrets" not in out.getvalue()


def test_an_overlong_password_is_refused_and_counted(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never hashed (no Argon2 work for a huge body), and counted as a failure."""
    import pidkit.store.accounts as accounts

    store.add_user("ann", PASSWORD, naan="99999")
    verify = accounts._verify
    hashed: list[int] = []

    def counting(digest: str, password: str) -> bool:
        hashed.append(len(password))
        return verify(digest, password)

    monkeypatch.setattr(accounts, "_verify", counting)
    with pytest.raises(SignInRefusedError):
        store.sign_in("ann", PASSWORD + "x" * 2000, address="a")
    for _ in range(MAX_FAILURES_PER_USER - 1):
        with pytest.raises(SignInRefusedError):
            store.sign_in("ann", "x" * 5000, address="a")
    with pytest.raises(TooManySignInsError):
        store.sign_in("ann", PASSWORD, address="b")
    assert hashed == []


TOKEN = "tok_" + "a" * 20


def test_a_form_token_is_claimed_once_and_answers_with_what_was_settled(store: Store) -> None:
    assert store.claim_form("ann", TOKEN) is None  # the first claim: do the work
    assert store.claim_form("ann", TOKEN) == ""  # at work, nothing recorded yet
    store.settle_form("ann", TOKEN, "/office/id?ark=ark%3A99999%2Ffk4x")
    assert store.claim_form("ann", TOKEN) == "/office/id?ark=ark%3A99999%2Ffk4x"
    assert store.claim_form("bob", TOKEN) is None  # per user
    store.settle_form("bob", TOKEN, None)  # refused: let go, a new try
    assert store.claim_form("bob", TOKEN) is None
    for damaged in ("", "short", "a" * 65, "a" * 19 + "/", "é" * 20):
        with pytest.raises(StoreError, match="damaged"):
            store.claim_form("ann", damaged)
    out = io.StringIO()
    store.dump(out)
    assert TOKEN not in out.getvalue()  # never in a dump, as sessions


def test_a_form_token_is_forgotten_after_a_day(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    import pidkit.store.accounts as accounts

    start = _dt.datetime(2026, 11, 1, tzinfo=_dt.UTC)
    monkeypatch.setattr(accounts, "_now", lambda: start)
    assert store.claim_form("ann", TOKEN) is None
    store.settle_form("ann", TOKEN, "/office/reserved?ark=x")
    second = _dt.timedelta(seconds=1)
    monkeypatch.setattr(accounts, "_now", lambda: start + accounts.FORM_TOKEN_LIFETIME - second)
    assert store.claim_form("ann", "tok_" + "b" * 20) is None
    assert store.claim_form("ann", TOKEN) == "/office/reserved?ark=x"  # still remembered
    monkeypatch.setattr(accounts, "_now", lambda: start + accounts.FORM_TOKEN_LIFETIME + second)
    assert store.claim_form("ann", "tok_" + "c" * 20) is None  # a claim forgets the old ones
    assert raw_sql(store, "SELECT count(*) FROM form_tokens WHERE token = ?", (TOKEN,)) == [(0,)]
    assert _dt.timedelta(days=1) == accounts.FORM_TOKEN_LIFETIME
    # kept longer when asked (sessions that last longer than a day)
    assert store.claim_form("ann", TOKEN, keep=_dt.timedelta(hours=48)) is None
    monkeypatch.setattr(accounts, "_now", lambda: start + _dt.timedelta(hours=24 + 47))  # 47 hours on
    assert store.claim_form("ann", TOKEN, keep=_dt.timedelta(hours=48)) == ""


def test_a_form_token_sent_at_once_by_many_is_claimed_by_one(url: str) -> None:
    """Requests sending one form at the same moment (each its own store object, as workers are): one
    claim does the work."""
    stores = [open_store(url) for _ in range(4)]
    try:
        barrier = threading.Barrier(len(stores))
        results: list[str | None] = []

        def claim(s: Store) -> None:
            barrier.wait()
            results.append(s.claim_form("ann", TOKEN))

        threads = [threading.Thread(target=claim, args=(s,)) for s in stores]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(results, key=lambda r: r is not None) == [None, "", "", ""]
    finally:
        for s in stores:
            s.close()
