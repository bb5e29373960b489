"""Content negotiation: which representation a client gets, and whether it asked for ``?info``.

``?info`` (and the older ``??``) asks for the description (draft-kunze-ark-40 §5.2, THUMP); its
representations are ANVL ``text/plain`` (the default), HTML and JSON.  The bare ``?`` inflection cannot
be told apart from no query at all by an ASGI server (both give an empty ``query_string``).

>>> negotiate("text/html,application/xhtml+xml,*/*;q=0.8"), negotiate("*/*"), negotiate("application/json")
('text/html', 'text/plain', 'application/json')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from fastapi.responses import PlainTextResponse, Response

__all__ = ["INFO_QUERIES", "INFO_TYPES", "negotiate", "text_response", "wants_info"]

#: §5.2 (THUMP): query strings that ask for the description.  "?info" arrives as ``info`` and "??" as
#: ``?``; a lone "?" is indistinguishable from no query in ASGI.
INFO_QUERIES: Final = frozenset({"info", "?"})
#: The representations ``?info`` offers, the default first.
INFO_TYPES: Final = ("text/plain", "text/html", "application/json")


def negotiate(accept: str, offers: tuple[str, ...] = INFO_TYPES) -> str:
    """The best of ``offers`` for an ``Accept`` header: highest q, then the most specific match, then
    the order of ``offers`` (so ``*/*`` gets the first, ANVL text).

    >>> negotiate("application/json;q=0.5, text/html;q=0.9")
    'text/html'
    >>> negotiate("image/png")
    'text/plain'
    """
    best = (0.0, -1, -len(offers))
    choice = offers[0]
    for item in accept.split(","):
        mtype, _, params = item.strip().partition(";")
        mtype = mtype.strip().lower()
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if q <= 0:
            continue
        for rank, offer in enumerate(offers):
            if mtype == offer:
                specific = 2
            elif mtype == offer.split("/")[0] + "/*":
                specific = 1
            elif mtype == "*/*":
                specific = 0
            else:
                continue
            score = (q, specific, -rank)
            if score > best:
                best, choice = score, offer
    return choice


def wants_info(scope: Mapping[str, Any]) -> bool:
    """True if the request's query asks for the description (``?info`` or ``??``, §5.2).

    >>> wants_info({"query_string": b"info"}), wants_info({"query_string": b"x=1"})
    (True, False)
    """
    query = scope.get("query_string", b"")
    return isinstance(query, bytes) and query.decode("latin-1") in INFO_QUERIES


def text_response(text: str, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A ``text/plain; charset=utf-8`` response.

    >>> text_response("/\\n").media_type
    'text/plain'
    """
    return PlainTextResponse(text, status_code=status, headers=headers)
