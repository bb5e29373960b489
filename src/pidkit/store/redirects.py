"""Redirect safety: where the resolver may send a client, decided in one place for the store and the web.

* :func:`validate_target` — a bound target is an absolute ``http``/``https`` URL with a host and no
  whitespace or control characters (checked when a binding is written and again before a redirect);
* :func:`stays_under` — a composed redirect (a passthrough suffix after its target, an ARK after the
  fallback resolver) keeps the scheme, host and port of its base and stays under its path **as a
  browser resolves it** (:func:`browser_path`: WHATWG dot segments, ``%2e`` included, and backslashes);
* :class:`UnsafeLocationError` — what a refused composition raises.

>>> validate_target("https://example.org/x?y=1")
'https://example.org/x?y=1'
>>> stays_under("https://good.example/base/", "https://good.example/base/%2e%2e/other")
False
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Final

from ..errors import StoreError

__all__ = ["UnsafeLocationError", "browser_path", "stays_under", "validate_target"]

#: The schemes a target may have (and the WHATWG "special" schemes among them).
_TARGET_SCHEMES: Final = frozenset({"http", "https"})
_MAX_TARGET: Final = 4096
_BAD_TARGET_CHAR = re.compile(r"[\x00-\x20\x7f-\x9f\s]")
#: A target every check of :func:`validate_target` accepts, recognized at once (the common case of bulk
#: writes): lowercase ``http``/``https``, a host of ASCII letters, digits, dots and hyphens starting with a
#: letter or digit (no userinfo, no port, no brackets: its host is itself), then nothing or a path, query
#: or fragment of visible ASCII.  A target it does not match goes through the full checks.
_PLAIN_TARGET = re.compile(r"https?://[A-Za-z0-9][A-Za-z0-9.-]*(?:[/?#][!-~]*)?")


def validate_target(url: str) -> str:
    """Return ``url`` if it is an absolute ``http``/``https`` URL with a host and no whitespace or
    control characters; raise :class:`~pidkit.errors.StoreError` naming the input otherwise.

    >>> validate_target("http://example.org/")
    'http://example.org/'
    >>> validate_target("javascript:alert(1)")
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: target must be an http or https URL in 'javascript:alert(1)'
    >>> validate_target("https://e.org/a b")
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: whitespace or control character in target in 'https://e.org/a b' at position 16
    """
    if len(url) <= _MAX_TARGET and _PLAIN_TARGET.fullmatch(url) is not None:
        return url  # a plain target: every check below would pass
    return _checked_target(url)


def _checked_target(url: str) -> str:
    """:func:`validate_target`'s checks, each one (the rule; the fast path only recognizes a subset)."""
    bad = _BAD_TARGET_CHAR.search(url)
    if bad is not None:
        raise StoreError("whitespace or control character in target", text=url, position=bad.start() + 1)
    if len(url) > _MAX_TARGET:
        raise StoreError(f"target longer than {_MAX_TARGET} characters", text=url)
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as exc:
        raise StoreError(f"target is not a URL ({exc})", text=url) from None
    if parts.scheme.lower() not in _TARGET_SCHEMES:
        raise StoreError("target must be an http or https URL", text=url)
    if not parts.hostname:
        raise StoreError("target URL has no host", text=url)
    return url


class UnsafeLocationError(StoreError):
    """A passthrough suffix would make the redirect leave its bound target (another host, port,
    scheme or path): the resolver refuses it instead of redirecting.

    >>> from pidkit.store import Binding, Resolution
    >>> b = Binding("ark", "ark:1/x", "ark:1/x", "https://e.org/a", passthrough=True)
    >>> Resolution(b, ".evil.com").location
    'https://e.org/a.evil.com'
    >>> root = Binding("ark", "ark:1/x", "ark:1/x", "https://e.org", passthrough=True)
    >>> Resolution(root, ".evil.com").location
    'https://e.org/.evil.com'
    """


def stays_under(target: str, location: str) -> bool:
    """True if ``location`` keeps the scheme, host and port of ``target`` and stays under its path
    as a browser resolves both (:func:`browser_path`; the query and fragment of the target are not
    part of the comparison: a suffix after them stays inside them).

    Every redirect pidkit composes (passthrough, the fallback resolver) is checked here.

    >>> here = "https://good.example/base/"
    >>> stays_under(here, "https://good.example/base/a/../b"), stays_under(here, here + "%2e%2E/x")
    (True, False)
    """
    if any(c in location for c in "\t\n\r"):  # WHATWG drops them anywhere: never compose around them
        return False
    try:
        bound = urllib.parse.urlsplit(target)
        composed = urllib.parse.urlsplit(location)
        ports = (composed.port, bound.port)
    except ValueError:
        return False
    special = composed.scheme.lower() in _TARGET_SCHEMES
    return (
        composed.scheme.lower() == bound.scheme.lower()
        and composed.hostname == bound.hostname
        and ports[0] == ports[1]
        and composed.netloc == bound.netloc
        and browser_path(composed.path, special=special).startswith(browser_path(bound.path, special=special))
    )


#: WHATWG URL Standard, "single-dot URL path segment" and "double-dot URL path segment" (compared
#: ASCII-lowercased: ``%2E`` is a dot as much as ``%2e``).
_SINGLE_DOT: Final = frozenset({".", "%2e"})
_DOUBLE_DOT: Final = frozenset({"..", ".%2e", "%2e.", "%2e%2e"})


def browser_path(path: str, *, special: bool = True) -> str:
    """The URL path ``path`` as a browser resolves it (WHATWG URL Standard, "path state"): ``.`` and
    ``..`` segments — also spelled ``%2e``, ``.%2E``, ``%2e%2e`` — removed, and for special schemes
    (``http``, ``https``) a backslash read as ``/``.  The one place pidkit decides where a composed
    redirect really points.

    >>> browser_path("/base/%2e%2e/%2E%2e/other"), browser_path("/base/.%2e/x/.")
    ('/other', '/x/')
    >>> browser_path("/a\\\\..\\\\b"), browser_path("/a\\\\..\\\\b", special=False)
    ('/b', '/a\\\\..\\\\b')
    >>> browser_path("")
    '/'
    """
    if special:
        path = path.replace("\\", "/")
    if not path.startswith("/"):
        path = "/" + path
    segments = path[1:].split("/")
    out: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        lowered = segment.lower()
        if lowered in _DOUBLE_DOT:
            if out:
                out.pop()
            if last:
                out.append("")
        elif lowered in _SINGLE_DOT:
            if last:
                out.append("")
        else:
            out.append(segment)
    return "/" + "/".join(out)
