"""The HTTP protocol answers a redirect the worker keeps without an ASGI task (issue 18).

``pidkit.web.protocol.GuardedHttpToolsProtocol`` asks the app (``FastPathApp.kept_redirect``) once a
request's head is parsed; when the app keeps the answer, the protocol writes it at once.  These tests drive
the protocol in-process, as uvicorn does (``connection_made``, ``data_received`` with the bytes a client
sends, ``connection_lost``), over a transport that records what is written, and hold it to uvicorn's own
path: the same request answered by the app through uvicorn's ASGI cycle gives the very same bytes (the
``date`` header is fixed here, as uvicorn's server sets it once a second), the connection is kept or
closed alike, requests are answered in order, and a write by another connection is seen by the next
request.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from uvicorn.config import Config
from uvicorn.server import ServerState

from _webutil import TARGET, seed
from pidkit.store import open_store
from pidkit.web import create_app
from pidkit.web.fastpath import FastPathApp

protocol = pytest.importorskip("pidkit.web.protocol")
if not hasattr(protocol, "GuardedHttpToolsProtocol"):  # pragma: no cover - the server extra has httptools
    pytest.fail("httptools is not installed: pip install -e '.[server]'", pytrace=False)
Protocol = protocol.GuardedHttpToolsProtocol

DATE = (b"date", b"Sat, 28 Nov 2026 06:00:00 GMT")
CAFE = "https://example.org/caf\u00e9/\u00fcber"


class Transport(asyncio.Transport):
    """What a protocol writes, and whether it closed the connection."""

    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        assert not self.closed, "written after close"
        self.written += data

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


class Served:
    """An app over a seeded SQLite file, uvicorn's configuration and server state, and a loop."""

    def __init__(
        self, url: str, loop: asyncio.AbstractEventLoop, *, log_level: str = "warning",
        trusted: list[str] | None = None,
    ) -> None:
        self.url = url
        self.loop = loop
        self.app = create_app(url)
        self.config = Config(self.app, log_level=log_level, access_log=log_level == "info",
                             proxy_headers=trusted is not None, forwarded_allow_ips=trusted, http=Protocol,
                             timeout_keep_alive=5)  # fmt: skip
        self.config.load()
        self.state = ServerState()
        self.state.default_headers = [DATE]
        self.calls: list[str] = []  # the paths the app was called for

    def connect(self) -> Connection:
        return Connection(self)

    async def opened(self) -> Served:
        """This, once a first request has opened the app's store (until then nothing is kept)."""
        conn = self.connect()
        assert (await conn.send(get("/ark:99999/fk4res"))).startswith(b"HTTP/1.1 404 ")
        conn.close()
        return self


class Connection:
    """One client connection to a protocol instance."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.protocol = Protocol(config=served.config, server_state=served.state, app_state={},
                                 _loop=served.loop)
        self.transport = Transport()
        self.protocol.connection_made(self.transport)

    async def send(self, data: bytes, answers: int = 1) -> bytes:
        """Feed ``data``; what is written until ``answers`` responses (each ending its head with an
        empty body, as redirects do) have been written."""
        start = len(self.transport.written)
        self.protocol.data_received(data)
        for _ in range(5000):
            if self.transport.written[start:].count(b"\r\n\r\n") >= answers:
                break
            await asyncio.sleep(0.001)
        else:
            raise AssertionError(f"no answer: {bytes(self.transport.written[start:])!r}")
        return bytes(self.transport.written[start:])

    def close(self) -> None:
        self.protocol.connection_lost(None)


class Lines(logging.Handler):
    """The messages logged to the logger it is added to."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def get(path: str, *, method: str = "GET", version: str = "1.1", headers: str = "") -> bytes:
    return f"{method} {path} HTTP/{version}\r\nHost: t\r\n{headers}\r\n".encode()


@pytest.fixture
def store_file(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path}/answers.db"
    with open_store(url) as store:
        seed(store)
        store.bind("ark:99999/fk4cafe", CAFE, force=True)
    return url


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every call of the app (its ASGI entry), by path."""
    calls: list[str] = []
    original = FastPathApp.__call__

    async def counting(self: FastPathApp, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] != "/ark:99999/fk4res":  # Served.opened's
            calls.append(scope["path"])
        await original(self, scope, receive, send)

    monkeypatch.setattr(FastPathApp, "__call__", counting)
    return calls


@pytest.fixture
def run() -> Iterator[Callable[[Callable[[asyncio.AbstractEventLoop], Awaitable[None]]], None]]:
    """Run a test body on a fresh (pure-Python) event loop."""
    loop = asyncio.new_event_loop()

    def runner(body: Callable[[asyncio.AbstractEventLoop], Awaitable[None]]) -> None:
        loop.run_until_complete(body(loop))

    yield runner
    loop.close()


SHAPES = {
    "get": get("/ark:99999/fk4x1"),
    "head": get("/ark:99999/fk4x1", method="HEAD"),
    "close": get("/ark:99999/fk4x1", headers="Connection: close\r\n"),
    "http-1.0": get("/ark:99999/fk4x1", version="1.0"),
    "http-1.0-keep-alive": get("/ark:99999/fk4x1", version="1.0", headers="Connection: keep-alive\r\n"),
    "slash-form": get("/ark:/99999/fk4x1"),
    "encoded-target": get("/ark:99999/fk4cafe"),
    "percent-path": get("/ark:99999/fk4coll/p%20q"),
    "empty-query": get("/ark:99999/fk4x1?"),  # uvicorn's scope cannot tell it from no query
    "collection": get("/ark:99999/fk4coll/p/q.html"),
    "forwarded": get("/ark:12345/not-served"),
    "browser-headers": get("/ark:99999/fk4x1", headers=(
        "User-Agent: Mozilla/5.0\r\nAccept: text/html,*/*;q=0.8\r\nAccept-Language: en\r\n"
        "Accept-Encoding: gzip, br\r\nCookie: a=b\r\nUpgrade-Insecure-Requests: 1\r\n")),
}


@pytest.mark.parametrize("request_bytes", SHAPES.values(), ids=SHAPES.keys())
def test_a_kept_redirect_is_written_as_uvicorn_writes_the_apps_answer(
    store_file: str, counted: list[str], run: Any, request_bytes: bytes
) -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> None:
        served = await Served(store_file, loop).opened()
        first = served.connect()
        decided = await first.send(request_bytes)  # the app decides it, through uvicorn's ASGI cycle
        assert len(counted) == 1
        assert decided.startswith((b"HTTP/1.1 302 Found\r\n", b"HTTP/1.1 301 "))
        second = served.connect()
        kept = await second.send(request_bytes)
        assert kept == decided
        assert len(counted) == 1  # the second was answered by the protocol
        assert second.transport.closed == first.transport.closed
        closes = b"Connection: close" in request_bytes or b"HTTP/1.0" in request_bytes
        assert first.transport.closed == closes
        assert (b"\r\nconnection: close\r\n" in kept) == closes
        if not closes:
            assert await second.send(request_bytes) == decided  # and again on the same connection
            assert len(counted) == 1
        first.close()
        second.close()

    run(body)


def test_the_answer_is_the_redirect_of_the_binding(store_file: str, run: Any) -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> None:
        conn = (await Served(store_file, loop).opened()).connect()
        for _ in range(2):
            answer = await conn.send(get("/ark:99999/fk4cafe"))
            assert answer == (b"HTTP/1.1 302 Found\r\ndate: Sat, 28 Nov 2026 06:00:00 GMT\r\n"
                              b"content-length: 0\r\nlocation: https://example.org/caf%C3%A9/%C3%BCber\r\n"
                              b"\r\n")

    run(body)


def test_pipelined_requests_are_answered_in_order(store_file: str, counted: list[str], run: Any) -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> None:
        served = await Served(store_file, loop).opened()
        conn = served.connect()
        await conn.send(get("/ark:99999/fk4x1") + get("/ark:99999/fk4cafe"), answers=2)
        assert len(counted) == 2
        # both kept now; behind them a request the app must decide, then a kept one again
        answers = await conn.send(get("/ark:99999/fk4x1") + get("/ark:99999/fk4cafe")
                                  + get("/ark:99999/fk4coll/new") + get("/ark:99999/fk4x1"), answers=4)
        locations = [line for line in answers.split(b"\r\n") if line.startswith(b"location: ")]
        assert locations == [b"location: " + TARGET.encode(), b"location: https://example.org/caf%C3%A9/%C3%BCber",
                             b"location: https://example.org/coll/new", b"location: " + TARGET.encode()]
        assert counted[2:] == ["/ark:99999/fk4coll/new", "/ark:99999/fk4x1"]  # the last waited its turn
        assert not conn.transport.closed

    run(body)


def _timers(loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> list[asyncio.TimerHandle]:
    """Every timer armed on ``loop`` from now on."""
    armed: list[asyncio.TimerHandle] = []
    call_later = loop.call_later

    def recording(delay: float, callback: Any, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        handle = call_later(delay, callback, *args, **kwargs)
        armed.append(handle)
        return handle

    monkeypatch.setattr(loop, "call_later", recording)
    return armed


def _pending(armed: list[asyncio.TimerHandle], name: str) -> int:
    return sum(1 for h in armed if not h.cancelled() and name in repr(h))


def test_one_keep_alive_timer_after_answers_in_one_read(
    store_file: str, run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> None:
        served = await Served(store_file, loop).opened()
        conn = served.connect()
        await conn.send(get("/ark:99999/fk4x1"))
        armed = _timers(loop, monkeypatch)
        await conn.send(get("/ark:99999/fk4x1") * 3, answers=3)
        # each answer arms uvicorn's keep-alive timer; an earlier one of the same read is cancelled
        assert _pending(armed, "timeout_keep_alive_handler") == 1
        assert _pending(armed, "_timed_out") == 0  # heads that arrive whole arm no header timer

    run(body)


def test_a_head_in_pieces_is_timed_then_answered(
    store_file: str, run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> None:
        served = await Served(store_file, loop).opened()
        conn = served.connect()
        whole = await conn.send(get("/ark:99999/fk4x1"))
        armed = _timers(loop, monkeypatch)
        conn.protocol.data_received(b"GET /ark:99999/fk4x1 HT")
        assert _pending(armed, "_timed_out") == 1  # the header timer runs from the head's first byte
        assert await conn.send(b"TP/1.1\r\nHost: t\r\n\r\n") == whole
        assert _pending(armed, "_timed_out") == 0
        conn.protocol.data_received(b"\r\n")  # bytes that begin no request still start the timer
        assert _pending(armed, "_timed_out") == 1

    run(body)


def test_while_writing_is_paused_the_app_answers_after(
    store_file: str, counted: list[str], run: Any
) -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> None:
        served = await Served(store_file, loop).opened()
        conn = served.connect()
        decided = await conn.send(get("/ark:99999/fk4x1"))
        conn.protocol.pause_writing()  # the transport's buffer is full: the protocol must not write
        conn.protocol.data_received(get("/ark:99999/fk4x1"))
        await asyncio.sleep(0.05)
        assert conn.transport.written.count(b"\r\n\r\n") == 1 and len(counted) == 2
        conn.protocol.resume_writing()
        await asyncio.sleep(0.05)
        assert bytes(conn.transport.written) == decided * 2

    run(body)


def test_a_write_from_another_connection_is_seen_by_the_next_request(
    store_file: str, counted: list[str], run: Any
) -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> None:
        served = await Served(store_file, loop).opened()
        conn = served.connect()
        for _ in range(2):
            assert b"location: " + TARGET.encode() in await conn.send(get("/ark:99999/fk4x1"))
        assert len(counted) == 1
        with open_store(store_file) as other:  # another process would do the same
            other.bind("ark:99999/fk4x1", "https://example.org/moved", force=True)
        assert b"location: https://example.org/moved\r\n" in await conn.send(get("/ark:99999/fk4x1"))
        with open_store(store_file) as other:
            other.tombstone("ark:99999/fk4x1", "withdrawn")
        answer = await conn.send(get("/ark:99999/fk4x1", headers="Connection: close\r\n"))
        assert answer.startswith(b"HTTP/1.1 410 ") and len(counted) == 3

    run(body)


@pytest.mark.parametrize("request_bytes", [
    get("/ark:99999/fk4x1?info"),
    get("/ark:99999/fk4x1", method="POST", headers="Content-Length: 0\r\n"),
    get("/ark:99999/fk4x1", headers="Content-Length: 0\r\n"),
    get("/ark:99999/fk4x1", headers="Transfer-Encoding: chunked\r\n") + b"0\r\n\r\n",
    get("/ark:99999/fk4x1", headers="Connection: Upgrade\r\nUpgrade: h2c\r\n"),
], ids=["query", "post", "content-length", "chunked", "upgrade"])
def test_other_requests_go_to_the_app(
    store_file: str, counted: list[str], run: Any, request_bytes: bytes
) -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> None:
        served = await Served(store_file, loop).opened()
        await served.connect().send(get("/ark:99999/fk4x1"))  # kept now
        assert len(counted) == 1
        conn = served.connect()
        answer = await conn.send(request_bytes)
        assert len(counted) == 2, answer  # the app answered it, not the protocol

    run(body)


def test_a_request_target_the_parser_refuses_gets_uvicorns_400(store_file: str, run: Any) -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> None:
        served = await Served(store_file, loop).opened()
        conn = served.connect()
        answer = await conn.send(b"GET http://h:99999999/ark:99999/fk4x1 HTTP/1.1\r\nHost: t\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n") and conn.transport.closed

    run(body)


def test_an_answer_from_the_protocol_is_logged_as_uvicorn_logs_it(
    store_file: str, counted: list[str], run: Any
) -> None:
    lines = Lines()
    access = logging.getLogger("uvicorn.access")
    asks = [get("/ark:99999/fk4x1"), get("/ark:/99999/fk4coll/p%20q?"),
            get("/ark:99999/fk4x1", version="1.0")]

    async def body(loop: asyncio.AbstractEventLoop) -> None:
        served = await Served(store_file, loop, log_level="info").opened()  # configures the loggers
        access.addHandler(lines)
        for ask in asks:
            decided = await served.connect().send(ask)  # the first two by the app, through uvicorn's cycle
            assert await served.connect().send(ask) == decided  # by the protocol
        assert counted == ["/ark:99999/fk4x1", "/ark:/99999/fk4coll/p q"]  # the third path was kept

    try:
        run(body)
    finally:
        access.removeHandler(lines)
    assert lines.lines == [
        '127.0.0.1:50000 - "GET /ark%3A99999/fk4x1 HTTP/1.1" 302',
        '127.0.0.1:50000 - "GET /ark%3A99999/fk4x1 HTTP/1.1" 302',
        '127.0.0.1:50000 - "GET /ark%3A/99999/fk4coll/p%20q HTTP/1.1" 302',
        '127.0.0.1:50000 - "GET /ark%3A/99999/fk4coll/p%20q HTTP/1.1" 302',
        '127.0.0.1:50000 - "GET /ark%3A99999/fk4x1 HTTP/1.0" 302',
        '127.0.0.1:50000 - "GET /ark%3A99999/fk4x1 HTTP/1.0" 302',
    ]


def test_behind_a_trusted_proxy_the_protocol_still_answers_and_logs_the_forwarded_client(
    store_file: str, counted: list[str], run: Any
) -> None:
    """``pidkit serve --trusted-proxies`` puts uvicorn's proxy-header middleware in front of the app: the
    protocol still asks the app behind it, and its log line names the client the proxy forwards for, as
    the middleware would have made it for the app (before, the middleware hid ``kept_redirect``, so
    every deployment behind a proxy lost the kept answers)."""

    lines = Lines()
    access = logging.getLogger("uvicorn.access")
    forwarded = "X-Forwarded-For: 192.0.2.9, 203.0.113.5\r\nX-Forwarded-Proto: https\r\n"
    ask = get("/ark:99999/fk4x1", headers=forwarded)

    async def body(loop: asyncio.AbstractEventLoop) -> None:
        served = await Served(store_file, loop, log_level="info", trusted=["127.0.0.1"]).opened()
        access.addHandler(lines)
        decided = await served.connect().send(ask)  # by the app, through the middleware
        assert decided.startswith(b"HTTP/1.1 302 ")
        assert await served.connect().send(ask) == decided  # by the protocol
        assert counted == ["/ark:99999/fk4x1"]

    try:
        run(body)
    finally:
        access.removeHandler(lines)
    assert lines.lines == ['203.0.113.5:0 - "GET /ark%3A99999/fk4x1 HTTP/1.1" 302'] * 2


def test_pidkit_serve_gives_uvicorn_an_app_the_protocol_can_ask(
    store_file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pidkit.cli.serve import uvicorn_config

    monkeypatch.setenv("PIDKIT_DATABASE_URL", store_file)
    config = uvicorn_config(workers=1, log_level="warning", host="127.0.0.1", port=0, max_header=65536)
    try:
        config.load()
    finally:
        gc.unfreeze()  # the factory froze this (test) process's objects, as a worker's
    assert config.http_protocol_class is protocol.GuardedProtocol is Protocol
    assert isinstance(config.loaded_app, FastPathApp)  # not wrapped: kept_redirect is found
    assert config.access_log is False  # uvicorn formats no line per request that nothing writes
