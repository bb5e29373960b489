"""uvicorn's HTTP protocol with a bound on request headers: their size and the time they may take.

uvicorn bounds neither with httptools (what its default ``auto`` picks when the ``server`` extra is
installed): llhttp has no header size limit and uvicorn buffers every header the parser reports, and
no timer runs while a request's headers arrive — a client sending one header byte a second holds a
connection for ever (measured against ``pidkit serve``: a 1 MiB header got a 200, a connection
trickling a byte a second was still open after 12 s).  h11 bounds the size only
(``h11_max_incomplete_event_size``) and has no timer either.

A bound in the ASGI application comes too late: the application sees a request only after the parser
has buffered all of its headers.  So the bound sits in the protocol, where bytes arrive:

* more than :data:`MAX_HEADER_BYTES` (``$PIDKIT_MAX_HEADER``, 64 KiB) received while a request's
  headers are incomplete: ``431``, connection closed;
* a request's headers not complete :data:`HEADER_TIMEOUT` (``$PIDKIT_HEADER_TIMEOUT``, 10) seconds
  after its first byte arrived (or after the connection opened): ``408``, connection closed.  Idle
  keep-alive connections are closed by uvicorn's own ``timeout_keep_alive``.

With httptools the protocol also answers, at once, a request whose redirect the app keeps
(:meth:`pidkit.web.fastpath.FastPathApp.kept_redirect`): most of a resolver's answers, without the ASGI
task, request cycle and messages uvicorn makes for each request — the bytes uvicorn would write for the
app's answer (``tests/test_web_protocol_answers.py`` holds the two side by side).

``pidkit serve`` passes :data:`PROTOCOL` (``--http``'s import string form) to uvicorn; the bounds are
read from the environment once, when uvicorn imports this module in a worker.  A reverse proxy
in front should set the same bounds (``docs/recipes.md``).

>>> issubclass(GuardedProtocol, asyncio.Protocol), MAX_HEADER_BYTES > 0, HEADER_TIMEOUT > 0
(True, True, True)
"""

from __future__ import annotations

import asyncio
import copy
import urllib.parse
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, Final

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..settings import Settings

__all__ = ["HEADER_TIMEOUT", "MAX_HEADER_BYTES", "PROTOCOL", "GuardedH11Protocol", "GuardedProtocol"]

_LIMITS: Final = Settings.from_env()
#: Largest request head (request line and headers) accepted, in bytes (nginx's
#: ``large_client_header_buffers`` default allows 4 × 8 KiB; Apache 8 KiB a line, 100 lines).
MAX_HEADER_BYTES: Final = _LIMITS.max_header
#: Seconds a client has to send a request's headers, from their first byte (nginx's
#: ``client_header_timeout`` default is 60 s; a resolver's clients send a few hundred bytes at once).
HEADER_TIMEOUT: Final = _LIMITS.header_timeout
#: The import string of the protocol ``pidkit serve`` gives uvicorn.
PROTOCOL: Final = "pidkit.web.protocol:GuardedProtocol"

_REASONS: Final = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}


class _HeaderGuard:
    """The bound, shared by both parsers: subclasses say when a request's headers are incomplete."""

    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    _guard_timer: asyncio.TimerHandle | None = None
    _guard_bytes: int = 0

    def _reading_headers(self) -> bool:
        raise NotImplementedError

    def _head_incomplete(self) -> bool:
        """Bytes of a request's head have arrived and it is not complete (the timer runs then)."""
        return self._reading_headers() and self._guard_bytes > 0

    def _response_in_progress(self) -> bool:
        cycle = getattr(self, "cycle", None)
        return cycle is not None and not cycle.response_complete

    def _arm(self) -> None:
        if self._guard_timer is None:
            self._guard_timer = self.loop.call_later(HEADER_TIMEOUT, self._timed_out)

    def _disarm(self) -> None:
        if self._guard_timer is not None:
            self._guard_timer.cancel()
            self._guard_timer = None
        self._guard_bytes = 0

    def _timed_out(self) -> None:
        self._guard_timer = None
        if self.transport.is_closing():
            return
        if self._response_in_progress():  # a pipelined request waits for the one being answered
            self._arm()
            return
        self._refuse(408, f"request headers not received within {HEADER_TIMEOUT:g} s")

    def _refuse(self, status: int, message: str) -> None:
        self._disarm()
        body = message.encode("ascii")
        self.transport.write(
            b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n%s" % (status, _REASONS[status], len(body), body)
        )
        self.transport.close()

    def _guard_before(self, data: bytes) -> None:
        if self._reading_headers():
            self._guard_bytes += len(data)

    def _guard_after(self) -> None:
        # The timer runs from the first byte of a head that is still incomplete once what arrived is
        # parsed: a head that arrives whole (most) arms none.
        if self.transport.is_closing() or not self._reading_headers():
            self._disarm()
        elif self._guard_bytes > MAX_HEADER_BYTES:
            self._refuse(431, f"request headers larger than {MAX_HEADER_BYTES} bytes")
        elif self._head_incomplete():
            self._arm()


class GuardedH11Protocol(_HeaderGuard, H11Protocol):
    """uvicorn's h11 protocol with the header bounds (h11 reads headers while its peer is ``IDLE``)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _reading_headers(self) -> bool:
        return bool(self.conn.their_state is h11.IDLE)

    def data_received(self, data: bytes) -> None:
        self._guard_before(data)
        super().data_received(data)
        self._guard_after()


try:
    import httptools
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
    from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol
    from uvicorn.protocols.utils import get_client_addr, get_path_with_query_string
except ImportError:  # pragma: no cover - httptools not installed: uvicorn uses h11
    GuardedProtocol: type[asyncio.Protocol] = GuardedH11Protocol
else:

    async def _nothing(scope: Any, receive: Any, send: Any) -> None:
        """An ASGI app that does nothing (behind :func:`_forwarding`'s middleware)."""

    #: :func:`_forwarding`'s answer for each middleware (made once per worker, not per connection).
    _FORWARDING: weakref.WeakKeyDictionary[Any, tuple[Any, Callable[[Any], Coroutine[Any, Any, None]]]] = (
        weakref.WeakKeyDictionary()
    )

    def _forwarding(app: Any) -> tuple[Any, Callable[[Any], Coroutine[Any, Any, None]] | None]:
        """The app behind uvicorn's proxy-header middleware (``pidkit serve --trusted-proxies``) and that
        middleware's rewrite of a scope on its own (the same object over an app that does nothing: the
        client address and scheme it believes, for the access log of an answer the protocol writes); the
        app itself and ``None`` when there is no such middleware."""
        if not isinstance(app, ProxyHeadersMiddleware):
            return app, None
        found = _FORWARDING.get(app)
        if found is None:
            rewrite = copy.copy(app)
            rewrite.app = _nothing
            unused: Any = None  # the rewrite never receives nor sends: the app behind it does nothing
            found = _FORWARDING[app] = (app.app, lambda scope: rewrite(scope, unused, unused))
        return found

    def _run_at_once(coroutine: Coroutine[Any, Any, None]) -> None:
        """Run ``coroutine``, which never waits (:func:`_forwarding`'s rewrite), to its end."""
        try:
            coroutine.send(None)
        except StopIteration:
            return
        coroutine.close()  # pragma: no cover - uvicorn's middleware awaits only the app
        raise RuntimeError("the proxy-header middleware waited")  # pragma: no cover

    class GuardedHttpToolsProtocol(_HeaderGuard, HttpToolsProtocol):
        """uvicorn's httptools protocol with the header bounds (headers are incomplete from a
        message's start until the parser's ``on_headers_complete``), which answers a request the app
        keeps a redirect for at once (:meth:`_answer_kept`)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._in_headers = True
            self._begun = False  # the next request's first byte has been parsed
            self._answered = False  # the request being parsed was answered by _answer_kept
            # Not while uvicorn bounds concurrency (its 503 app answers then).  Behind uvicorn's
            # proxy-header middleware the app is asked all the same (a redirect does not depend on the
            # client's address or scheme); the middleware's rewrite makes the access log line's client.
            app, self._forwarded = _forwarding(self.app)
            self._kept: Callable[[Any], tuple[int, bytes] | None] | None = (
                None if self.limit_concurrency is not None else getattr(app, "kept_redirect", None)
            )

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _reading_headers(self) -> bool:
            return self._in_headers

        def _head_incomplete(self) -> bool:
            # _begun: the head began after the last one completed in the same read (pipelining)
            return self._in_headers and (self._begun or self._guard_bytes > 0)

        def data_received(self, data: bytes) -> None:
            self._guard_before(data)
            super().data_received(data)
            self._guard_after()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._begun = True

        def on_headers_complete(self) -> None:
            self._in_headers = self._begun = False
            self._disarm()
            if self._kept is not None and self._answer_kept(self._kept):
                self._answered = True
                return
            super().on_headers_complete()

        def on_body(self, body: bytes) -> None:
            if not self._answered:  # an answered request has no body (_answer_kept)
                super().on_body(body)

        def on_message_complete(self) -> None:
            if self._answered:
                self._answered = False
            else:
                super().on_message_complete()
            self._in_headers = True  # what follows is the next request's head

        def _answer_kept(self, kept_redirect: Callable[[Any], tuple[int, bytes] | None]) -> bool:
            """Answer the request whose head was just parsed, without an ASGI task, if the app keeps its
            redirect (:meth:`~pidkit.web.fastpath.FastPathApp.kept_redirect`, asked with the scope
            uvicorn builds: a plain ``GET``/``HEAD`` with no body) and no earlier request of the
            connection is still being answered.  What uvicorn does for the app's two messages: its
            access log line, the bytes it writes (its status line and default headers, then
            ``content-length``, ``location`` and, when the connection ends, ``connection: close``), and
            what it does once a response is complete."""
            cycle = self.cycle
            if (
                self.pipeline
                or (cycle is not None and not cycle.response_complete)
                or self.flow.write_paused
                or self.transport.is_closing()
                or self.root_path
            ):
                return False
            parser = self.parser
            method = parser.get_method()
            if (method != b"GET" and method != b"HEAD") or parser.should_upgrade():
                return False
            # the scope as uvicorn's on_headers_complete completes it (which does it again otherwise)
            scope = self.scope
            scope["method"] = method.decode("ascii")
            http_version = parser.get_http_version()
            if http_version != "1.1":
                scope["http_version"] = http_version
            url = httptools.parse_url(self.url)
            path = url.path.decode("ascii")
            scope["path"] = urllib.parse.unquote(path) if "%" in path else path
            scope["raw_path"] = url.path
            scope["query_string"] = url.query or b""
            kept = kept_redirect(scope)
            if kept is None:
                return False
            status, location = kept
            if self.access_log:
                if self._forwarded is not None:
                    _run_at_once(self._forwarded(scope))
                self.access_logger.info('%s - "%s %s HTTP/%s" %d', get_client_addr(scope), scope["method"],
                                        get_path_with_query_string(scope), scope["http_version"], status)
            keep_alive = http_version != "1.0" and parser.should_keep_alive()
            head = [STATUS_LINE[status]]
            for name, value in self.server_state.default_headers:
                head += (name.lower(), b": ", value, b"\r\n")
            head += (b"content-length: 0\r\nlocation: ", location, b"\r\n")
            if not keep_alive:
                head.append(b"connection: close\r\n")
            head.append(b"\r\n")
            self.transport.write(b"".join(head))
            if not keep_alive:
                self.transport.close()
            self.on_response_complete()
            return True

    GuardedProtocol = GuardedHttpToolsProtocol
