"""An EZID client written from EZID's API documentation alone (specs/ezid/apidoc.2.rst; Python's urllib,
no pidkit code), against a real ``pidkit serve --ezid-base /ezid`` on a free port, on both backends.

The client's ANVL functions are the documentation's ("Request & response bodies"), its authentication
the documentation's two ways ("Authentication": HTTP Basic — by hand and by urllib's
HTTPBasicAuthHandler answering the ``EZID`` realm's challenge — and the one-time login's cookie).  The
store is opened by the test only to set up users and to check the history afterwards."""

from __future__ import annotations

import base64
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pidkit.store import open_store
from test_web_serve import _env, _running, free_port

pytest_plugins = ["_webutil"]

PASSWORD = "correct horse battery"


# -- the client: from the documentation ----------------------------------------------------------------
def escape(s: str) -> str:
    return re.sub("[%:\r\n]", lambda c: "%%%02X" % ord(c.group(0)), s)  # noqa: UP031 - the doc's code


def unescape(s: str) -> str:
    return re.sub("%([0-9A-Fa-f][0-9A-Fa-f])", lambda m: chr(int(m.group(1), 16)), s)


def to_anvl(metadata: dict[str, str]) -> bytes:
    return "\n".join("%s: %s" % (escape(name), escape(value))  # noqa: UP031 - the documentation's code
                     for name, value in metadata.items()).encode("UTF-8")


def from_anvl(anvl: bytes) -> dict[str, str]:
    return dict(tuple(unescape(v).strip() for v in line.split(":", 1))  # type: ignore[misc]
                for line in anvl.decode("UTF-8").splitlines())


@dataclass
class Answer:
    status: int
    first: str  # the status line: "success: …" / "error: …"
    metadata: dict[str, str]
    headers: dict[str, str]


class Client:
    """EZID's API over urllib: ``auth`` is (username, password) for HTTP Basic, ``cookie`` a session."""

    def __init__(self, base: str, auth: tuple[str, str] | None = None, cookie: str | None = None) -> None:
        self.base, self.auth, self.cookie = base, auth, cookie

    def issue(self, method: str, path: str, metadata: dict[str, str] | None = None,
              query: dict[str, str] | None = None) -> Answer:
        url = self.base + path + ("?" + urllib.parse.urlencode(query) if query else "")
        r = urllib.request.Request(url, data=None if metadata is None else to_anvl(metadata), method=method)
        r.add_header("Accept", "text/plain")
        if metadata is not None:
            r.add_header("Content-Type", "text/plain; charset=UTF-8")
        if self.auth:
            r.add_header("Authorization", "Basic " + base64.b64encode(":".join(self.auth).encode()).decode())
        if self.cookie:
            r.add_header("Cookie", self.cookie)
        try:
            with urllib.request.urlopen(r, timeout=30) as c:
                return self._answer(c.status, c.read(), dict(c.headers))
        except urllib.error.HTTPError as e:
            return self._answer(e.code, e.read(), dict(e.headers))

    @staticmethod
    def _answer(status: int, body: bytes, headers: dict[str, str]) -> Answer:
        assert headers["content-type"].lower() == "text/plain; charset=utf-8"
        return Answer(status, body.decode("UTF-8").splitlines()[0], from_anvl(body), headers)


# -- a live server ---------------------------------------------------------------------------------------
@dataclass
class Live:
    base: str
    url: str  # the store's


@pytest.fixture
def live(store_url: str) -> Iterator[Live]:
    with open_store(store_url) as store:
        store.add_naan("99999", "test", shoulders=["fk4", "b5"])
        store.add_naan("12346", "other", shoulders=["x5"])
        store.create_minter("m-fk4", naan="99999", template="fk4.reedeedk", seed=7)
        store.add_user("ann", PASSWORD, naan="99999")
        store.add_user("bob", PASSWORD, naan="12346")
    port = free_port()
    argv = [sys.executable, "-m", "pidkit", "serve", "--db", store_url, "--port", str(port),
            "--ezid-base", "/ezid", "--log-level", "warning", "--offline"]
    with _running(argv, _env(), port):
        yield Live(f"http://127.0.0.1:{port}/ezid", store_url)


# -- the documented interactions ----------------------------------------------------------------------------
def test_status(live: Live) -> None:
    a = Client(live.base).issue("GET", "/status")
    assert (a.status, a.first) == (200, "success: EZID is up")


def test_create_view_update_delete_with_basic_authentication(live: Live) -> None:
    ann = Client(live.base, auth=("ann", PASSWORD))
    metadata = {"_target": "http://www.cdlib.org/", "erc.who": "Proust, Marcel",
                "erc.what": "Remembrance: of Things Past\r\n100% (vol. 1)\nline 3",
                "dc.title": "À la recherche du temps perdu — 失われた時を求めて", "my:element": "a:b"}
    a = ann.issue("PUT", "/id/ark:/99999/b5test", metadata)
    assert (a.status, a.first) == (201, "success: ark:/99999/b5test")
    a = Client(live.base).issue("GET", "/id/ark:/99999/b5test")  # no authentication to view
    assert (a.status, a.first) == (200, "success: ark:/99999/b5test")
    assert {k: a.metadata[k] for k in metadata} == metadata  # every character came back
    assert a.metadata["_status"] == "public" and a.metadata["_owner"] == "ann"
    assert a.metadata["_created"].isdigit() and a.metadata["_updated"].isdigit()
    a = ann.issue("POST", "/id/ark:/99999/b5test", {"_target": "http://www.cdlib.org/moved", "dc.title": ""})
    assert (a.status, a.first) == (200, "success: ark:/99999/b5test")
    got = Client(live.base).issue("GET", "/id/ark:/99999/b5test").metadata
    assert got["_target"] == "http://www.cdlib.org/moved" and "dc.title" not in got
    a = ann.issue("PUT", "/id/ark:/99999/b5test", {"erc.when": "1922"}, query={"update_if_exists": "yes"})
    assert (a.status, a.first) == (200, "success: ark:/99999/b5test")
    # only reserved identifiers may be deleted
    a = ann.issue("DELETE", "/id/ark:/99999/b5test")
    assert (a.status, a.first) == (400, "error: bad request - identifier status does not support deletion")
    assert ann.issue("PUT", "/id/ark:/99999/b5res", {"_status": "reserved"}).status == 201
    a = ann.issue("DELETE", "/id/ark:/99999/b5res")
    assert (a.status, a.first) == (200, "success: ark:/99999/b5res")
    a = Client(live.base).issue("GET", "/id/ark:/99999/b5res")
    assert (a.status, a.first) == (400, "error: bad request - no such identifier")
    with open_store(live.url) as store:
        assert {h.principal for h in store.history("ark", "ark:99999/b5test")} == {"user:ann"}


def test_errors(live: Live) -> None:
    anonymous, bob = Client(live.base), Client(live.base, auth=("bob", PASSWORD))
    a = anonymous.issue("GET", "/id/ark:/99999/bogus")
    assert (a.status, a.first) == (400, "error: bad request - no such identifier")
    a = anonymous.issue("PUT", "/id/ark:/99999/b5x", {"_target": "http://www.cdlib.org/"})
    assert (a.status, a.first) == (401, "error: unauthorized")
    assert a.headers["www-authenticate"] == 'Basic realm="EZID"'
    a = bob.issue("PUT", "/id/ark:/99999/b5x", {"_target": "http://www.cdlib.org/"})
    assert (a.status, a.first) == (403, "error: forbidden")
    a = Client(live.base, auth=("ann", "not the password")).issue("POST", "/id/ark:/99999/b5x", {})
    assert (a.status, a.first) == (401, "error: unauthorized")
    a = Client(live.base, auth=("ann", PASSWORD)).issue("PUT", "/id/doi:10.9999/test", {})
    assert a.status == 400 and a.first.startswith("error: bad request - ")


def test_mint_and_prefix_match(live: Live) -> None:
    ann = Client(live.base, auth=("ann", PASSWORD))
    a = ann.issue("POST", "/shoulder/ark:/99999/fk4", {"_target": "http://www.cdlib.org/${identifier}"})
    assert a.status == 201 and a.first.startswith("success: ark:/99999/fk4")
    minted = a.first.split(": ", 1)[1]
    got = Client(live.base).issue("GET", "/id/" + minted).metadata
    assert got["_target"] == "http://www.cdlib.org/" + minted
    assert ann.issue("PUT", "/id/ark:/99999/b5/root", {"_target": "http://www.cdlib.org"}).status == 201
    a = Client(live.base).issue("GET", "/id/ark:/99999/b5/root/andmore", query={"prefix_match": "yes"})
    assert (a.status, a.first) == (200, "success: ark:/99999/b5/root in_lieu_of ark:/99999/b5/root/andmore")
    assert a.metadata["_target"] == "http://www.cdlib.org"


def test_one_time_login_with_the_challenge_then_the_cookie(live: Live) -> None:
    h = urllib.request.HTTPBasicAuthHandler()
    h.add_password("EZID", live.base + "/", "ann", PASSWORD)
    o = urllib.request.build_opener(h)
    c = o.open(live.base + "/login")  # answers EZID's 401 challenge, then logs in
    assert c.read() == b"success: session cookie returned\n"
    cookie = c.headers["Set-Cookie"].split(";")[0]
    session = Client(live.base, cookie=cookie)
    a = session.issue("PUT", "/id/ark:/99999/b5cookie", {"_target": "http://www.cdlib.org/"})
    assert (a.status, a.first) == (201, "success: ark:/99999/b5cookie")
    a = session.issue("GET", "/logout")
    assert a.status == 200 and a.first.startswith("success: ")
    a = session.issue("POST", "/id/ark:/99999/b5cookie", {"erc.what": "after logout"})
    assert (a.status, a.first) == (401, "error: unauthorized")
    with open_store(live.url) as store:
        assert [h.principal for h in store.history("ark", "ark:99999/b5cookie")] == ["user:ann"]


def test_serve_refuses_a_bad_base_path(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "pidkit", "serve", "--db", f"sqlite:///{tmp_path}/s.db",
                        "--port", "0", "--ezid-base", "ezid/"], capture_output=True, text=True, env=_env(),
                       timeout=120, check=False)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == ("pidkit: error: PIDKIT_EZID_BASE must be a path like /ezid (no trailing slash) in "
                        "'ezid/'\n")
