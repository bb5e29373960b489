"""Configuration of the web service, read from the environment (DESIGN.md: configuration by environment).

Below both the web layer and the CLI: ``pidkit serve`` checks the environment with it before it starts
uvicorn (which then builds the application from the same environment, in each worker, through the
factory's import string), and the application reads it — neither imports the other.

=============================  ==============================================  =====================
variable                       meaning                                         default
=============================  ==============================================  =====================
``PIDKIT_DATABASE_URL``        the store (``sqlite:///…`` or ``postgresql://…``)  ``sqlite:///pidkit.db``
``PIDKIT_MAX_BODY``            largest request body accepted, in bytes          8 MiB
``PIDKIT_FALLBACK_RESOLVER``   where ARKs of unknown NAANs are sent             ``https://n2t.net/``
``PIDKIT_STORE_RETRY``         seconds between attempts to open a failed store  2
``PIDKIT_LOOKUP_TIMEOUT``      seconds a batch of ARK lookups may take (then    5
                               503; PostgreSQL, :mod:`pidkit.web.batch`)
``PIDKIT_MAX_HEADER``          largest request head (line + headers), bytes     64 KiB
                               (431; ``pidkit serve``, :mod:`pidkit.web.protocol`)
``PIDKIT_HEADER_TIMEOUT``      seconds a client has to send a request's headers 10
                               (408; ``pidkit serve``)
``PIDKIT_OFFLINE``             ``1``/``true``/``yes``/``on``: never forward to  off
                               the fallback resolver (404 instead; ``pidkit
                               serve --offline``)
``PIDKIT_REGISTRY_CHECK``      seconds between checks that the NAAN registry     10
                               file in force changed (one ``stat``; then it is
                               reloaded; docs/registry.md)
``PIDKIT_RESOLVE_CACHE``       plain redirects a worker keeps in memory (0:     100000
                               none; exact: dropped at any change of the store,
                               SQLite only; :mod:`pidkit.web.fastpath`)
``PIDKIT_SECURE_COOKIES``      back-office cookies marked ``Secure``: ``1``     by the request's
                               always (behind an HTTPS proxy), ``0`` never     scheme
``PIDKIT_SESSION_HOURS``       hours a back-office session lasts                8
``PIDKIT_EZID_BASE``           the path EZID's API is served below (``pidkit    ``/ezid``
                               serve --ezid-base``; docs/ezid.md)
``PIDKIT_OAI_ADMIN_EMAIL``     OAI-PMH Identify's ``adminEmail`` (docs/oai.md)  ``oai-admin@example.org``
``PIDKIT_TRUSTED_PROXIES``     addresses or networks of the reverse proxies     none
                               whose ``X-Forwarded-For``/``-Proto`` are
                               believed, comma-separated (``pidkit serve
                               --trusted-proxies``; docs/deployment.md)
=============================  ==============================================  =====================

>>> s = Settings.from_env({"PIDKIT_MAX_BODY": "1024"})
>>> s.max_body, s.fallback_resolver, s.offline
(1024, 'https://n2t.net/', False)
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from .errors import PidkitError

#: Default body limit: generous for a JSON Lines import of tens of thousands of bindings.
DEFAULT_MAX_BODY: Final = 8 * 1024 * 1024
#: Default bound on a request's head (request line and headers), in bytes.
DEFAULT_MAX_HEADER: Final = 64 * 1024
#: Default seconds a client has to send a request's headers, from their first byte.
DEFAULT_HEADER_TIMEOUT: Final = 10
#: draft-kunze-ark-40 §3.3 ("Resolver Chains and Roles"): a resolver that knows nothing about a NAAN
#: should redirect the request to N2T.net.
DEFAULT_FALLBACK: Final = "https://n2t.net/"
#: Default seconds between checks that the NAAN registry file in force changed.
DEFAULT_REGISTRY_CHECK: Final = 10
#: Default number of redirects a worker keeps in memory (:mod:`pidkit.web.fastpath`).
DEFAULT_RESOLVE_CACHE: Final = 100_000
#: Default path below which EZID's API is served (docs/ezid.md).
DEFAULT_EZID_BASE: Final = "/ezid"
#: Default ``adminEmail`` of OAI-PMH Identify (docs/oai.md: set it).
DEFAULT_OAI_ADMIN_EMAIL: Final = "oai-admin@example.org"
#: A base path: ``/`` then segments of unreserved characters, no trailing slash.
_BASE_PATH: Final = re.compile(r"(?:/[A-Za-z0-9._~-]+)+")
#: Values of PIDKIT_OFFLINE that turn it on, and those that leave it off.
_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off"})
#: draft-kunze-ark-40 §5 (IANA Considerations): the ARK service path, returned by /.well-known/ark.
SERVICE_PATH: Final = "/"


@dataclass(frozen=True, slots=True)
class Settings:
    """Settings of one app instance.  ``database_url`` ``None`` means ``$PIDKIT_DATABASE_URL`` or the
    embedded SQLite default (:func:`pidkit.store.default_url`).

    >>> Settings(max_body=10).max_body
    10
    """

    database_url: str | None = None
    max_body: int = DEFAULT_MAX_BODY
    fallback_resolver: str = DEFAULT_FALLBACK
    store_retry: float = 2.0
    lookup_timeout: float = 5.0
    max_header: int = DEFAULT_MAX_HEADER
    header_timeout: float = float(DEFAULT_HEADER_TIMEOUT)
    #: Offline: ARKs the store and the NAAN registry cannot resolve get a 404, never the fallback resolver.
    offline: bool = False
    #: Seconds between checks that the NAAN registry file in force changed (:mod:`pidkit.web.lookups`).
    registry_check: float = float(DEFAULT_REGISTRY_CHECK)
    #: Redirects a worker keeps in memory (:class:`pidkit.web.fastpath.RedirectCache`; 0: none).
    resolve_cache: int = DEFAULT_RESOLVE_CACHE

    @property
    def forward_to(self) -> str | None:
        """Where ARKs nothing here resolves are forwarded: the fallback resolver, or ``None`` offline.

        >>> Settings().forward_to, Settings(offline=True).forward_to
        ('https://n2t.net/', None)
        """
        return None if self.offline else self.fallback_resolver
    #: ``Secure`` on the back office's cookies: ``None`` when the request came over HTTPS.
    secure_cookies: bool | None = None
    session_hours: int = 8
    #: The path EZID's API is served below (:mod:`pidkit.web.ezid`): ``/ezid/id/ark:/…``, ``/ezid/login``.
    ezid_base: str = DEFAULT_EZID_BASE
    #: OAI-PMH Identify's ``adminEmail`` (:mod:`pidkit.web.oai`).
    oai_admin_email: str = DEFAULT_OAI_ADMIN_EMAIL
    #: The reverse proxies (addresses, networks) whose forwarded client address and scheme are believed.
    trusted_proxies: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``env`` (default ``os.environ``); a bad value raises
        :class:`~pidkit.errors.PidkitError` naming the variable.

        >>> Settings.from_env({"PIDKIT_MAX_BODY": "lots"})
        Traceback (most recent call last):
        ...
        pidkit.errors.PidkitError: PIDKIT_MAX_BODY must be a positive integer in 'lots'
        """
        env = os.environ if env is None else env
        fallback = env.get("PIDKIT_FALLBACK_RESOLVER") or DEFAULT_FALLBACK
        if not fallback.startswith(("https://", "http://")):
            raise PidkitError("PIDKIT_FALLBACK_RESOLVER must be an http(s) URL", text=fallback)
        return cls(
            database_url=env.get("PIDKIT_DATABASE_URL") or None,
            max_body=_positive_int(env, "PIDKIT_MAX_BODY", DEFAULT_MAX_BODY),
            fallback_resolver=fallback if fallback.endswith("/") else fallback + "/",
            store_retry=float(_positive_int(env, "PIDKIT_STORE_RETRY", 2)),
            lookup_timeout=float(_positive_int(env, "PIDKIT_LOOKUP_TIMEOUT", 5)),
            max_header=_positive_int(env, "PIDKIT_MAX_HEADER", DEFAULT_MAX_HEADER),
            header_timeout=float(_positive_int(env, "PIDKIT_HEADER_TIMEOUT", DEFAULT_HEADER_TIMEOUT)),
            offline=_flag(env, "PIDKIT_OFFLINE") is True,
            registry_check=float(_positive_int(env, "PIDKIT_REGISTRY_CHECK", DEFAULT_REGISTRY_CHECK)),
            resolve_cache=_count(env, "PIDKIT_RESOLVE_CACHE", DEFAULT_RESOLVE_CACHE),
            secure_cookies=_flag(env, "PIDKIT_SECURE_COOKIES"),
            session_hours=_positive_int(env, "PIDKIT_SESSION_HOURS", 8),
            ezid_base=check_base_path(env.get("PIDKIT_EZID_BASE") or DEFAULT_EZID_BASE, "PIDKIT_EZID_BASE"),
            oai_admin_email=_email(env.get("PIDKIT_OAI_ADMIN_EMAIL") or DEFAULT_OAI_ADMIN_EMAIL),
            trusted_proxies=check_proxies(env.get("PIDKIT_TRUSTED_PROXIES") or "", "PIDKIT_TRUSTED_PROXIES"),
        )


def check_proxies(text: str, name: str = "trusted proxies") -> tuple[str, ...]:
    """The trusted reverse proxies of ``text``: comma-separated IP addresses and networks (CIDR), each
    in its normal form; a bad entry raises :class:`~pidkit.errors.PidkitError` naming ``name`` and the
    entry's position.  Behind a proxy every request comes from the proxy's address, so the sign-in limits
    per client address (:mod:`pidkit.store.accounts`) would count every client as one: a proxy named
    here is believed when it says whom it forwards for (``X-Forwarded-For``) and over which scheme
    (``X-Forwarded-Proto``); nobody else is.  ``*`` (believe anyone) is refused: a client reaching the
    service directly could then choose its own address.

    >>> check_proxies("127.0.0.1, 172.16.0.0/12,::1")
    ('127.0.0.1', '172.16.0.0/12', '::1')
    >>> check_proxies(" 172.30.80.10 ,,")
    ('172.30.80.10',)
    >>> check_proxies("")
    ()
    >>> check_proxies("127.0.0.1,nginx", "PIDKIT_TRUSTED_PROXIES")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pidkit.errors.PidkitError: PIDKIT_TRUSTED_PROXIES: not an IP ... in '127.0.0.1,nginx' at position 11
    >>> check_proxies("10.0.0.1/8")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pidkit.errors.PidkitError: trusted proxies: not an IP ...: 10.0.0.1/8 has host bits set in ...
    >>> check_proxies("::/0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pidkit.errors.PidkitError: trusted proxies: ::/0 is every address (as '*' would be) in '::/0' ...
    """
    entries: list[str] = []
    start = 0
    for part in text.split(","):
        entry = part.strip()
        if entry:
            position = start + part.index(entry) + 1
            try:
                found = ipaddress.ip_network(entry) if "/" in entry else ipaddress.ip_address(entry)
            except ValueError as exc:  # a host name, '*', a network with host bits set (a typo?) …
                raise PidkitError(f"{name}: not an IP address or network (CIDR): {exc}", text=text,
                                  position=position) from None  # fmt: skip
            if isinstance(found, ipaddress.IPv4Network | ipaddress.IPv6Network) and found.prefixlen == 0:
                raise PidkitError(f"{name}: {entry} is every address (as '*' would be)", text=text,
                                  position=position)  # fmt: skip
            entries.append(str(found))
        start += len(part) + 1
    return tuple(entries)


def check_base_path(path: str, name: str = "base path") -> str:
    """``path`` if it can be a base path (``/`` then segments of letters, digits, ``.``, ``_``, ``~``,
    ``-``; no trailing slash), else :class:`~pidkit.errors.PidkitError` naming ``name``.

    >>> check_base_path("/ezid"), check_base_path("/api/ezid")
    ('/ezid', '/api/ezid')
    >>> check_base_path("ezid/", "PIDKIT_EZID_BASE")
    Traceback (most recent call last):
    ...
    pidkit.errors.PidkitError: PIDKIT_EZID_BASE must be a path like /ezid (no trailing slash) in 'ezid/'
    """
    if not _BASE_PATH.fullmatch(path):
        raise PidkitError(f"{name} must be a path like /ezid (no trailing slash)", text=path)
    return path


def _email(text: str) -> str:
    """An ``adminEmail``: one address, ``local@domain``, no whitespace (OAI-PMH §4.2).

    >>> _email("x y@z")
    Traceback (most recent call last):
    ...
    pidkit.errors.PidkitError: PIDKIT_OAI_ADMIN_EMAIL must be an e-mail address in 'x y@z'
    """
    local, at, domain = text.partition("@")
    if not (local and at and domain) or any(c.isspace() or not c.isprintable() for c in text):
        raise PidkitError("PIDKIT_OAI_ADMIN_EMAIL must be an e-mail address", text=text)
    return text


#: The most digits a number in a variable may have (before it is converted: Python refuses to convert
#: more than 4,300 with a ValueError).
_MAX_DIGITS: Final = 18


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    """A variable that holds a positive integer (ASCII digits), or ``default`` when unset or empty.

    >>> _positive_int({"PIDKIT_MAX_BODY": "\u00b2"}, "PIDKIT_MAX_BODY", 1)
    Traceback (most recent call last):
    ...
    pidkit.errors.PidkitError: PIDKIT_MAX_BODY must be a positive integer in '²'
    >>> _positive_int({"PIDKIT_MAX_BODY": "9" * 5000}, "PIDKIT_MAX_BODY", 1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pidkit.errors.PidkitError: PIDKIT_MAX_BODY must be a positive integer in '999...'… (5000 characters)
    """
    text = env.get(name)
    if not text:
        return default
    if not (text.isascii() and text.isdigit()) or len(text) > _MAX_DIGITS or int(text) < 1:
        raise PidkitError(f"{name} must be a positive integer", text=text)
    return int(text)


#: The largest count :func:`_count` accepts.
_MAX_COUNT: Final = 100_000_000


def _count(env: Mapping[str, str], name: str, default: int) -> int:
    """A variable that holds a count, 0 included (ASCII digits, at most :data:`_MAX_COUNT`), or
    ``default`` when unset or empty.

    >>> _count({"PIDKIT_RESOLVE_CACHE": "0"}, "PIDKIT_RESOLVE_CACHE", 5), _count({}, "X", 5)
    (0, 5)
    >>> _count({"PIDKIT_RESOLVE_CACHE": "-1"}, "PIDKIT_RESOLVE_CACHE", 5)
    Traceback (most recent call last):
    ...
    pidkit.errors.PidkitError: PIDKIT_RESOLVE_CACHE must be a whole number from 0 to 100000000 in '-1'
    """
    text = env.get(name)
    if not text:
        return default
    if not (text.isascii() and text.isdigit()) or len(text) > _MAX_DIGITS or int(text) > _MAX_COUNT:
        raise PidkitError(f"{name} must be a whole number from 0 to {_MAX_COUNT}", text=text)
    return int(text)


def _flag(env: Mapping[str, str], name: str) -> bool | None:
    """A yes/no variable: ``1``/``true``/``yes``/``on`` → True, ``0``/``false``/``no``/``off`` → False (any
    case), unset or empty → ``None`` (the setting's own default decides).

    >>> _flag({"PIDKIT_OFFLINE": "Yes"}, "PIDKIT_OFFLINE"), _flag({}, "PIDKIT_OFFLINE")
    (True, None)
    >>> _flag({"PIDKIT_OFFLINE": "maybe"}, "PIDKIT_OFFLINE")
    Traceback (most recent call last):
    ...
    pidkit.errors.PidkitError: PIDKIT_OFFLINE must be 1, true, yes, on or 0, false, no, off in 'maybe'
    """
    text = env.get(name, "")
    value = text.strip().lower()
    if not value:
        return None
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise PidkitError(f"{name} must be 1, true, yes, on or 0, false, no, off", text=text)
