"""ASGI middleware of the service: the request body limit.

:class:`BodyLimit` refuses bodies over ``max_body`` bytes with 413 — by ``Content-Length`` up front, and
by counting bytes as they arrive (chunked bodies too).  (Request *heads* are bounded before the
application runs, in the HTTP protocol: :mod:`pidkit.web.protocol`.)

>>> import asyncio
>>> sent = []
>>> async def app(scope, receive, send): raise AssertionError("not reached")
>>> async def send(message): sent.append(message)
>>> scope = {"type": "http", "headers": [(b"content-length", b"10")]}
>>> asyncio.run(BodyLimit(app, limit=5)(scope, None, send))
>>> sent[0]["status"]
413
"""

from __future__ import annotations

import json

from starlette.exceptions import HTTPException as StarletteHTTPException

from .asgi import ASGIApp, Message, Receive, Scope, Send
from .errors import error_body, ezid_reason, under

__all__ = ["BodyLimit", "BodyTooLargeError"]


class BodyTooLargeError(StarletteHTTPException):
    """Raised from ``receive`` once more than the limit has arrived (an HTTPException, so a route that
    is reading its body answers 413 through the normal handler)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body larger than {limit} bytes")


class BodyLimit:
    """ASGI middleware: refuse request bodies over ``limit`` bytes with 413.

    A ``Content-Length`` over the limit is refused before the app runs; otherwise the bytes are counted
    as they arrive (also for ``Transfer-Encoding: chunked``) and ``receive`` raises
    :class:`BodyTooLargeError` as soon as the count passes the limit.
    """

    def __init__(self, app: ASGIApp, limit: int, ezid_base: str | None = None) -> None:
        self.app = app
        self.limit = limit
        #: Requests below this path (EZID's API) are refused in EZID's form (``error: …`` text).
        self.ezid_base = ezid_base

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and (not value.isdigit() or int(value) > self.limit):
                status = 413 if value.isdigit() else 400
                message = f"request body larger than {self.limit} bytes" if status == 413 else (
                    "bad Content-Length header")
                await self._refuse(scope, send, status, message)
                return
        seen = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLargeError(self.limit)
            return message

        async def watching_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except BodyTooLargeError as exc:
            if started:
                raise
            await self._refuse(scope, send, 413, exc.detail)

    async def _refuse(self, scope: Scope, send: Send, status: int, message: str) -> None:
        if self.ezid_base is not None and under(scope.get("path", ""), self.ezid_base):
            body = f"error: {ezid_reason(status, message)}\n".encode()
            await _send(send, status, b"text/plain; charset=UTF-8", body)
        else:
            await _send(send, status, b"application/json", json.dumps(error_body(status, message)).encode())


async def _send(send: Send, status: int, kind: bytes, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", kind), (b"content-length", str(len(body)).encode()),
        (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
