"""``pidkit edge nginx``: the resolver's floor — nginx answers the redirects it can answer exactly as pidkit.

nginx with a ``map`` of ARKs and ``return 302`` is the fastest resolver there is (issue 18 measured it
at about ten times pidkit's rate; ``benchmarks/bench_edge.py`` measures these files).  This module
writes that ``map`` from a store, and the ``server`` snippet that uses it, so that nginx answers
**exactly** the requests it can answer identically to pidkit and passes every other request to pidkit
unchanged:

=====================================================  ===========================================
request                                                answered by
=====================================================  ===========================================
``GET``/``HEAD /ark:NAAN/Name`` or ``/ark:/NAAN/Name``  nginx: 302 to the stored target, the same
— the stored (§3.2 normalized) spelling of a public     ``Location`` bytes, ``Content-Length: 0``, no
binding with a usable target                            body and no ``Content-Type`` (as pidkit)
any other spelling (hyphens, ``ARK:``, NAAN case,       pidkit (``proxy_pass``, the raw request URI)
``%xx``), any query (``?info``, ``??``, ``?``),
suffix passthrough, reserved, unavailable,
tombstoned, unknown ids, other NAANs, other methods,
every other path
=====================================================  ===========================================

Correct first: nginx's ``map`` compares strings — and compares them **ignoring ASCII case**, while an
ARK's name is case-sensitive — so the map holds only canonical spellings and nginx checks the exact
bytes itself: one ``map`` gives the path that was stored (``$pidkit_edge_path``), a second one the
``Location`` (``$pidkit_edge_location``), and the snippet redirects only when the stored path equals
``$request_uri`` byte for byte (and the method is ``GET`` or ``HEAD``).  Two stored spellings that differ
only in case would be the same key to nginx (a fatal "conflicting parameter"): only the first is
mapped (:class:`CaseFilter`), the others are left to pidkit.

Everything written into the nginx configuration is checked against a small alphabet
(:data:`PLAIN_PATH`, :data:`PLAIN_LOCATION`) and double-quoted; ``$`` (which nginx would read as a
variable) is written as ``${pidkit_edge_dollar}``, a variable that holds a literal ``$``
(:func:`nginx_string`).  A binding whose path or target does not fit is not mapped (pidkit answers
it): a target is user data, and no target can change the configuration.

>>> from pidkit.store import open_store
>>> s = open_store("sqlite:///:memory:")
>>> _ = s.add_naan("12345")
>>> _ = s.bind("ark:/12345/x5-4", 'https://example.org/a"{b$c')
>>> request_paths(s.get_binding("ark:12345/x54"))
('/ark:12345/x54', '/ark:/12345/x54')
>>> location_header('https://example.org/a"{b$c')
'https://example.org/a%22%7Bb$c'
>>> nginx_string(location_header('https://example.org/a"{b$c'))
'"https://example.org/a%22%7Bb${pidkit_edge_dollar}c"'
>>> s.close()
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final
from urllib.parse import quote

import mmh3

from .ark import Ark
from .atomic import AtomicWriter
from .errors import ArkError, StoreError
from .store import Binding, Store, redact_url, validate_target

__all__ = [
    "LOCATION_SAFE",
    "MAP_FILE",
    "PLAIN_LOCATION",
    "PLAIN_PATH",
    "SERVER_FILE",
    "CaseFilter",
    "EdgeReport",
    "iter_ark_bindings",
    "location_header",
    "nginx_string",
    "request_paths",
    "run_reload",
    "server_snippet",
    "watch",
    "write_edge",
    "write_map",
]

#: The file for nginx's ``http {}`` context: the maps (rewritten whenever the store changes).
MAP_FILE: Final = "pidkit-edge-map.conf"
#: The file for the resolver's ``server {}`` block: the ``location`` that uses the maps.
SERVER_FILE: Final = "pidkit-edge-server.conf"

#: What pidkit leaves unencoded in a ``Location`` (Starlette's ``RedirectResponse``, which pidkit's
#: fast path imitates: ``pidkit.web.fastpath._LOCATION_SAFE``).  A copy — this module must not import
#: the web layer; ``tests/test_edge.py`` checks that both are equal and that pidkit sends the same bytes.
LOCATION_SAFE: Final = ":/%#?=@[]!$&'()*+,;"
#: A request path nginx may answer: RFC 3986 pchar and '/' without '%', '$', ';' (nothing nginx or a
#: client would rewrite, nothing special in a quoted nginx string).
PLAIN_PATH: Final = re.compile(r"/[A-Za-z0-9\-._~!&'()*+,=:@/]+")
#: A ``Location`` as :func:`location_header` writes it: ASCII, no space, quote or backslash.
PLAIN_LOCATION: Final = re.compile(r"https?://[A-Za-z0-9\-._~:/%#?=@\[\]!$&'()*+,;]+")
#: Dot segments and empty segments: nginx would normalize such a path before matching locations.
_UNNORMAL: Final = re.compile(r"//|/\.\.?(?:/|$)")
#: The nginx variable the map file defines to hold a literal '$'.
DOLLAR: Final = "${pidkit_edge_dollar}"
#: An upstream nginx passes requests to: scheme, host and optional port, no path (the request URI is
#: then passed exactly as the client sent it).
UPSTREAM: Final = re.compile(r"https?://(?:[A-Za-z0-9.\-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")
#: Bindings read per store query (keyset pagination through :meth:`pidkit.store.Store.list_bindings`).
PAGE: Final = 2000


def location_header(target: str) -> str:
    """The ``Location`` header pidkit sends for a redirect to ``target`` (percent-encoded as Starlette's
    ``RedirectResponse`` does).

    >>> location_header("https://e.org/caf\\u00e9?q=1 2")
    'https://e.org/caf%C3%A9?q=1%202'
    """
    return quote(target, LOCATION_SAFE)


def nginx_string(text: str) -> str:
    """``text`` as a double-quoted nginx string (a ``map`` key or value) that nginx reads back as
    ``text``: ``$`` becomes ``${pidkit_edge_dollar}`` (a variable holding ``$``).  Only for text of
    :data:`PLAIN_PATH` or :data:`PLAIN_LOCATION`; anything else (a quote, a backslash, whitespace) is
    refused, never escaped.

    >>> nginx_string("https://e.org/a$b;c")
    '"https://e.org/a${pidkit_edge_dollar}b;c"'
    >>> nginx_string('https://e.org/"')
    Traceback (most recent call last):
    ...
    ValueError: not plain enough for an nginx string: 'https://e.org/"'
    """
    if PLAIN_PATH.fullmatch(text) is None and PLAIN_LOCATION.fullmatch(text) is None:
        raise ValueError(f"not plain enough for an nginx string: {text!r}")
    return '"' + text.replace("$", DOLLAR) + '"'


def request_paths(binding: Binding, *, old_label: bool = True) -> tuple[str, ...]:
    """The request paths nginx may answer for ``binding`` with a 302 to its target, as pidkit would:
    the stored spelling in both label forms (``/ark:NAAN/…``, ``/ark:/NAAN/…``; the second only with
    ``old_label``); none if pidkit would not
    redirect an exact request of it (not public, no target, a target pidkit refuses to redirect to) or
    the path is not plain (:data:`PLAIN_PATH`, no dot or empty segments) or does not normalize back to
    the binding (§3.2).

    >>> request_paths(Binding("ark", "ark:1/x", "ark:1/x", "https://e.org/"))
    ('/ark:1/x', '/ark:/1/x')
    >>> request_paths(Binding("ark", "ark:1/x", "ark:1/x", "https://e.org/"), old_label=False)
    ('/ark:1/x',)
    >>> request_paths(Binding("ark", "ark:1/x", "ark:1/x", "https://e.org/", status="reserved"))
    ()
    >>> request_paths(Binding("ark", "ark:1/x", "ark:1/x", "ftp://e.org/"))
    ()
    """
    if binding.kind != "ark" or binding.status != "public" or binding.target is None:
        return ()
    try:
        validate_target(binding.target)  # pidkit's resolver re-checks stored targets the same way
    except StoreError:
        return ()
    key = binding.key
    if not key.startswith("ark:"):
        return ()
    paths = ("/" + key, "/ark:/" + key[len("ark:"):]) if old_label else ("/" + key,)
    for path in paths:
        if PLAIN_PATH.fullmatch(path) is None or _UNNORMAL.search(path) is not None:
            return ()
        try:
            if Ark.parse(path[1:]).normalized != key:
                return ()
        except ArkError:
            return ()
    return paths


class CaseFilter:
    """Remembers the request paths mapped so far, ignoring ASCII case as nginx's ``map`` does, in a
    fixed amount of memory (a Bloom filter of ``bits`` bits, three probes): :meth:`add` is False for a
    path that may collide with one added before.  A false positive only leaves a path to pidkit.

    >>> f = CaseFilter(bits=1 << 16)
    >>> f.add("/ark:1/Ab"), f.add("/ark:1/aB"), f.add("/ark:1/c")
    (True, False, True)
    """

    __slots__ = ("_bits", "_mask")

    def __init__(self, *, bits: int = 1 << 27) -> None:
        if bits < 8 or bits & (bits - 1):
            raise ValueError(f"bits must be a power of two >= 8 ({bits})")
        self._bits = bytearray(bits // 8)
        self._mask = bits - 1

    def add(self, path: str) -> bool:
        """Add ``path``; False if a path equal to it ignoring ASCII case may have been added before."""
        # nginx lowercases ASCII only; paths are ASCII.  MurmurHash3, not hash(): the same store
        # gives the same map in every process (hash() of a str changes with PYTHONHASHSEED).
        h, step = mmh3.hash64(path.lower(), signed=False)
        step |= 1
        bits, mask, new = self._bits, self._mask, False
        for i in range(3):
            bit = (h + i * step) & mask
            byte, flag = bit >> 3, 1 << (bit & 7)
            if not bits[byte] & flag:
                bits[byte] |= flag
                new = True
        return new


@dataclass
class EdgeReport:
    """What :func:`write_map` wrote: bindings read, paths mapped and why the others were left to pidkit."""

    bindings: int = 0
    mapped: int = 0
    not_redirected: int = 0
    case_collisions: int = 0
    longest: int = 0

    def summary(self) -> str:
        """One line for the user.

        >>> EdgeReport(bindings=3, mapped=4, not_redirected=1).summary()
        '3 ARK bindings: 4 request paths mapped, 1 binding and 0 case collisions left to pidkit'
        """
        plural = "" if self.not_redirected == 1 else "s"
        return (f"{self.bindings} ARK bindings: {self.mapped} request paths mapped, {self.not_redirected} "
                f"binding{plural} and {self.case_collisions} case collisions left to pidkit")


def iter_ark_bindings(store: Store, *, page: int = PAGE) -> Iterator[Binding]:
    """Every ARK binding of ``store`` in key order, ``page`` at a time (memory does not grow with the
    store).

    >>> from pidkit.store import open_store
    >>> with open_store("sqlite:///:memory:") as s:
    ...     _ = s.add_naan("1")
    ...     for n in "abc":
    ...         _ = s.bind(f"ark:1/{n}", "https://e.org/")
    ...     [b.key for b in iter_ark_bindings(s, page=2)]
    ['ark:1/a', 'ark:1/b', 'ark:1/c']
    """
    after: str | None = None
    while True:
        rows = store.list_bindings(kind="ark", after=after, limit=page)
        yield from rows
        if len(rows) < page:
            return
        after = rows[-1].key


def _hash_size(n: int) -> int:
    """``map_hash_max_size`` for ``n`` keys (nginx refuses to start if the hash cannot be built)."""
    return max(2048, 2 * n)


def _bucket_size(longest: int) -> int:
    """``map_hash_bucket_size`` that holds a key of ``longest`` bytes (a power of two, at least 128:
    nginx builds a hash of millions of keys faster with larger buckets — 17 s instead of 25 s at
    2,000,000 keys, measured)."""
    size = 128
    while size < longest + 32:
        size *= 2
    return size


def write_map(
    store: Store,
    out: IO[str],
    *,
    source: str = "",
    case_filter: CaseFilter | None = None,
    old_label: bool = True,
) -> EdgeReport:
    """Write the nginx map file of ``store`` to ``out`` (for ``http {}``): one streamed pass over the
    bindings; the ``Location`` map is spooled to a temporary file meanwhile, so both maps come from the
    same reading of each binding.  ``source`` is named in the header comment (a redacted store URL).

    >>> import io
    >>> from pidkit.store import open_store
    >>> with open_store("sqlite:///:memory:") as s:
    ...     _ = s.add_naan("1")
    ...     _ = s.bind("ark:1/x", "https://e.org/x")
    ...     out = io.StringIO()
    ...     write_map(s, out, case_filter=CaseFilter(bits=1 << 10)).mapped
    2
    >>> print(out.getvalue().split("map $request_uri $pidkit_edge_location {")[1].strip())
    default "";
        "/ark:1/x" "https://e.org/x";
        "/ark:/1/x" "https://e.org/x";
    }
    """
    report = EdgeReport()
    seen = CaseFilter() if case_filter is None else case_filter
    source = "".join(c if " " <= c <= "~" else "?" for c in source)  # one comment line, whatever the URL
    with tempfile.TemporaryFile("w+", encoding="ascii") as paths, \
            tempfile.TemporaryFile("w+", encoding="ascii") as locations:
        for binding in iter_ark_bindings(store):
            report.bindings += 1
            spellings = request_paths(binding, old_label=old_label)
            location = location_header(binding.target) if spellings and binding.target else ""
            if not spellings or PLAIN_LOCATION.fullmatch(location) is None:
                report.not_redirected += 1
                continue
            value = nginx_string(location)
            for path in spellings:
                if not seen.add(path):
                    report.case_collisions += 1
                    continue
                key = nginx_string(path)
                paths.write(f"    {key} {key};\n")
                locations.write(f"    {key} {value};\n")
                report.mapped += 1
                report.longest = max(report.longest, len(path))
        out.write(
            f"# Generated by `pidkit edge nginx`{' from ' + source if source else ''}: do not edit.\n"
            f"# {report.summary()}.\n"
            "# Include it in the http {} block, before any other map block (it sets the map hash sizes).\n"
            f"map_hash_max_size {_hash_size(report.mapped)};\n"
            f"map_hash_bucket_size {_bucket_size(report.longest)};\n"
            'geo $pidkit_edge_dollar { default "$"; }\n'
            'map $request_method $pidkit_edge_method { default "-"; GET ""; HEAD ""; }\n'
        )
        for name, spool in (("path", paths), ("location", locations)):
            out.write(f'map $request_uri $pidkit_edge_{name} {{\n    default "";\n')
            spool.seek(0)
            while chunk := spool.read(1 << 16):
                out.write(chunk)
            out.write("}\n")
    return report


#: The named location whose empty body turns nginx's 302 into pidkit's (no body, no type); named, so
#: no request can reach it.
_EMPTY_302: Final = "@pidkit_edge_302"


def server_snippet(upstream: str) -> str:
    """The ``server {}`` part: redirect what the maps hold, pass everything else to ``upstream`` (pidkit
    serve) with the request URI exactly as sent.

    >>> snippet = server_snippet("http://127.0.0.1:8000")
    >>> [line.strip() for line in snippet.splitlines() if "proxy_pass" in line]
    ['proxy_pass http://127.0.0.1:8000;']
    >>> server_snippet("http://127.0.0.1:8000/")
    Traceback (most recent call last):
    ...
    ValueError: the upstream is scheme://host[:port] without a path: 'http://127.0.0.1:8000/'
    """
    if UPSTREAM.fullmatch(upstream) is None:
        raise ValueError(f"the upstream is scheme://host[:port] without a path: {upstream!r}")
    return f"""\
# Generated by `pidkit edge nginx`: do not edit.  Include it in the server {{}} block of the resolver;
# the http {{}} block includes {MAP_FILE}.  nginx answers a GET/HEAD whose request URI is byte for
# byte a mapped ARK path; every other request goes to pidkit with the request URI as sent.
location / {{
    # nginx's own 302 carries an HTML body; pidkit's has none: the empty page below replaces it
    error_page 302 {_EMPTY_302};
    if ($pidkit_edge_path = "$request_uri$pidkit_edge_method") {{
        return 302 $pidkit_edge_location;
    }}
    # no URI after the address: nginx forwards the request line's path as sent
    proxy_pass {upstream};
    proxy_set_header Host $host;
    # the client's address as nginx sees it, not what the client wrote (pidkit --trusted-proxies)
    proxy_set_header X-Forwarded-For $remote_addr;
    proxy_set_header X-Forwarded-Proto $scheme;
    proxy_redirect off;
}}
location {_EMPTY_302} {{
    default_type "";
    return 200 "";
}}
"""


def write_edge(
    store: Store,
    directory: str | os.PathLike[str],
    *,
    upstream: str,
    source: str = "",
    old_label: bool = True,
) -> EdgeReport:
    """Write :data:`MAP_FILE` and :data:`SERVER_FILE` into ``directory``, each atomically (nginx never
    reads half a file).  ``old_label=False`` maps only the ``ark:NAAN/…`` spelling (:func:`request_paths`).

    >>> import os, tempfile
    >>> from pidkit.store import open_store
    >>> with tempfile.TemporaryDirectory() as d, open_store("sqlite:///:memory:") as s:
    ...     write_edge(s, d, upstream="http://127.0.0.1:8000").mapped, sorted(os.listdir(d))
    (0, ['pidkit-edge-map.conf', 'pidkit-edge-server.conf'])
    """
    snippet = server_snippet(upstream)  # a bad upstream fails before anything is written
    with AtomicWriter(Path(directory) / MAP_FILE, text=True) as fh:
        report = write_map(store, fh, source=source, old_label=old_label)
    with AtomicWriter(Path(directory) / SERVER_FILE, text=True) as fh:
        fh.write(snippet)
    return report


def run_reload(command: str) -> int:
    """Run the reload command (split like a shell would, run without one); return its exit status
    (127 if it cannot be run, as a shell says).

    >>> run_reload("true"), run_reload("false"), run_reload("/nonexistent/nginx -s reload")
    (0, 1, 127)
    """
    try:
        # the operator's own command line (a flag of theirs), run without a shell
        return subprocess.run(shlex.split(command), check=False).returncode  # noqa: S603
    except OSError:
        return 127


def watch(
    url: str,
    open_store: Callable[[str], Store],
    directory: str | os.PathLike[str],
    *,
    upstream: str,
    interval: float = 2.0,
    reload: Callable[[], None] | None = None,
    written: Callable[[EdgeReport], None] | None = None,
    rounds: int | None = None,
    old_label: bool = True,
) -> None:
    """Write the edge files, then poll the store every ``interval`` seconds and rewrite them — then call
    ``reload`` — only when its bindings changed (:meth:`~pidkit.store.Store.bindings_token`: on SQLite the
    WAL-index header, which every commit rewrites; on PostgreSQL the notifications of migration 10,
    else the table's row counters).  Runs until interrupted (or for ``rounds`` polls, for tests);
    ``old_label`` as for :func:`write_edge`.  The token is read *before* each writing pass: a change made
    during a pass is seen at the next poll.  :class:`~pidkit.errors.StoreError` for a store no other
    process can write to (``:memory:``).

    >>> import tempfile
    >>> from pidkit.store import open_store
    >>> d = tempfile.mkdtemp(); url = f"sqlite:///{d}/t.db"
    >>> open_store(url).close()
    >>> reports = []
    >>> watch(url, open_store, d, upstream="http://127.0.0.1:8000", interval=0, rounds=3,
    ...       written=reports.append)
    >>> len(reports)  # written once: nothing changed afterwards
    1
    """
    with contextlib.closing(open_store(url)) as store:
        if store.bindings_token() is None:
            raise StoreError("--watch needs a store other processes write to, not :memory:", text=url)
        last: Hashable = object()
        polls = 0
        while rounds is None or polls < rounds:
            polls += 1
            now = store.bindings_token()
            if now != last:
                report = write_edge(store, directory, upstream=upstream, source=redact_url(url),
                                    old_label=old_label)
                last = now
                if written is not None:
                    written(report)
                if reload is not None:
                    reload()
            if rounds is None or polls < rounds:
                time.sleep(interval)
