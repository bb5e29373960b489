"""``XarkId.new()`` in C (``pidkit._speedups.xarkid_new``) and in pure Python (``pidkit.xarkid._new_python``):
the same structure, clock and randomness, checked side by side (issue 18).

The C helper not being built fails :func:`test_c_new_is_in_use` under CI (``CI=true``) and skips it (and
the C-only cases) elsewhere, as ``tests/test_llid.py`` does for Library.Link ids.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pidkit import xarkid
from pidkit.xarkid import RevisionId, XarkId

B64URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
NOT_BUILT = "pidkit._speedups is not built (it needs a C compiler and the Python headers at install)"


def _compiled() -> ModuleType | None:
    try:
        module = importlib.import_module("pidkit._speedups")
    except ImportError:
        return None
    module._xarkid_setup(XarkId, XarkId.__dict__["_compact"], os.urandom)  # as pidkit.xarkid does
    return module


C = _compiled()
needs_c = pytest.mark.skipif(C is None, reason=NOT_BUILT)
PURE = os.environ.get("PIDKIT_PURE_PYTHON", "") not in ("", "0")


def c_new(cls: type[XarkId]) -> XarkId:
    assert C is not None
    made = C.xarkid_new(cls)
    assert isinstance(made, XarkId)
    return made


NewImpl = Callable[[type[XarkId]], XarkId]
#: Every implementation of XarkId.new: the public one (whichever is active), C, pure Python.
IMPLEMENTATIONS = [
    pytest.param(lambda cls: cls.new(), id="public"),
    pytest.param(c_new, id="c", marks=needs_c),
    pytest.param(xarkid._new_python, id="python"),
]


@pytest.mark.skipif(C is None and not os.environ.get("CI"), reason=NOT_BUILT)
def test_c_new_is_in_use() -> None:
    """With the helper built (and ``PIDKIT_PURE_PYTHON`` unset), ``XarkId.new`` is the C function."""
    if C is None:
        pytest.fail(f"{NOT_BUILT}: CI must run the compiled path (apt-get install gcc, reinstall)")
    if not PURE:
        assert xarkid.SPEEDUPS is True
        assert XarkId.__dict__["new"].__func__ is C.xarkid_new


@pytest.mark.parametrize("value", ["1", "yes"])
def test_pure_python_switch(value: str) -> None:
    """``PIDKIT_PURE_PYTHON`` (read once at import) keeps the pure-Python ``new``; ``0`` does not."""
    code = (
        "from pidkit.xarkid import XarkId, SPEEDUPS, _new_python;"
        "x = XarkId.new(); print(SPEEDUPS, XarkId.new.__func__ is _new_python, len(str(x)), type(x).__name__)"
    )
    env = {**os.environ, "PIDKIT_PURE_PYTHON": value}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "20", "XarkId"]
    env["PIDKIT_PURE_PYTHON"] = "0"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    built = C is not None
    assert out.stdout.split() == [str(built), str(not built), "20", "XarkId"]


@pytest.mark.parametrize("new", IMPLEMENTATIONS)
@pytest.mark.parametrize("cls", [XarkId, RevisionId])
def test_structure(new: NewImpl, cls: type[XarkId]) -> None:
    """Layout (20 base64url chars = 6 time bytes + 9 random), GUID nibbles, the clock, the type, lazy int."""
    before = time.time_ns() // 1_000_000
    x = new(cls)
    after = time.time_ns() // 1_000_000
    assert type(x) is cls
    text = str(x)
    assert len(text) == 20 and B64URL.issuperset(text)
    with pytest.raises(AttributeError):
        XarkId.__dict__["_int"].__get__(x, cls)  # only the compact text is set; the int is decoded on use
    assert before <= x.unix_ms <= after
    assert x.bytes[:6] == x.unix_ms.to_bytes(6, "big")
    assert text[:8] == XarkId.from_parts(unix_ms=x.unix_ms, random=0).compact[:8]
    assert x.hex[12] == "4" and x.hex[16] == "8"
    assert XarkId.parse(str(x.guid)) == x
    assert XarkId.from_int(x.int) == x and str(XarkId.from_int(x.int)) == text
    assert repr(x) == f"{cls.__name__}({text!r})"
    with pytest.raises(AttributeError, match="immutable"):
        x._compact = "AAAAAAAAAAAAAAAAAAAA"


@pytest.mark.parametrize("new", IMPLEMENTATIONS)
def test_distinct_and_random_bits_spread(new: NewImpl) -> None:
    """20,000 ids (the C pool is refilled about 40 times): no repeat, and every one of the 72 random bits
    is set in some ids and clear in others (a stuck bit would show a bad layout or a bad source)."""
    ids = [new(XarkId) for _ in range(20_000)]
    assert len({str(x) for x in ids}) == len(ids)
    ones = 0
    zeros = 0
    for x in ids:
        ones |= x.random
        zeros |= ~x.random & xarkid.MAX_RANDOM
    assert ones == zeros == xarkid.MAX_RANDOM


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(["c", "python"]), st.integers(min_value=1, max_value=40))
def test_text_parse_round_trip(which: str, n: int) -> None:
    """Whatever the implementation, ``parse(str(x)) == x`` with the same int, bytes and GUID."""
    new: NewImpl = c_new if which == "c" and C is not None else xarkid._new_python
    for _ in range(n):
        x = new(XarkId)
        y = XarkId.parse(str(x))
        assert y == x and hash(y) == hash(x)
        assert (y.int, y.bytes, y.guid) == (x.int, x.bytes, x.guid)
        assert XarkId.from_bytes(x.bytes) == x


@pytest.mark.parametrize("new", IMPLEMENTATIONS)
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_does_not_repeat_parent_randomness(new: NewImpl) -> None:
    new(XarkId)  # fill the pool
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        os.close(read_end)
        os.write(write_end, str(new(XarkId))[8:].encode())
        os._exit(0)
    os.close(write_end)
    child_random = os.read(read_end, 100).decode()
    os.close(read_end)
    os.waitpid(pid, 0)
    parent_random = str(new(XarkId))[8:]
    assert len(child_random) == 12
    assert child_random != parent_random


@needs_c
def test_c_randomness_is_os_urandom() -> None:
    """The C pool is filled by the registered ``os.urandom`` (nothing else), 4,608 bytes at a time, and a
    broken source is an error, never ids."""
    assert C is not None
    slot = XarkId.__dict__["_compact"]
    calls: list[int] = []

    def counting(n: int) -> bytes:
        calls.append(n)
        return os.urandom(n)

    def short(n: int) -> bytes:
        return os.urandom(n - 1)

    try:
        C._xarkid_setup(XarkId, slot, counting)
        made = [C.xarkid_new(XarkId) for _ in range(513)]
        assert calls == [4608, 4608]
        assert len({str(x) for x in made}) == 513
        C._xarkid_setup(XarkId, slot, short)
        with pytest.raises(RuntimeError, match=r"os\.urandom returned the wrong size"):
            C.xarkid_new(XarkId)
    finally:
        C._xarkid_setup(XarkId, slot, os.urandom)
    assert len(str(C.xarkid_new(XarkId))) == 20


@needs_c
def test_c_refuses_what_is_not_a_xarkid() -> None:
    assert C is not None
    bad: list[Any] = [int, str, 5, None]
    for cls in bad:
        with pytest.raises(TypeError, match="needs XarkId or a subclass"):
            C.xarkid_new(cls)
    with pytest.raises(TypeError, match="a type, a slot, a callable"):
        C._xarkid_setup(XarkId, "not a slot", os.urandom)
    with pytest.raises(TypeError, match="not a writable slot of xarkid_type"):
        C._xarkid_setup(RevisionId, XarkId.__dict__["_compact"], os.urandom)


#: Every implementation of XarkId.new_compact_strings: the public one, C, pure Python.
BULK = [
    pytest.param(lambda n: XarkId.new_compact_strings(n), id="public"),
    pytest.param(lambda n: C.xarkid_compact_strings(n) if C is not None else [], id="c", marks=needs_c),
    pytest.param(xarkid._compact_strings_python, id="python"),
]


@pytest.mark.skipif(C is None or PURE, reason="the C helper is not in use")
def test_c_compact_strings_is_in_use() -> None:
    assert C is not None
    assert XarkId.__dict__["new_compact_strings"].__func__ is C.xarkid_compact_strings


@pytest.mark.parametrize("bulk", BULK)
def test_compact_strings_are_new_ids_of_now(bulk: Callable[[int], list[str]]) -> None:
    """n distinct compact texts that parse, each carrying the current millisecond (read around the call)
    and 72 random bits."""
    before = time.time_ns() // 1_000_000
    made = bulk(1_500)  # more than the 512 ids of one pool fill
    after = time.time_ns() // 1_000_000
    assert len(made) == 1_500 and len(set(made)) == 1_500
    assert all(isinstance(s, str) and len(s) == 20 and B64URL.issuperset(s) for s in made)
    times = [XarkId.parse(s).unix_ms for s in made]
    assert before <= min(times) and max(times) <= after
    assert bulk(0) == []


@needs_c
def test_c_compact_strings_take_the_pool_like_new() -> None:
    """The bulk function draws from the same pool as ``xarkid_new``: 513 ids, 2 fills of 4,608 bytes;
    bad ``n`` is refused."""
    assert C is not None
    slot = XarkId.__dict__["_compact"]
    calls: list[int] = []

    def counting(n: int) -> bytes:
        calls.append(n)
        return os.urandom(n)

    try:
        C._xarkid_setup(XarkId, slot, counting)
        made = [*C.xarkid_compact_strings(512), str(C.xarkid_new(XarkId))]
        assert calls == [4608, 4608]
        assert len(set(made)) == 513
    finally:
        C._xarkid_setup(XarkId, slot, os.urandom)
    with pytest.raises(ValueError, match="n must be >= 0, got -1"):
        C.xarkid_compact_strings(-1)
    with pytest.raises(TypeError):
        C.xarkid_compact_strings("3")
