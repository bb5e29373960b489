"""``pidkit edge nginx`` (:mod:`pidkit.edge`): a real nginx with the generated files in front of a real
``pidkit serve`` answers every request exactly as pidkit does alone, and answers the plain redirects
itself (checked by stopping pidkit); hostile targets cannot change the configuration; ``--watch``
rewrites the map and reloads nginx after a change.

Everything listens on 127.0.0.1 only; nginx runs unprivileged with a temp prefix, as in
``tests/test_docs.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import tracemalloc
import urllib.parse
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import psycopg_pool
import pytest

from pidkit.edge import (
    LOCATION_SAFE,
    MAP_FILE,
    SERVER_FILE,
    CaseFilter,
    location_header,
    nginx_string,
    request_paths,
    watch,
    write_edge,
    write_map,
)
from pidkit.errors import StoreError
from pidkit.store import Binding, Erc, Store, open_store

NAAN = "12345"

#: Targets a user may store (``validate_target`` accepts them) that mean something to nginx.
HOSTILE = {
    "ark:12345/h1": "https://example.org/$host$request_uri",
    "ark:12345/h2": 'https://example.org/a";}server{return;}#',
    "ark:12345/h3": "https://example.org/a\\b\\\\\"c",
    "ark:12345/h4": "https://example.org/{x}${pidkit_edge_dollar}${'",
    "ark:12345/h5": "https://example.org/caf\u00e9/\u65e5\u672c?q='x'&y=(1);z=%24",
    "ark:12345/h6": "https://example.org/a;return;}{",
    "ark:12345/h7": "https://example.org/\u00e9\u00e9#frag",
}


def nginx_binary() -> str:
    """The nginx executable (``make test`` installs Debian's nginx-light)."""
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if found is None:
        pytest.fail("nginx is not installed (apt-get install nginx-light; make test installs it)")
    return found


def seed(store: Store) -> None:
    """Varied bindings: public, hyphenated, letter NAAN, passthrough, reserved, tombstoned,
    case twins, %xx and non-ASCII names, '$' and other specials in names, hostile and non-ASCII targets."""
    store.add_naan(NAAN, "test")
    store.add_naan("b9999", "letters")
    store.bind("ark:12345/x1", "https://example.org/x1", erc=Erc(who="A", what="B", when="2020"))
    store.bind("ark:/12345/x-2", "https://example.org/x2")
    store.bind("ark:12345/x1/c3.pdf", "https://example.org/x1/c3.pdf")
    store.bind("ark:B9999/y", "https://example.org/letters")
    store.bind("ark:12345/coll", "https://example.org/coll/", passthrough=True)
    store.bind("ark:12345/res", None, status="reserved")
    store.bind("ark:12345/gone", "https://example.org/gone")
    store.tombstone("ark:12345/gone", "withdrawn")
    store.bind("ark:12345/Ab", "https://example.org/Ab")
    store.bind("ark:12345/aB", "https://example.org/aB")
    store.bind("ark:12345/a%2Fb", "https://example.org/pct")
    store.bind("ark:12345/x1.v2", "https://example.org/variant")
    store.bind("ark:12345/caf%C3%A9", "https://example.org/caf\u00e9")  # a non-ASCII name, %-encoded
    store.bind("ark:12345/a$b", "https://example.org/dollar")
    store.bind("ark:12345/a=b*c+d@e~f_g", "https://example.org/specials")
    for ark, target in HOSTILE.items():
        store.bind(ark, target)


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for_port(port: int, proc: subprocess.Popen[Any], what: str, timeout: float = 30) -> None:
    """Wait until something accepts connections on ``port`` (or fail with the process's output)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            pytest.fail(f"{what} exited with {proc.returncode}:\n{out}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.05)
    pytest.fail(f"{what} did not listen on port {port} within {timeout} s")


@dataclass(frozen=True)
class Answer:
    """What a client sees of a response (the headers pidkit sets, not Date/Server/Connection)."""

    status: int
    location: str | None
    content_type: str | None
    content_length: str | None
    body: bytes
    extra: tuple[tuple[str, str], ...]


#: Headers every server sets its own way (nginx's proxy replaces Server and Date).
_TRANSPORT = {"date", "server", "connection", "keep-alive", "transfer-encoding"}


def ask(port: int, method: str, path: str, accept: str | None = None) -> Answer:
    """``method path`` sent exactly as written (no client-side normalization)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        if accept:
            conn.putheader("Accept", accept)
        conn.endheaders()
        resp = conn.getresponse()
        headers = [(k.lower(), v) for k, v in resp.getheaders()]
        body = resp.read()
    finally:
        conn.close()
    got = dict(headers)
    extra = tuple(sorted((k, v) for k, v in headers
                         if k not in _TRANSPORT | {"location", "content-type", "content-length"}))
    return Answer(resp.status, got.get("location"), got.get("content-type"), got.get("content-length"),
                  body, extra)


def requests() -> list[tuple[str, str, str | None]]:
    """(method, path as sent, Accept) — every spelling to compare."""
    paths = [
        "/ark:12345/x1", "/ark:/12345/x1", "/ARK:12345/x1", "/ark:/12345/x-1", "/ark:12345/x1?",
        "/ark:12345/x1?info", "/ark:12345/x1??", "/ark:12345/x1?x=1", "/ark:12345/x1/",
        "/ark:12345/x1/c3.pdf",
        "/ark:/12345/x1/c3.pdf", "/ark:12345/x1.v2", "/ark:12345/x2", "/ark:/12345/x-2", "/ark:12345/x-2",
        "/ark:b9999/y", "/ark:/b9999/y", "/ark:B9999/y", "/ark:12345/coll", "/ark:12345/coll/p/q.html",
        "/ark:12345/coll/../x1", "/ark:12345/res", "/ark:12345/un", "/ark:12345/un?info", "/ark:12345/gone",
        "/ark:12345/gone?info", "/ark:12345/Ab", "/ark:12345/aB", "/ark:12345/AB", "/ark:12345/ab",
        "/ark:12345/a%2Fb", "/ark:12345/a%2fb", "/ark:12345/nope", "/ark:54321/elsewhere", "/ark:",
        "/ark:12345", "/ark:12345/caf%C3%A9", "/ark:12345/caf%c3%a9", "/ark:12345/a$b",
        "/ark:12345/a%24b", "/ark:12345/a=b*c+d@e~f_g", "/ark:/12345/a=b*c+d@e~f_g",
        "/.well-known/ark", "/id/3jzfcijpj2z2a", "/ark:12345//x1", "/ark:12345/./x1", "/_pidkit_edge_302",
    ]
    for ark in HOSTILE:
        rest = ark[len("ark:"):]
        paths += [f"/{ark}", f"/ark:/{rest}", f"/{ark}?info"]
    out: list[tuple[str, str, str | None]] = [("GET", p, None) for p in paths]
    heads = ("/ark:12345/x1", "/ark:/12345/x1", "/ark:12345/h2", "/ark:12345/gone")
    out += [("HEAD", p, None) for p in heads]
    out += [("POST", "/ark:12345/x1", None), ("PUT", "/ark:12345/x1", None)]
    out += [("GET", "/ark:12345/x1?info", "application/json"), ("GET", "/ark:12345/nope", "text/html")]
    return out


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite store with the bindings of :func:`seed`."""
    url = f"sqlite:///{tmp_path_factory.mktemp('edge') / 'edge.db'}"
    with open_store(url) as store:
        seed(store)
    return url


def nginx_conf(prefix: Path, files: Path, port: int) -> Path:
    """An nginx.conf running unprivileged under ``prefix`` that includes the edge files in ``files``."""
    conf = prefix / "nginx.conf"
    conf.write_text(
        f"daemon off;\nworker_processes 1;\npid {prefix / 'nginx.pid'};\nerror_log {prefix / 'error.log'};\n"
        "events { worker_connections 64; }\nhttp {\n"
        f"  access_log off;\n  client_body_temp_path {prefix}/body;\n  proxy_temp_path {prefix}/proxy;\n"
        f"  fastcgi_temp_path {prefix}/fcgi;\n  uwsgi_temp_path {prefix}/uwsgi;\n"
        f"  scgi_temp_path {prefix}/scgi;\n"
        f"  include {files / MAP_FILE};\n"
        f"  server {{\n    listen 127.0.0.1:{port};\n    include {files / SERVER_FILE};\n  }}\n}}\n",
        encoding="utf-8",
    )
    return conf


@contextlib.contextmanager
def running(argv: list[str], port: int, what: str) -> Iterator[subprocess.Popen[str]]:
    """Run ``argv`` until the block ends, once it listens on ``port``."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for_port(port, proc, what)
        yield proc
    finally:
        stop(proc)


def stop(proc: subprocess.Popen[str]) -> None:
    """Terminate ``proc`` (and wait for it)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout:
        proc.stdout.close()


def serve(url: str, port: int) -> list[str]:
    """The ``pidkit serve`` command line."""
    return [sys.executable, "-m", "pidkit", "serve", "--port", str(port), "--db", url,
            "--log-level", "warning"]


def edge(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``pidkit edge …`` through the real entry point."""
    return subprocess.run([sys.executable, "-m", "pidkit", "edge", *args], capture_output=True, text=True,
                          check=False, timeout=120)


def expected_mapped(url: str) -> set[str]:
    """The request paths nginx must answer itself, worked out here from the bindings: canonical
    spellings of public bindings, minus the %xx one and the second of the case twins."""
    with open_store(url) as store:
        public = {b.key for b in store.list_bindings(kind="ark", limit=1000) if b.status == "public"}
    public -= {"ark:12345/a%2Fb", "ark:12345/caf%C3%A9", "ark:12345/a$b"}  # not plain: pidkit answers
    paths = {p for key in public for p in (f"/{key}", f"/ark:/{key[len('ark:'):]}")}
    return paths - {"/ark:12345/aB", "/ark:/12345/aB"}  # 'Ab' sorts (and is mapped) first


# --- the files ---------------------------------------------------------------------------------------


def test_location_encoding_is_pidkits() -> None:
    from pidkit.web import fastpath

    assert LOCATION_SAFE == fastpath._LOCATION_SAFE
    for target in [*HOSTILE.values(), "https://e.org/caf\u00e9 x"]:
        sent: list[MutableMapping[str, Any]] = []

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)  # noqa: B023 (called before the loop moves on)

        asyncio.run(fastpath.redirect(send, target))
        assert dict(sent[0]["headers"])[b"location"] == location_header(target).encode("ascii")


def test_request_paths_only_for_what_pidkit_redirects() -> None:
    public = Binding("ark", "ark:1/x", "ark:/1/x", "https://e.org/")
    assert request_paths(public) == ("/ark:1/x", "/ark:/1/x")
    for changed in (
        Binding("ark", "ark:1/x", "", None),
        Binding("ark", "ark:1/x", "", "https://e.org/", status="reserved"),
        Binding("ark", "ark:1/x", "", "https://e.org/", status="unavailable"),
        Binding("ark", "ark:1/x", "", "https://e.org/", status="tombstoned"),
        Binding("ark", "ark:1/x", "", "javascript:alert(1)"),
        Binding("ark", "ark:1/x", "", "https://e.org/a\nb"),
        Binding("ark", "ark:1/a%2Fb", "", "https://e.org/"),
        Binding("ark", "ark:1/a$b", "", "https://e.org/"),
        Binding("ark", "ark:1/x-y", "", "https://e.org/"),  # not a normalized key: never looked up as such
        Binding("uuid", "ark:1/x", "", "https://e.org/"),
    ):
        assert request_paths(changed) == (), changed


@pytest.mark.parametrize("text", ['https://e.org/"', "https://e.org/a b", "https://e.org/\\", "https://e.org/\n",
                                  "/ark:1/x y", "/ark:1/$x", "/ark:1/x;"])
def test_nginx_string_refuses_what_it_cannot_quote(text: str) -> None:
    with pytest.raises(ValueError, match="not plain enough"):
        nginx_string(text)


def test_hostile_targets_stay_data(store_url: str, tmp_path: Path) -> None:
    with open_store(store_url) as store:
        write_edge(store, tmp_path, upstream="http://127.0.0.1:9")
    text = (tmp_path / MAP_FILE).read_text(encoding="ascii")
    entries = 0
    for line in text.splitlines():  # every line is one the writer means: entries are two plain strings
        if line.startswith('    "'):
            key, value = line.strip().removesuffix(";").split(" ", 1)
            assert key.startswith('"') and key.endswith('"') and '"' not in key[1:-1], line
            assert value.startswith('"') and value.endswith('"') and '"' not in value[1:-1], line
            assert "\\" not in line and "$" not in value.replace("${pidkit_edge_dollar}", ""), line
            entries += 1
        else:
            known = ("# ", "map_hash_", "geo $pidkit_edge_dollar ", "map $request_")
            assert line.startswith(known) or line in ('    default "";', "}"), line
    assert entries == 2 * len(expected_mapped(store_url))
    dollar = "${pidkit_edge_dollar}"
    assert f'"/ark:12345/h1" "https://example.org/{dollar}host{dollar}request_uri"' in text
    check = subprocess.run([nginx_binary(), "-t", "-c", str(nginx_conf(tmp_path, tmp_path, free_port())),
                            "-p", str(tmp_path)], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr


class ManyBindings:
    """A store stand-in with ``n`` public bindings made up page by page (no database, nothing kept)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def list_bindings(self, *, kind: str, after: str | None, limit: int) -> list[Binding]:
        start = 0 if after is None else int(after.rsplit("x", 1)[1]) + 1
        return [Binding("ark", f"ark:12345/x{i:07d}", "", f"https://example.org/objects/{i}?v=1")
                for i in range(start, min(start + limit, self.n))]


def test_write_map_streams(tmp_path: Path) -> None:
    """Memory does not grow with the number of bindings: the maps go to files as they are read."""
    n = 20_000
    with (tmp_path / "map.conf").open("w", encoding="ascii") as out:
        tracemalloc.start()
        try:
            report = write_map(cast(Store, ManyBindings(n)), out, case_filter=CaseFilter(bits=1 << 23))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    # The filter is a Bloom filter: a false positive leaves a path to pidkit (never a wrong answer).  At
    # 2**23 bits and 40,000 paths the expected number is about 0.1 (a CI run once saw 1), so the test
    # counts every path as mapped or left, and allows a few false positives.
    assert report.mapped + report.case_collisions == 2 * n and report.case_collisions <= 3
    assert peak < 4 * 2**20, peak  # the 1 MiB filter and a page of bindings; the map itself is 4.7 MB
    assert (tmp_path / "map.conf").stat().st_size > 4.5 * 10**6


def test_source_is_one_comment_line() -> None:
    out = io.StringIO()
    with open_store("sqlite:///:memory:") as store:
        write_map(store, out, source="sqlite:///x.db\nserver { listen 1; }\r")
    assert out.getvalue().splitlines()[0] == (
        "# Generated by `pidkit edge nginx` from sqlite:///x.db?server { listen 1; }?: do not edit.")


def test_case_filter_remembers_case_insensitively() -> None:
    f = CaseFilter(bits=1 << 20)
    assert f.add("/ark:1/Ab") and not f.add("/ark:1/AB") and not f.add("/ark:1/ab") and f.add("/ark:1/abc")
    with pytest.raises(ValueError):
        CaseFilter(bits=1000)


_FILTER_BITS = """
from pidkit.edge import CaseFilter
f = CaseFilter(bits=1 << 14)
added = [f.add(f"/ark:12345/x{i}") for i in range(600)]
print(sum(added), f._bits.hex())
"""


def test_case_filter_is_the_same_in_every_process() -> None:
    """The filter (and so which paths the map holds) does not change with PYTHONHASHSEED: the same
    store gives the same map every time it is written (regression: it used the salted ``hash()``,
    and a path could be left out of one map and put in the next)."""
    outputs = set()
    for seed in ("1", "2", "random"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", _FILTER_BITS], capture_output=True, text=True,
                              env=env, check=True)
        outputs.add(done.stdout)
    assert len(outputs) == 1, outputs
    assert int(outputs.pop().split()[0]) > 595  # 16384 bits, 600 paths: a false positive or two


# --- nginx in front of pidkit ------------------------------------------------------------------------


def test_nginx_answers_every_request_as_pidkit(store_url: str, tmp_path: Path) -> None:
    nginx = nginx_binary()
    app_port, proxy_port = free_port(), free_port()
    done = edge("nginx", str(tmp_path), "--db", store_url, "--upstream", f"http://127.0.0.1:{app_port}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {tmp_path / MAP_FILE}: ")
    conf = nginx_conf(tmp_path, tmp_path, proxy_port)
    mapped = expected_mapped(store_url)
    with running([nginx, "-c", str(conf), "-p", str(tmp_path)], proxy_port, "nginx"):
        with running(serve(store_url, app_port), app_port, "pidkit serve"):
            for method, path, accept in requests():
                direct = ask(app_port, method, path, accept)
                proxied = ask(proxy_port, method, path, accept)
                assert proxied == direct, (method, path, accept)
        # pidkit is gone: what nginx answers now it answered itself, the same as pidkit did
        for method, path, accept in requests():
            alone = ask(proxy_port, method, path, accept)
            if method in ("GET", "HEAD") and path in mapped:
                assert (alone.status, alone.body, alone.content_type) == (302, b"", None), (method, path)
                assert (alone.content_length, alone.extra) == ("0", ()), (method, path)
            else:
                assert alone.status == 502, (method, path)
    assert {p for p in mapped if p.startswith("/ark:12345/h")} == {f"/{ark}" for ark in HOSTILE}


def test_hostile_locations_byte_for_byte(store_url: str, tmp_path: Path) -> None:
    """The Location of each hostile target, as nginx sends it alone, is the one pidkit computes."""
    nginx = nginx_binary()
    port = free_port()
    assert edge("nginx", str(tmp_path), "--db", store_url, "--upstream", "http://127.0.0.1:9").returncode == 0
    conf = nginx_conf(tmp_path, tmp_path, port)
    with running([nginx, "-c", str(conf), "-p", str(tmp_path)], port, "nginx"):
        for ark, target in HOSTILE.items():
            for path in (f"/{ark}", f"/ark:/{ark[len('ark:'):]}"):
                got = ask(port, "GET", path)
                assert (got.status, got.location) == (302, location_header(target)), path


def test_compact_only_leaves_the_old_label_to_pidkit(store_url: str, tmp_path: Path) -> None:
    done = edge("nginx", str(tmp_path), "--db", store_url, "--compact-only")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / MAP_FILE).read_text(encoding="ascii")
    assert '    "/ark:12345/x1" "https://example.org/x1";' in text and '"/ark:/' not in text
    full = {p for p in expected_mapped(store_url) if not p.startswith("/ark:/")}
    assert f"{len(full)} request paths mapped" in done.stdout


# --- --watch ------------------------------------------------------------------------------------------


def until(check: Any, timeout: float = 30) -> None:
    """Poll ``check()`` until it is true (or fail)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"not true within {timeout} s: {check}")
        time.sleep(0.1)


@contextlib.contextmanager
def sigint_default() -> Iterator[None]:
    """Let the children started inside get SIGINT's default action (Python's KeyboardInterrupt) even when
    this process was started with SIGINT ignored — as a shell starts a background job (``make test &``):
    an ignored signal stays ignored across ``exec``, a handled one does not."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_watch_rewrites_and_reloads(tmp_path: Path) -> None:
    nginx = nginx_binary()
    url = f"sqlite:///{tmp_path / 'w.db'}"
    with open_store(url) as store:
        store.add_naan(NAAN)
        store.bind("ark:12345/first", "https://example.org/first")
    port, dead = free_port(), free_port()  # nothing listens upstream: only nginx's own answers are 302
    conf = nginx_conf(tmp_path, tmp_path, port)
    reload_cmd = f"{nginx} -c {conf} -p {tmp_path} -s reload"
    edge = [sys.executable, "-m", "pidkit", "edge", "nginx", str(tmp_path), "--db", url,
            "--upstream", f"http://127.0.0.1:{dead}"]  # fmt: skip
    subprocess.run(edge, check=True, capture_output=True, timeout=60)  # the files nginx's conf includes
    first_written = (tmp_path / MAP_FILE).stat().st_mtime_ns
    # nginx runs before the watcher starts: its first reload never races nginx's own start (a SIGHUP
    # before the master set its handlers would end it)
    with running([nginx, "-c", str(conf), "-p", str(tmp_path)], port, "nginx"):
        with sigint_default():
            watcher = subprocess.Popen(
                [*edge, "--watch", "--interval", "0.2", "--reload-command", reload_cmd],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )
        try:
            until(lambda: (tmp_path / MAP_FILE).stat().st_mtime_ns != first_written)
            assert ask(port, "GET", "/ark:12345/first").location == "https://example.org/first"
            assert ask(port, "GET", "/ark:12345/new").status == 502
            mtime = (tmp_path / MAP_FILE).stat().st_mtime_ns
            time.sleep(1)
            assert (tmp_path / MAP_FILE).stat().st_mtime_ns == mtime  # nothing changed: not rewritten
            with open_store(url) as store:
                store.bind("ark:12345/new", "https://example.org/new")
            until(lambda: ask(port, "GET", "/ark:/12345/new").location == "https://example.org/new")
            with open_store(url) as store:
                store.tombstone("ark:12345/first", "gone")
            until(lambda: ask(port, "GET", "/ark:12345/first").status == 502)
        finally:
            watcher.send_signal(signal.SIGINT)
            try:
                out, _ = watcher.communicate(timeout=30)
            finally:
                stop(watcher)
    assert watcher.returncode == 130, out
    assert out.count("wrote ") >= 3 and "interrupted" in out, out


def test_postgres_bindings_token_hears_each_committed_change_to_its_own_bindings(
    new_postgres_url: Callable[[], str],
) -> None:
    """Migration 10's notification: every kind of change another connection commits (insert, update,
    delete) is seen within moments — changes made in quick succession too, which the statistics
    counters of the fallback publish up to 10 s late — and a change rolled back, or made in another store
    of the same database, is not."""
    url, neighbour_url = new_postgres_url(), new_postgres_url()  # two schemas of one database
    with open_store(url) as store, open_store(url) as writer, open_store(neighbour_url) as neighbour:
        writer.add_naan(NAAN)
        neighbour.add_naan(NAAN)
        first = store.bindings_token()  # the first call waits for the listener
        assert first == store.bindings_token() and cast(Any, first)[0] == "heard", first
        changes: list[Callable[[], object]] = [
            lambda: writer.bind("ark:12345/a", "https://example.org/a"),  # INSERT
            lambda: writer.bind("ark:12345/a", "https://example.org/b"),  # UPDATE
            lambda: writer.tombstone("ark:12345/a", "gone"),  # UPDATE
            lambda: writer.bind("ark:12345/r", None, status="reserved"),  # INSERT
            lambda: writer.delete("ark", "ark:12345/r"),  # DELETE
            lambda: writer.import_jsonl(['{"text": "ark:12345/i", "target": "https://example.org/i"}\n']),
        ]
        for change in changes:
            before = store.bindings_token()
            change()
            until(lambda: store.bindings_token() != before, timeout=3)  # noqa: B023 - read at once
        settled = store.bindings_token()
        neighbour.bind("ark:12345/n", "https://example.org/n")
        with contextlib.suppress(ZeroDivisionError), writer._transaction(write=True) as cur:  # type: ignore[attr-defined]
            cur.execute("UPDATE bindings SET target = 'https://example.org/x'")
            assert cur.rowcount == 2  # a and i
            _ = 1 / 0  # rolled back
        with contextlib.closing(open_store(url)) as probe:  # two commits after them: their notices come last
            probe.bind("ark:12345/last", "https://example.org/last")
            probe.bind("ark:12345/later", "https://example.org/later")

        def heard() -> int:
            return int(cast(Any, store.bindings_token())[1])

        until(lambda: heard() >= cast(Any, settled)[1] + 2, timeout=3)
        time.sleep(0.5)  # anything else heard would have come before them
        assert heard() == cast(Any, settled)[1] + 2  # those two alone: not the neighbour's, not the rollback
        out = io.StringIO()
        assert write_map(store, out).mapped == 6  # i, last and later, two spellings each (a: a tombstone)


@contextlib.contextmanager
def _listening(url: str) -> Iterator[tuple[Store, Store, Any, object]]:
    """A store whose bindings listener listens, a second store of the same URL to write with, the
    listener, and the store's token then."""
    with open_store(url) as store, open_store(url) as writer:
        writer.add_naan(NAAN)
        settled = store.bindings_token()
        assert cast(Any, settled)[0] == "heard", settled
        yield store, writer, store._listeners["pidkit_bindings"], settled  # type: ignore[attr-defined]


def test_postgres_listener_whose_probes_are_lost_is_made_again_and_the_counters_stand_in(
    new_postgres_url: Callable[[], str],
) -> None:
    """A listening connection that stops hearing (a dropped idle TCP connection, a pooler that passes no
    notification on) is noticed by its lost probe, not trusted forever: the token moves, the table's
    counters stand in while it does not listen, and a change then is still seen."""
    with _listening(new_postgres_url()) as (store, writer, listener, _):
        listener.probe_every, listener.probe_wait = 0.2, 0.5
        send = listener._send
        listener._send = lambda channel, payload: send("pidkit_nowhere", payload)  # the probes are lost
        until(lambda: cast(Any, store.bindings_token())[0] == "counted", timeout=5)
        counted = store.bindings_token()
        writer.bind("ark:12345/while", "https://example.org/while")
        until(lambda: store.bindings_token() != counted, timeout=15)  # the counters, published late
        listener._send = send
        listener.probe_every, listener.probe_wait = 30.0, 5.0  # from now on no probe can flap it
        until(lambda: cast(Any, store.bindings_token())[0] == "heard", timeout=40)
        before = store.bindings_token()
        writer.bind("ark:12345/after", "https://example.org/after")
        until(lambda: store.bindings_token() != before, timeout=3)
    assert store.bindings_token() is None  # closed


def test_postgres_listener_stays_listening_when_a_probe_cannot_be_sent(
    new_postgres_url: Callable[[], str],
) -> None:
    """A probe the pool could not send (every connection busy, the pool's wait over) says nothing of the
    listening connection: it is kept, the token does not move, changes are still heard, and the probe
    is sent again later (the resolver's NAAN cache would otherwise be dropped under load)."""
    with _listening(new_postgres_url()) as (store, writer, listener, settled):
        pid, tries = listener.backend_pid, []

        def busy(channel: str, payload: str) -> None:
            tries.append(payload)
            raise psycopg_pool.PoolTimeout("couldn't get a connection after 3.00 sec")

        listener._send = busy
        listener.probe_every, listener.probe_wait = 0.2, 0.3
        until(lambda: len(tries) >= 3, timeout=10)  # sent again, each time in vain
        assert store.bindings_token() == settled and listener.backend_pid == pid  # listening, same connection
        writer.bind("ark:12345/busy", "https://example.org/busy")
        until(lambda: store.bindings_token() != settled, timeout=3)
        assert cast(Any, store.bindings_token())[0] == "heard" and listener.backend_pid == pid


def test_watch_refuses_a_private_store() -> None:
    with pytest.raises(StoreError, match="other processes write to"):
        watch("sqlite:///:memory:", open_store, ".", upstream="http://127.0.0.1:8000", rounds=1)


def test_cli_on_postgres_names_the_store_without_its_password(
    new_postgres_url: Callable[[], str], tmp_path: Path
) -> None:
    parts = urllib.parse.urlsplit(new_postgres_url())  # the test server trusts local connections
    user, _, host = parts.netloc.rpartition("@")
    url = urllib.parse.urlunsplit(parts._replace(netloc=f"{user.split(':')[0] or 'postgres'}:s3cret@{host}"))
    with open_store(url) as store:
        store.add_naan(NAAN)
        store.bind("ark:12345/pg", "https://example.org/pg")
    done = edge("nginx", str(tmp_path), "--db", url)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / MAP_FILE).read_text(encoding="ascii")
    assert "postgres:***@" in text and "s3cret" not in text + done.stdout
    assert '    "/ark:12345/pg" "https://example.org/pg";' in text


# --- the command line ---------------------------------------------------------------------------------


def test_cli_errors_are_one_line(tmp_path: Path, store_url: str) -> None:
    cases = [
        (["nginx", str(tmp_path), "--db", store_url, "--upstream", "http://h:80/x"], 2, "--upstream"),
        (["nginx", str(tmp_path), "--db", store_url, "--reload-command", "'"], 2, "--reload-command"),
        (["nginx", str(tmp_path), "--db", store_url, "--interval", "-1"], 2, "--interval"),
        (["nginx", str(tmp_path), "--db", store_url, "--interval", "nan"], 2, "--interval"),
        (["nginx", str(tmp_path), "--db", store_url, "--interval", "1e308"], 2, "--interval"),
        (["nginx", str(tmp_path), "--db", store_url, "--interval", "0"], 2, "--interval"),
        (["nginx", str(tmp_path / "nope"), "--db", store_url], 1, "not a directory"),
        (["nginx", str(tmp_path), "--db", f"sqlite:///{tmp_path / 'missing.db'}"], 1, "missing.db"),
        (["nginx", str(tmp_path), "--db", store_url, "--reload-command", "false"], 1, "exited 1"),
    ]
    for argv, code, words in cases:
        done = edge(*argv)
        assert done.returncode == code, (argv, done.stderr)
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("pidkit: error: ") and words in lines[0], (argv, lines)
    assert not list(tmp_path.glob(".*.tmp"))
