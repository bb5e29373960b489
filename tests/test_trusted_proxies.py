"""``pidkit serve --trusted-proxies``: behind a reverse proxy every request comes from the proxy's address,
so the sign-in limits per client address would count every client as one (and a success would take back
every client's failures of the account).  A proxy named there is believed about the client it forwards
for (``X-Forwarded-For``, right-most entry that is not a trusted proxy) and the scheme
(``X-Forwarded-Proto``); without it the headers are ignored.  Real ``pidkit serve`` processes on 127.0.0.1."""

from __future__ import annotations

import base64
import http.client
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pidkit.store import open_store
from test_web_serve import _env, _running, free_port

PASSWORD = "correct horse battery"


def _get(port: int, path: str, headers: dict[str, str]) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.mark.parametrize(("trusted", "believed"), [
    (None, False), ("127.0.0.1", True), ("10.0.0.0/8, 127.0.0.0/8", True),
    ("10.0.0.0/8", False),  # proxies are named, but the request does not come from one of them
])  # fmt: skip
def test_the_client_address_and_scheme_are_believed_only_from_a_trusted_proxy(
    tmp_path: Path, trusted: str | None, believed: bool
) -> None:
    db = tmp_path / "s.db"
    with open_store(f"sqlite:///{db}") as store:
        store.add_naan("99999")
        store.add_user("ann", PASSWORD, naan="99999")
    port = free_port()
    argv = [sys.executable, "-m", "pidkit", "serve", "--db", f"sqlite:///{db}", "--port", str(port),
            "--log-level", "warning", *(["--trusted-proxies", trusted] if trusted else [])]  # fmt: skip
    # the left entry is whatever the client claimed; the right one is what the proxy saw
    forwarded = {"X-Forwarded-For": "203.0.113.9, 198.51.100.7", "X-Forwarded-Proto": "https"}
    with _running(argv, _env(), port):
        wrong = _get(port, "/ezid/login", {"Authorization": _basic("ann", "wrong password"), **forwarded})
        right = _get(port, "/ezid/login", {"Authorization": _basic("ann", PASSWORD), **forwarded})
    assert wrong.status == 401 and right.status == 200
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT subject, address FROM signin_failures ORDER BY subject").fetchall()
    seen = "addr:198.51.100.7" if believed else "addr:127.0.0.1"
    # the account's failure was sent from the address that then signed in: taken back; the address's stays
    assert rows == [(seen, seen)]
    cookie = right.getheader("Set-Cookie") or ""
    assert ("Secure" in cookie) == believed, cookie


def test_serve_refuses_a_proxy_that_is_not_an_address(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "pidkit", "serve", "--db", f"sqlite:///{tmp_path}/s.db",
                        "--port", "0", "--trusted-proxies", "127.0.0.1,*"], capture_output=True, text=True,
                       env=_env(), timeout=120, check=False)  # fmt: skip
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == ("pidkit: error: PIDKIT_TRUSTED_PROXIES: not an IP address or network (CIDR): '*' "
                        "does not appear to be an IPv4 or IPv6 address in '127.0.0.1,*' at position 11\n")
