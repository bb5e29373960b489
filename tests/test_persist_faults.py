"""Fault tests of the persistence promise (issue 13): ``kill -9`` of ``pidkit dump``, ``restore`` and
``import`` half-way leaves the old state or the new one — never a part — and ``pidkit check`` passes
after every one; on SQLite and PostgreSQL.  (A PostgreSQL restart during a restore:
``stress/test_restore_restart.py``, which runs a private cluster it may stop.)

Each test first runs the command to the end once (the new state, and how long it takes), then again from
the old state, killed with SIGKILL at a third, a half and two thirds of that time.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from pidkit.store import Store, open_store

NAAN = "99999"
#: Bindings in the source store: enough for each command to run a second or more (0.9 to 2.6 s on a
#: 2-core machine, of which about 0.3 s is starting Python), so that every kill lands in its work.
N = 10_000
#: Bindings of the store an import is killed in: its old state (what the kill must leave, if not the new).
OLD = 200


def _lines(n: int, prefix: str = "fk4b") -> list[str]:
    return [
        json.dumps({"text": f"ark:{NAAN}/{prefix}{i}", "target": f"https://example.org/{i}",
                    "extra": {"dc.title": f"T{i}"}}) + "\n"
        for i in range(n)
    ]  # fmt: skip


def _fill(store: Store, n: int = N) -> None:
    store.add_naan(NAAN, "Test", shoulders=["b5"])
    store.create_minter("m", naan=NAAN, template="b5.sdddd", seed=1)
    store.mint("m", 500)
    store.add_hold("m", "b5x")
    store.import_jsonl(_lines(n))
    store.bind(f"ark:{NAAN}/fk4b1", status="unavailable", reason="withdrawn")


def _pidkit(db: str, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "PIDKIT_DATABASE_URL"}
    return subprocess.Popen([sys.executable, "-m", "pidkit", *args, "--db", db], env=env, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip


def _timed(db: str, *args: str) -> float:
    start = time.monotonic()
    proc = _pidkit(db, *args)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return time.monotonic() - start


def _killed(db: str, after: float, *args: str) -> int:
    proc = _pidkit(db, *args)
    time.sleep(after)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    return proc.returncode


def _state(url: str) -> str:
    """The store's whole state: its dump after the header."""
    out = io.StringIO()
    with open_store(url) as s:
        s.dump(out)
        assert s.check() == []  # pidkit check after every fault
    return "".join(out.getvalue().splitlines(keepends=True)[1:])


def _check_cli(url: str) -> None:
    r = subprocess.run([sys.executable, "-m", "pidkit", "check", "--db", url], capture_output=True, text=True,
                       timeout=120, check=False)  # fmt: skip
    assert (r.returncode, r.stdout) == (0, ""), r.stderr


#: When to kill, as fractions of a reference run's time; 1/6 still kills when a run is much faster than the
#: reference (a reference run slowed by other work on a shared machine).
FRACTIONS = (1 / 6, 1 / 3, 1 / 2, 2 / 3)


def test_kill_9_during_restore(new_url: Callable[[], str], tmp_path: Path) -> None:
    dump = tmp_path / "store.jsonl"
    with open_store(new_url()) as source, dump.open("w", encoding="utf-8") as fp:
        _fill(source)
        source.dump(fp)
    full = new_url()
    took = _timed(full, "restore", str(dump))
    new = _state(full)
    outcomes = []
    rerun = True
    for fraction in FRACTIONS:
        target = new_url()
        open_store(target).close()  # the old state: an empty store
        old = _state(target)
        code = _killed(target, took * fraction, "restore", str(dump))
        state = _state(target)
        assert state in (old, new)
        outcomes.append((code, state == new))
        _check_cli(target)
        if state == old and rerun:  # the restore can be run again (once: the state is the old one anyway)
            rerun = False
            assert _timed(target, "restore", str(dump)) > 0 and _state(target) == new
    assert any(code == -signal.SIGKILL for code, _ in outcomes), outcomes


def test_kill_9_during_import(new_url: Callable[[], str], tmp_path: Path) -> None:
    lines = tmp_path / "bindings.jsonl"
    lines.write_text("".join(_lines(N, "fk4i")), encoding="utf-8")
    reference = new_url()
    with open_store(reference) as s:
        _fill(s, OLD)
    took = _timed(reference, "import", str(lines))
    new_bindings = set(_bindings(reference))
    killed = 0
    for fraction in FRACTIONS:
        url = new_url()
        with open_store(url) as s:
            _fill(s, OLD)
        old = _state(url)
        code = _killed(url, took * fraction, "import", str(lines))
        killed += code == -signal.SIGKILL
        state = _state(url)
        assert state == old or set(_bindings(url)) == new_bindings  # nothing of the import, or all of it
        _check_cli(url)
    assert killed


def _bindings(url: str) -> list[str]:
    out = io.StringIO()
    with open_store(url) as s:
        s.export_jsonl(out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    return [f"{row['key']}\t{row['target']}" for row in rows]


def test_kill_9_during_dump(new_url: Callable[[], str], tmp_path: Path) -> None:
    url = new_url()
    with open_store(url) as s:
        _fill(s)
    before = _state(url)
    out = tmp_path / "dump.jsonl"
    took = _timed(url, "dump", "-o", str(out))
    complete = out.read_text(encoding="utf-8")
    killed = 0
    for fraction in FRACTIONS:
        partial = tmp_path / f"dump-{fraction:.2f}.jsonl"
        code = _killed(url, took * fraction, "dump", "-o", str(partial))
        killed += code == -signal.SIGKILL
        if partial.exists():  # written to a temporary file, renamed once complete
            assert partial.read_text(encoding="utf-8").splitlines()[1:] == complete.splitlines()[1:]
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(partial.name) and p != partial]
        assert _state(url) == before  # a dump never changes the store
        _check_cli(url)
    assert killed
