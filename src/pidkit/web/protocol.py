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

``pidkit serve`` passes :data:`PROTOCOL` (``--http``'s import string form) to uvicorn; the bounds are
read from the environment once, when uvicorn imports this module in a worker.  A reverse proxy
in front should set the same bounds (``docs/recipes.md``).

>>> issubclass(GuardedProtocol, asyncio.Protocol), MAX_HEADER_BYTES > 0, HEADER_TIMEOUT > 0
(True, True, True)
"""

from __future__ import annotations

import asyncio
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
            self._arm()

    def _guard_after(self) -> None:
        if self.transport.is_closing() or not self._reading_headers():
            self._disarm()
        elif self._guard_bytes > MAX_HEADER_BYTES:
            self._refuse(431, f"request headers larger than {MAX_HEADER_BYTES} bytes")


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
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - httptools not installed: uvicorn uses h11
    GuardedProtocol: type[asyncio.Protocol] = GuardedH11Protocol
else:

    class GuardedHttpToolsProtocol(_HeaderGuard, HttpToolsProtocol):
        """uvicorn's httptools protocol with the header bounds (headers are incomplete from a
        message's start until the parser's ``on_headers_complete``)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._in_headers = True

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _reading_headers(self) -> bool:
            return self._in_headers

        def data_received(self, data: bytes) -> None:
            self._guard_before(data)
            super().data_received(data)
            self._guard_after()

        def on_headers_complete(self) -> None:
            self._in_headers = False
            self._disarm()
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._in_headers = True  # what follows is the next request's head

    GuardedProtocol = GuardedHttpToolsProtocol
