"""Resolver under load: ``pidkit serve`` against arklet 0.2.3 (issue #5).

100,000 ARKs (NAAN 99999, minted once with pidkit's NOID template ``fk4.reedeedk`` and a fixed seed) are
bound to the same targets in both resolvers; a load generator on loopback (``wrk``, 2 threads, 64
connections) asks for random ARKs from that set, with and without HTTP keep-alive, and we compare
requests/s and p50/p99 latency.

* **arklet 0.2.3** (the Internet Archive's Django resolver) is installed from PyPI into its own virtualenv
  ``benchmarks/.peers/arklet-venv`` (git-ignored), configured by ``benchmarks/arklet/settings.py``, and
  run as its README suggests for production: gunicorn, 2 workers, on PostgreSQL (database
  ``arklet_bench``) with persistent connections (``CONN_MAX_AGE``).  Its ARKs are loaded with SQL COPY.
* **pidkit** runs as a user would run it in production: ``pidkit serve`` (uvicorn) with 2 workers, on
  SQLite and on PostgreSQL (database ``pidkit_bench``); its ARKs are loaded with ``pidkit import``.

The machine has 2 cores and the load generator competes with the servers for them; both servers get the
same budget (2 worker processes).  Every process this module starts is stopped again (process groups,
``try``/``finally``).  Nothing but 127.0.0.1 is ever a target.  If ``wrk`` cannot be installed, a bounded
Python client (:mod:`benchmarks.resolver.client`) is used instead, and the notes say so.  Set
``PIDKIT_BENCH_SKIP_RESOLVER=1`` to skip this benchmark.

A second request set measures **registry-forwarded** resolution on the same pidkit servers: 100,000
ARKs under the NAANs and shoulders of the public NAAN registry that the store does not serve (every
registered NAAN but 99999, round-robin over the records with a usable target, the same blades), each
answered from the in-memory registry with the record's redirect (issue 16: at the same requests/s as a
local binding).

Run alone: ``.venv/bin/python -m benchmarks.bench_resolver [--quick]``.  ``PIDKIT_BENCH_SKIP_ARKLET=1``
leaves arklet out and ``PIDKIT_BENCH_SKIP_POSTGRES=1`` pidkit on PostgreSQL (a short run on a busy
machine).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import http.client
import json
import os
import platform
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from benchmarks._harness import Result

ROOT: Final = Path(__file__).resolve().parent.parent
HERE: Final = ROOT / "benchmarks"
DATA: Final = HERE / "data" / "resolver"
PEERS: Final = HERE / ".peers"
ARKLET_VENV: Final = PEERS / "arklet-venv"
ARKLET_SETTINGS_DIR: Final = HERE / "arklet"
LUA: Final = HERE / "resolver" / "pick.lua"
NOTES: Final = ROOT / "docs" / "performance-notes.md"
SECTION: Final = "## Resolver under load"

#: What the issue asks for.
N_ARKS: Final = 100_000
NAAN: Final = "99999"
TEMPLATE: Final = "fk4.reedeedk"
SHOULDER: Final = "fk4"
SEED: Final = 5
CONNECTIONS: Final = 64
WORKERS: Final = 2
WRK_THREADS: Final = 2
MAX_RATIO: Final = 1 / 3  # pidkit at least 3x arklet's requests/s

#: Packages of the peer's virtualenv (arklet from PyPI; never vendored).
ARKLET_PACKAGES: Final = ("arklet[postgres]==0.2.3", "gunicorn")
ARKLET_DB: Final = "arklet_bench"
PIDKIT_PG_DB: Final = "pidkit_bench"
PG_HOST: Final = "127.0.0.1"
PG_PORT: Final = 5432
PG_USER: Final = "postgres"
HOST: Final = "127.0.0.1"  # the only address ever targeted

PYTHON: Final = Path(sys.executable)
PIDKIT: Final = PYTHON.parent / "pidkit"


class SkipError(Exception):
    """A part of the benchmark cannot run here; the message says why."""


# --- the data set --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Binding:
    """One ARK of the benchmark set: its name (shoulder + blade + check character) and target URL."""

    name: str
    target: str

    @property
    def path(self) -> str:
        """The request path, draft-kunze-ark-40 form without the slash after ``ark:``."""
        return f"/ark:{NAAN}/{self.name}"

    @property
    def ark(self) -> str:
        return f"ark:{NAAN}/{self.name}"


def make_bindings(n: int = N_ARKS) -> list[Binding]:
    """``n`` ARK names minted with pidkit's NOID template ``fk4.reedeedk`` (seeded: the same set every
    run), each bound to its own target URL."""
    from pidkit.noid import Minter, Template

    names, _ = Minter(Template.parse(TEMPLATE), NAAN, seed=SEED).mint_batch(0, n)
    return [Binding(name, f"https://example.org/objects/{i:06d}/{name}") for i, name in enumerate(names)]


@dataclass(frozen=True, slots=True)
class Forwarded:
    """One ARK of the registry-forwarded set: its path and the redirect the registry gives it."""

    path: str
    status: int
    location: str


def make_forwarded(bindings: Sequence[Binding]) -> list[Forwarded]:
    """One ARK per binding under a registry record the benchmark store does not serve (every record but
    NAAN 99999's, round-robin), with the blade of that binding; its expected redirect from
    :mod:`pidkit.registry`."""
    from pidkit import registry
    from pidkit.errors import StoreError
    from pidkit.store.redirects import validate_target

    reg = registry.default()
    records = []
    for r in reg:
        try:  # two 2024 records have a template without a host: the resolver answers them 404
            validate_target(r.target.url.partition("$")[0] + "x")
        except StoreError:
            continue
        if r.naan != NAAN:
            records.append(r)
    out = []
    for i, b in enumerate(bindings):
        r = records[i % len(records)]
        path = f"/ark:{r.naan}/{r.shoulder}{b.name[len(SHOULDER):]}"
        match = reg.resolve(path[1:])
        if match is None:  # every record matches its own ARKs
            raise SkipError(f"the registry does not resolve {path}")
        out.append(Forwarded(path, match.http_code, match.target))
    return out


def _write_atomic(path: Path, lines: Iterator[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fp:
        fp.writelines(lines)
    os.replace(tmp, path)


def write_data_files(bindings: Sequence[Binding]) -> tuple[Path, Path]:
    """The wrk paths file (one path a line) and the pidkit import file (JSON Lines)."""
    paths = DATA / "paths.txt"
    jsonl = DATA / "bindings.jsonl"
    _write_atomic(paths, (b.path + "\n" for b in bindings))
    _write_atomic(
        jsonl,
        (
            json.dumps({"kind": "ark", "text": b.ark, "target": b.target, "status": "public"}) + "\n"
            for b in bindings
        ),
    )
    return paths, jsonl


# --- processes -----------------------------------------------------------------------------------------
def _log(msg: str) -> None:
    print(f"  [resolver] {msg}", flush=True)


def _run(
    argv: Sequence[str | os.PathLike[str]],
    *,
    timeout: float,
    env: dict[str, str] | None = None,
    stdin: IO[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command to completion (bounded by ``timeout``); raise :class:`SkipError` if it fails."""
    try:
        proc = subprocess.run(
            [str(a) for a in argv],
            env=env,
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired as exc:
        raise SkipError(f"{Path(str(argv[0])).name} timed out after {timeout:.0f} s") from exc
    except OSError as exc:
        raise SkipError(f"cannot run {argv[0]}: {exc}") from exc
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise SkipError(
            f"{' '.join(str(a) for a in argv[:3])} … failed ({proc.returncode}): {' | '.join(tail)}"
        )
    return proc


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def _get(port: int, path: str, *, close: bool = False) -> tuple[int, str | None]:
    """One GET on 127.0.0.1 without following redirects: (status, Location)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=10)
    try:
        conn.request("GET", path, headers={"Connection": "close"} if close else {})
        resp = conn.getresponse()
        resp.read()
        return resp.status, resp.getheader("Location")
    finally:
        conn.close()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server and every process in its group: SIGTERM, then SIGKILL after 15 s."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)
    # workers left behind by a master that died first
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def server(
    name: str, argv: Sequence[str | os.PathLike[str]], env: dict[str, str], port: int, probe: Binding
) -> Iterator[subprocess.Popen[bytes]]:
    """Start a server in its own process group, wait until ``probe`` resolves, stop it on exit."""
    log_path = DATA / f"{name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [str(a) for a in argv],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=ROOT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                if proc.poll() is not None:
                    tail = log_path.read_text(errors="replace").strip().splitlines()[-5:]
                    raise SkipError(f"{name} exited with {proc.returncode}: {' | '.join(tail)}")
                with contextlib.suppress(OSError, http.client.HTTPException):
                    if _get(port, probe.path)[0] in (301, 302, 303, 307, 308):
                        break
                if time.monotonic() > deadline:
                    raise SkipError(
                        f"{name} did not answer on 127.0.0.1:{port} within 60 s (log: {log_path})"
                    )
                time.sleep(0.25)
            yield proc
        finally:
            _stop(proc)


def check_forwarded_sample(port: int, forwarded: Sequence[Forwarded], n: int = 200) -> None:
    """Resolve ``n`` random ARKs of the registry-forwarded set by hand: each must be its record's redirect."""
    rng = random.Random(SEED)
    for f in rng.sample(list(forwarded), n):
        got = _get(port, f.path)
        if got != (f.status, f.location):
            raise SkipError(f"GET {f.path} gave {got}, expected {f.status} to {f.location}")


def check_sample(port: int, bindings: Sequence[Binding], n: int = 200) -> None:
    """Resolve ``n`` random ARKs by hand (both URL forms): each must be a 302 to its own target, or the
    load run's error count would mean nothing."""
    rng = random.Random(SEED)
    for b in rng.sample(list(bindings), n):
        for path in (b.path, f"/ark:/{NAAN}/{b.name}"):
            status, location = _get(port, path)
            if status != 302 or location != b.target:
                raise SkipError(f"GET {path} gave {status} Location {location!r}, expected 302 to {b.target}")
    status, location = _get(port, bindings[0].path, close=True)
    if status != 302 or location != bindings[0].target:
        raise SkipError(f"GET {bindings[0].path} with Connection: close gave {status} {location!r}")


# --- load generators -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Load:
    """One measured run: requests/s, p50/p99 in seconds, errors (non-2xx/3xx, socket errors, timeouts)."""

    requests: int
    seconds: float
    p50: float
    p99: float
    errors: int
    error_detail: str

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def ensure_debian_tool(command: str, package: str, fallback: str | None = None) -> str | None:
    """The path of ``command`` (or of ``fallback`` where it exists), installing Debian's ``package`` if we
    can (root and apt-get); ``None`` if it cannot be had."""
    def found() -> str | None:
        return shutil.which(command) or (fallback if fallback and os.path.exists(fallback) else None)

    if found():
        return found()
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        _log(f"{command} is not installed and cannot be installed here (no apt-get or not root)")
        return None
    _log(f"installing {command} from Debian (apt-get install -y {package})")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for step in (
        [apt, "install", "-y", "-q", package],
        [apt, "update", "-q"],
        [apt, "install", "-y", "-q", package],
    ):
        with contextlib.suppress(SkipError):
            _run(step, timeout=300, env=env)
        if found():
            break
    return found()


def ensure_wrk() -> str | None:
    """The path of ``wrk``, installing Debian's package if we can; ``None`` if it cannot be had."""
    found = ensure_debian_tool("wrk", "wrk")
    if found is None:
        _log("could not install wrk: falling back to the bounded Python client (slower; see the notes)")
    return found


def _dash_v(binary: str) -> str:
    """What ``binary -v`` prints, on either stream (its exit status aside); empty if it cannot run."""
    try:
        done = subprocess.run([binary, "-v"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr


def wrk_version(wrk: str) -> str:
    """wrk's version as ``wrk -v`` prints it (it exits 1 after printing its usage)."""
    words = _dash_v(wrk).split()
    return words[1] if len(words) > 1 else "?"


def run_wrk(wrk: str, port: int, paths_file: Path, seconds: float, keepalive: bool) -> Load:
    """One ``wrk`` run (2 threads, 64 connections) against 127.0.0.1:port; parse pick.lua's RESULT line."""
    argv = [
        wrk,
        f"-t{WRK_THREADS}",
        f"-c{CONNECTIONS}",
        f"-d{seconds:g}s",
        "--timeout",
        "10s",
        "-s",
        str(LUA),
    ]
    if not keepalive:
        argv += ["-H", "Connection: close"]
    argv += [f"http://{HOST}:{port}", "--", str(paths_file)]
    proc = _run(argv, timeout=seconds + 60)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line.removeprefix("RESULT "))
            kinds = ("connect", "read", "write", "status", "timeout")
            detail = ", ".join(f"{k} {r[k]}" for k in kinds if r[k])
            return Load(
                requests=r["requests"],
                seconds=r["duration_us"] / 1e6,
                p50=r["p50_us"] / 1e6,
                p99=r["p99_us"] / 1e6,
                errors=sum(r[k] for k in kinds),
                error_detail=detail,
            )
    raise SkipError(f"wrk printed no RESULT line: {proc.stdout[-300:]!r} {proc.stderr[-300:]!r}")


def run_python_client(port: int, paths: Sequence[str], seconds: float, keepalive: bool) -> Load:
    """The fallback: the bounded asyncio client, same connections and duration."""
    from benchmarks.resolver.client import run_load

    s = run_load(
        HOST,
        port,
        paths,
        connections=CONNECTIONS,
        seconds=seconds,
        max_requests=2_000_000,
        keepalive=keepalive,
        seed=SEED,
    )
    detail = ", ".join(f"{k} {v}" for k, v in sorted(s.errors.items()) if v)
    return Load(
        requests=s.requests,
        seconds=s.seconds,
        p50=s.percentile(50),
        p99=s.percentile(99),
        errors=s.error_total,
        error_detail=detail,
    )


@dataclass(frozen=True, slots=True)
class Settings:
    """Seconds of warm-up per configuration, seconds per measured run, interleaved rounds, wrk or None,
    and seconds of load each server gets once per request set before the warm-ups (``fill``: what a
    server running for a while has in memory, e.g. pidkit's redirect cache)."""

    warmup: float
    measure: float
    rounds: int
    wrk: str | None = None
    fill: float = 0.0


#: ``make bench``: 40 s of load per server and request set first, then per configuration 5 s warm-up and
#: 5 interleaved rounds of 6 s (about 10 minutes of load for 12 configurations and 5 fills), median round
#: reported.  Short interleaved rounds spread a burst of other work on the shared machine over every
#: configuration alike.  ``--quick``: 8 s of fill, one round of 3 s.
FULL: Final = Settings(warmup=5, measure=6, rounds=5, fill=40)
QUICK: Final = Settings(warmup=2, measure=3, rounds=1, fill=8)
#: Redirects each pidkit worker keeps (``PIDKIT_RESOLVE_CACHE``): both request sets of :data:`N_ARKS`.
RESOLVE_CACHE: Final = 2 * N_ARKS + 10_000


def measure(
    settings: Settings, port: int, paths_file: Path, paths: Sequence[str], keepalive: bool, seconds: float
) -> Load:
    """One load run of ``seconds`` with wrk, or with the Python client when wrk is missing."""
    if settings.wrk is not None:
        return run_wrk(settings.wrk, port, paths_file, seconds, keepalive)
    return run_python_client(port, paths, seconds, keepalive)


# --- PostgreSQL ----------------------------------------------------------------------------------------
def pg_url(db: str) -> str:
    return f"postgresql://{PG_USER}@{PG_HOST}:{PG_PORT}/{db}"


def recreate_database(db: str) -> None:
    """Drop (forcing out stale sessions) and create ``db`` on the local PostgreSQL."""
    try:
        import psycopg
    except ImportError as exc:
        raise SkipError("psycopg is not installed (pip install -e '.[postgres]')") from exc
    try:
        with psycopg.connect(pg_url("postgres"), autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{db}"')
    except psycopg.Error as exc:
        raise SkipError(f"PostgreSQL at {PG_HOST}:{PG_PORT} is not usable: {exc}") from exc


# --- arklet --------------------------------------------------------------------------------------------
def ensure_arklet() -> dict[str, str]:
    """Create the arklet virtualenv if needed; return the versions of arklet, Django and gunicorn."""
    py = ARKLET_VENV / "bin" / "python"
    probe = [
        str(py),
        "-c",
        "import importlib.metadata as m; "
        "print(m.version('arklet'), m.version('django'), m.version('gunicorn'), m.version('psycopg'))",
    ]
    need = not py.exists()
    if not need:
        try:
            out = subprocess.run(probe, capture_output=True, text=True, timeout=60, check=False)
            need = out.returncode != 0 or not out.stdout.startswith("0.2.3 ")
        except (OSError, subprocess.TimeoutExpired):
            need = True
    if need:
        _log(f"creating {ARKLET_VENV.relative_to(ROOT)} with {', '.join(ARKLET_PACKAGES)}")
        base = getattr(sys, "_base_executable", sys.executable)
        _run([base, "-m", "venv", "--clear", ARKLET_VENV], timeout=120)
        _run([py, "-m", "pip", "install", "-q", *ARKLET_PACKAGES], timeout=600)
    out = _run(probe, timeout=60)
    arklet, django, gunicorn, psycopg = out.stdout.split()
    return {"arklet": arklet, "Django": django, "gunicorn": gunicorn, "psycopg": psycopg}


def arklet_env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ARKLET_SETTINGS_DIR),
        "DJANGO_SETTINGS_MODULE": "settings",
        "ARKLET_POSTGRES_NAME": ARKLET_DB,
        "ARKLET_POSTGRES_HOST": PG_HOST,
        "ARKLET_POSTGRES_PORT": str(PG_PORT),
        "ARKLET_POSTGRES_USER": PG_USER,
        "ARKLET_POSTGRES_PASSWORD": "",
    }


def load_arklet(bindings: Sequence[Binding]) -> None:
    """Fresh ``arklet_bench`` database: arklet's own migrations, the NAAN, then the ARKs by COPY.

    arklet keys an ARK by ``"{naan}/{assigned_name}"`` (``views.resolve_ark``: ``int(naan)`` then the
    first path segment after it); its minter stores ``shoulder`` with a leading slash and
    ``assigned_name`` as the part after the shoulder, which is what we write too.
    """
    import psycopg

    recreate_database(ARKLET_DB)
    _run([ARKLET_VENV / "bin" / "django-admin", "migrate", "-v0"], timeout=300, env=arklet_env())
    now = dt.datetime.now(dt.UTC)
    with psycopg.connect(pg_url(ARKLET_DB)) as conn:
        conn.execute(
            "INSERT INTO ark_naan (naan, name, description, url) VALUES (%s, %s, %s, %s)",
            (int(NAAN), "pidkit benchmark", "resolver load benchmark", "https://example.org"),
        )
        with conn.cursor().copy(
            "COPY ark_ark (ark, naan_id, shoulder, assigned_name, url, metadata, commitment, created_at,"
            " updated_at) FROM STDIN"
        ) as copy:
            for b in bindings:
                copy.write_row(
                    (
                        f"{NAAN}/{b.name}",
                        int(NAAN),
                        f"/{SHOULDER}",
                        b.name.removeprefix(SHOULDER),
                        b.target,
                        "",
                        "",
                        now,
                        now,
                    )
                )
    with psycopg.connect(pg_url(ARKLET_DB), autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE ark_ark")
        row = conn.execute("SELECT count(*) FROM ark_ark").fetchone()
    if row is None or row[0] != len(bindings):
        raise SkipError(f"arklet_bench holds {row} ARKs, expected {len(bindings)}")


def arklet_argv(port: int) -> list[str | os.PathLike[str]]:
    return [
        ARKLET_VENV / "bin" / "gunicorn",
        "--workers",
        str(WORKERS),
        "--bind",
        f"{HOST}:{port}",
        "--log-level",
        "warning",
        "arklet.entrypoints.wsgi:application",
    ]


# --- pidkit --------------------------------------------------------------------------------------------
def pidkit_env(db_url: str, resolve_cache: int = RESOLVE_CACHE) -> dict[str, str]:
    """``pidkit serve``'s environment: the store and the size of each worker's redirect cache."""
    return {**os.environ, "PIDKIT_DATABASE_URL": db_url, "PIDKIT_RESOLVE_CACHE": str(resolve_cache)}


def worker_rss(pid: int) -> list[int]:
    """The resident memory (KiB) of each child of process ``pid`` (a server's workers), from /proc."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        for child in children:
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{child}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        found.append(int(line.split()[1]))
    return found


def load_pidkit(db_url: str, jsonl: Path, count: int) -> None:
    """A fresh store at ``db_url``: the NAAN and its shoulder, then the bindings from the JSON Lines file
    through :meth:`pidkit.store.Store.import_jsonl` (what ``pidkit import`` runs)."""
    from pidkit.errors import PidkitError
    from pidkit.store import open_store

    if db_url.startswith("sqlite:///"):
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(db_url.removeprefix("sqlite:///") + suffix).unlink(missing_ok=True)
    else:
        recreate_database(PIDKIT_PG_DB)
    try:
        with open_store(db_url) as store:
            store.add_naan(NAAN, "pidkit benchmark", shoulders=[SHOULDER])
            with jsonl.open(encoding="utf-8") as fp:
                created = store.import_jsonl(fp).created
    except PidkitError as exc:
        raise SkipError(f"pidkit store {db_url}: {exc}") from exc
    if created != count:
        raise SkipError(f"pidkit import created {created} bindings, expected {count}")
    if db_url.startswith("postgres"):
        _analyze(db_url, "bindings")


def _analyze(db_url: str, table: str) -> None:
    import psycopg

    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(f"VACUUM ANALYZE {table}")


def pidkit_argv(port: int) -> list[str | os.PathLike[str]]:
    """``pidkit serve`` with 2 uvicorn workers; ``--log-level warning`` turns the per-request access log
    off, as gunicorn (arklet) has none by default."""
    return [
        PIDKIT, "serve", "--host", HOST, "--port", str(port), "--workers", str(WORKERS),
        "--log-level", "warning",
    ]  # fmt: skip


# --- nginx: the floor (issue 18) ----------------------------------------------------------------------
#: nginx's worker processes: the servers' budget.
NGINX_WORKERS: Final = WORKERS
#: The anchor's goals (issue 18): pidkit at least this share of nginx's requests/s, keep-alive on / off,
#: and a p99 at most this multiple of nginx's.
NGINX_SHARE: Final = {True: 0.4, False: 0.6}
NGINX_P99: Final = 2.0


def nginx_binary() -> str:
    """nginx (Debian's nginx-light, installed where missing if we can)."""
    found = ensure_debian_tool("nginx", "nginx-light", "/usr/sbin/nginx")
    if found is None:
        raise SkipError("nginx is not installed and cannot be installed here (apt-get install nginx-light)")
    return found


def nginx_version(nginx: str) -> str:
    """``nginx -v``'s version (``nginx version: nginx/1.22.1``, on stderr)."""
    return _dash_v(nginx).strip().rpartition("/")[2] or "?"


def write_edge_files(directory: Path, db_url: str, upstream_port: int) -> tuple[float, int, str]:
    """Run ``pidkit edge nginx`` into ``directory`` (its map of every public binding of ``db_url`` and its
    ``server`` snippet passing the rest to ``upstream_port``): (seconds, peak RSS in KiB, its summary)."""
    directory.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    proc = subprocess.Popen(
        [str(PIDKIT), "edge", "nginx", str(directory), "--db", db_url, "--upstream",
         f"http://{HOST}:{upstream_port}"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    with proc.stdout:
        out = proc.stdout.read()  # to the end: the child has exited (or closed its output)
    _, status, usage = os.wait4(proc.pid, 0)  # reaps it with its own peak RSS (KiB on Linux)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SkipError(f"pidkit edge nginx failed: {out.strip()}")
    return seconds, usage.ru_maxrss, out.strip()


def nginx_conf(directory: Path, port: int) -> Path:
    """An nginx.conf for an unprivileged nginx under ``directory`` that includes the edge files there."""
    conf = directory / "nginx.conf"
    conf.write_text(
        f"daemon off;\nworker_processes {NGINX_WORKERS};\npid {directory / 'nginx.pid'};\n"
        f"error_log {directory / 'error.log'};\nevents {{ worker_connections 1024; }}\nhttp {{\n"
        f"  access_log off;\n  client_body_temp_path {directory}/body;\n"
        f"  proxy_temp_path {directory}/proxy;\n  fastcgi_temp_path {directory}/fcgi;\n"
        f"  uwsgi_temp_path {directory}/uwsgi;\n  scgi_temp_path {directory}/scgi;\n"
        f"  include {directory / 'pidkit-edge-map.conf'};\n"
        f"  server {{\n    listen {HOST}:{port};\n"
        f"    include {directory / 'pidkit-edge-server.conf'};\n  }}\n}}\n",
        encoding="utf-8",
    )
    return conf


# --- the run -------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Row:
    """The figures of one configuration: the median round (by requests/s) and every round's rate."""

    server: str
    backend: str
    keepalive: bool
    load: Load
    rounds: tuple[float, ...]
    #: Which request set: ``bound`` (the 100k bound ARKs) or ``registry`` (registry-forwarded ARKs).
    requests: str = "bound"


@dataclass(frozen=True, slots=True)
class Target:
    """A running server: its label, its database, its port and its process id."""

    server: str
    backend: str
    port: int
    pid: int = 0


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f}"


def _start(
    stack: contextlib.ExitStack,
    name: str,
    argv_for: Callable[[int], Sequence[str | os.PathLike[str]]],
    env: dict[str, str],
    bindings: Sequence[Binding],
    label: str,
    backend: str,
) -> Target:
    port = free_port()
    proc = stack.enter_context(server(name, argv_for(port), env, port, bindings[0]))
    check_sample(port, bindings)
    _log(f"{label} on {backend} up on 127.0.0.1:{port}; 400 sampled responses are 302 to the right target")
    return Target(label, backend, port, proc.pid)


def _start_nginx(
    stack: contextlib.ExitStack,
    stores: Sequence[tuple[str, str]],
    targets: Sequence[Target],
    bindings: Sequence[Binding],
    versions: dict[str, str],
) -> Target:
    """nginx as the floor: ``pidkit edge nginx``'s ``map`` of the bound ARKs (read from the first store)
    and its ``return 302``; what the map lacks would go to that store's pidkit server (nothing of the set)."""
    nginx = nginx_binary()
    versions["nginx"] = nginx_version(nginx)
    urls = dict(stores)
    upstream = next((t for t in targets if t.server == "pidkit" and t.backend in urls), None)
    if upstream is None:
        raise SkipError("no pidkit server runs to write the map from")
    directory = DATA / "nginx"
    seconds, _, summary = write_edge_files(directory, urls[upstream.backend], upstream.port)
    _log(f"pidkit edge nginx: {seconds:.1f} s — {summary}")
    port = free_port()
    stack.enter_context(server("nginx", [nginx, "-c", nginx_conf(directory, port), "-p", directory],
                               dict(os.environ), port, bindings[0]))  # fmt: skip
    check_sample(port, bindings)
    _log(f"nginx up on 127.0.0.1:{port}; 400 sampled responses are 302 to the right target")
    return Target("nginx", "map", port)


def collect(quick: bool) -> tuple[list[Row], dict[str, str], list[str], Settings]:
    """Load both resolvers, start them all, then measure every configuration in interleaved rounds (so a
    burst of other work on the machine hits every configuration alike); return the rows, the versions
    used, notes (skips, fallbacks) and the load settings."""
    notes: list[str] = []
    versions: dict[str, str] = {}
    settings = QUICK if quick else FULL
    wrk = ensure_wrk()
    if wrk is None:
        notes.append(
            "wrk could not be installed: the bounded Python client measured instead (far slower "
            "than wrk, and it takes a core from the servers, so all figures are lower bounds)."
        )
    else:
        versions["wrk"] = wrk_version(wrk)
    settings = Settings(settings.warmup, settings.measure, settings.rounds, wrk, settings.fill)
    _log(f"minting {N_ARKS:,} ARK names ({TEMPLATE}, NAAN {NAAN})")
    bindings = make_bindings()
    paths_file, jsonl = write_data_files(bindings)
    paths = [b.path for b in bindings]
    forwarded = make_forwarded(bindings)
    forwarded_file = DATA / "registry-paths.txt"
    _write_atomic(forwarded_file, (f.path + "\n" for f in forwarded))
    request_sets = {"bound": (paths_file, paths), "registry": (forwarded_file, [f.path for f in forwarded])}

    arklet_ready = False
    try:
        if os.environ.get("PIDKIT_BENCH_SKIP_ARKLET"):
            raise SkipError("PIDKIT_BENCH_SKIP_ARKLET is set")
        versions.update(ensure_arklet())
        _log(f"loading {ARKLET_DB} (arklet's migrations + COPY)")
        load_arklet(bindings)
        arklet_ready = True
    except SkipError as exc:
        notes.append(f"arklet not measured: {exc}")
        _log(notes[-1])
    stores: list[tuple[str, str]] = []
    for backend, url in (
        ("SQLite", f"sqlite:///{DATA / 'pidkit.sqlite3'}"),
        ("PostgreSQL", pg_url(PIDKIT_PG_DB)),
    ):
        if backend == "PostgreSQL" and os.environ.get("PIDKIT_BENCH_SKIP_POSTGRES"):
            notes.append("pidkit on PostgreSQL not measured: PIDKIT_BENCH_SKIP_POSTGRES is set")
            continue
        try:
            _log(f"loading the pidkit store on {backend}")
            load_pidkit(url, jsonl, len(bindings))
            stores.append((backend, url))
        except SkipError as exc:
            notes.append(f"pidkit on {backend} not measured: {exc}")
            _log(notes[-1])

    runs: dict[tuple[Target, bool, str], list[Load]] = {}
    with contextlib.ExitStack() as stack:
        targets: list[Target] = []
        if arklet_ready:
            try:
                targets.append(
                    _start(stack, "arklet", arklet_argv, arklet_env(), bindings, "arklet", "PostgreSQL")
                )
            except SkipError as exc:
                notes.append(f"arklet not measured: {exc}")
                _log(notes[-1])
        for backend, url in stores:
            try:
                target = _start(
                    stack,
                    f"pidkit-{backend.lower()}",
                    pidkit_argv,
                    pidkit_env(url),
                    bindings,
                    "pidkit",
                    backend,
                )
                check_forwarded_sample(target.port, forwarded)
                targets.append(target)
            except SkipError as exc:
                notes.append(f"pidkit on {backend} not measured: {exc}")
                _log(notes[-1])
        try:
            if os.environ.get("PIDKIT_BENCH_SKIP_NGINX"):
                raise SkipError("PIDKIT_BENCH_SKIP_NGINX is set")
            targets.append(_start_nginx(stack, stores, targets, bindings, versions))
        except SkipError as exc:
            notes.append(f"nginx not measured: {exc}")
            _log(notes[-1])
        configs = [
            (t, keepalive, kind)
            for t in targets
            for kind in (("bound", "registry") if t.server == "pidkit" else ("bound",))
            for keepalive in (True, False)
        ]
        notes.append(f"load average before the runs: {_loadavg()}")
        if settings.fill:
            for t, kind in dict.fromkeys((t, kind) for t, _, kind in configs):
                _log(f"fill: {t.server} {t.backend} {kind}, {settings.fill:g} s of keep-alive load")
                measure(settings, t.port, *request_sets[kind], True, settings.fill)
        for t, keepalive, kind in configs:
            measure(settings, t.port, *request_sets[kind], keepalive, settings.warmup)
        for i in range(settings.rounds):
            for t, keepalive, kind in configs:
                load = measure(settings, t.port, *request_sets[kind], keepalive, settings.measure)
                runs.setdefault((t, keepalive, kind), []).append(load)
                _log(
                    f"round {i + 1}: {t.server} {t.backend} {kind} "
                    f"keep-alive {'on' if keepalive else 'off'}: "
                    f"{load.rps:,.0f} req/s, p50 {_ms(load.p50)} ms, p99 {_ms(load.p99)} ms, "
                    f"errors {load.errors}"
                )
        notes.append(f"load average after the runs: {_loadavg()}")
        for t in targets:
            if t.server == "pidkit" and (rss := worker_rss(t.pid)):
                notes.append(f"pidkit on {t.backend}: resident memory of its {len(rss)} child processes (the "
                             "workers and multiprocessing's helper) after the runs: "
                             f"{', '.join(f'{kib / 1024:.0f} MB' for kib in rss)}")
    rows = []
    for (t, keepalive, kind), loads in runs.items():
        ordered = sorted(loads, key=lambda ld: ld.rps)
        rows.append(
            Row(t.server, t.backend, keepalive, ordered[len(ordered) // 2], tuple(ld.rps for ld in loads),
                kind)
        )
    return rows, versions, notes, settings


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def _find(
    rows: Sequence[Row], server: str, backend: str, keepalive: bool, requests: str = "bound"
) -> Load | None:
    for r in rows:
        if (r.server, r.backend, r.keepalive, r.requests) == (server, backend, keepalive, requests):
            return r.load
    return None


def goal_met(mine: Load, peer: Load) -> bool:
    """The issue's goal: at least 3x the requests/s, a lower p99, and no errors."""
    return mine.rps >= peer.rps / MAX_RATIO and mine.p99 < peer.p99 and mine.errors == 0


def results(rows: Sequence[Row]) -> list[Result]:
    """One :class:`Result` per pidkit configuration that has an arklet run to compare with."""
    out: list[Result] = []
    for backend in ("SQLite", "PostgreSQL"):
        for keepalive in (True, False):
            mine = _find(rows, "pidkit", backend, keepalive)
            peer = _find(rows, "arklet", "PostgreSQL", keepalive)
            if mine is None or peer is None or not mine.rps or not peer.rps:
                continue
            note = (
                f"pidkit {mine.rps:,.0f} req/s, p50/p99 {_ms(mine.p50)}/{_ms(mine.p99)} ms, {mine.errors} "
                f"errors; arklet {peer.rps:,.0f} req/s, p50/p99 {_ms(peer.p50)}/{_ms(peer.p99)} ms, "
                f"{peer.errors} errors; lower p99: {'yes' if mine.p99 < peer.p99 else '**no**'}"
            )
            out.append(
                Result(
                    name=f"resolve 100k ARKs, {backend}, 64 conns, keep-alive {'on' if keepalive else 'off'}",
                    pidkit=f"pidkit serve ({backend}, uvicorn ×{WORKERS})",
                    pidkit_s=1 / mine.rps,
                    peer=f"arklet 0.2.3 (PostgreSQL, gunicorn ×{WORKERS})",
                    peer_s=1 / peer.rps,
                    max_ratio=MAX_RATIO,
                    unit="request",
                    note=note,
                )
            )
    for backend in ("SQLite", "PostgreSQL"):
        for keepalive in (True, False):
            mine = _find(rows, "pidkit", backend, keepalive)
            floor = _find(rows, "nginx", "map", keepalive)
            if mine is None or floor is None or not mine.rps or not floor.rps or not floor.p99:
                continue
            share = NGINX_SHARE[keepalive]
            on = "on" if keepalive else "off"
            note = (
                f"pidkit {mine.rps:,.0f} req/s = {mine.rps / floor.rps:.2f} of nginx's {floor.rps:,.0f} "
                f"(goal ≥ {share}); p99 {_ms(mine.p99)} vs {_ms(floor.p99)} ms; errors {mine.errors} and "
                f"{floor.errors}"
            )
            server_name = f"pidkit serve ({backend}, uvicorn ×{WORKERS})"
            nginx_name = f"nginx ×{NGINX_WORKERS}, `map` + return 302 (pidkit edge nginx)"
            out.append(
                Result(
                    name=f"resolve 100k ARKs vs nginx, {backend}, keep-alive {on}",
                    pidkit=server_name, pidkit_s=1 / mine.rps, peer=nginx_name, peer_s=1 / floor.rps,
                    max_ratio=1 / share, unit="request", note=note,
                )
            )
            out.append(
                Result(
                    name=f"resolve 100k ARKs vs nginx, {backend}, keep-alive {on}: p99",
                    pidkit=server_name, pidkit_s=mine.p99, peer=nginx_name, peer_s=floor.p99,
                    max_ratio=NGINX_P99, unit="request at p99",
                    note=f"p99 {_ms(mine.p99)} vs {_ms(floor.p99)} ms",
                )
            )
    return out


#: Registry-forwarded requests/s as a share of bound ones that counts as "the same" (issue 16).
FORWARDED_GOAL: Final = 0.9
_SETS: Final = {"bound": "bound", "registry": "registry-forwarded"}


def _cpu() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def render_section(
    rows: Sequence[Row], versions: dict[str, str], notes: Sequence[str], quick: bool, settings: Settings
) -> str:
    """The "Resolver under load" section of docs/performance-notes.md (Markdown)."""
    if settings.wrk is not None:
        tool = (
            f"wrk {versions.get('wrk', '')} ({WRK_THREADS} threads, {CONNECTIONS} connections, a random "
            "ARK of the set per request: `benchmarks/resolver/pick.lua`)"
        )
    else:
        tool = f"the bounded Python client `benchmarks/resolver/client.py` ({CONNECTIONS} connections)"
    flag = " --quick" if quick else ""
    lines = [
        SECTION,
        "",
        f"Resolution of {N_ARKS:,} bound ARKs (NAAN {NAAN}, names minted once with pidkit's NOID template "
        f"`{TEMPLATE}`, seed {SEED}; the same set loaded into both resolvers), each request a random ARK of "
        f"the set, {CONNECTIONS} concurrent connections on loopback, with HTTP keep-alive and without it "
        "(`Connection: close`: a new TCP connection per request).",
        "",
        f"- command: `make bench` (`.venv/bin/python benchmarks/run.py{flag}`); this section alone: "
        f"`.venv/bin/python -m benchmarks.bench_resolver{flag}`",
        f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {_cpu()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}",
        f"- load generator: {tool}; per configuration {settings.warmup:g} s warm-up, then "
        f"{settings.rounds} round(s) of {settings.measure:g} s, the configurations interleaved round by "
        "round; the table shows the median round (by requests/s) and every round's requests/s",
        f"- pidkit: `pidkit serve --workers {WORKERS}` (uvicorn, {WORKERS} worker processes) on SQLite and "
        f"on PostgreSQL (database `{PIDKIT_PG_DB}`), the ARKs loaded through the store's JSON Lines import; "
        "on PostgreSQL the lookups of the requests a worker has waiting at the same moment are read by one "
        "statement (`pidkit.web.batch`: no waiting, no caching); on SQLite each worker keeps the redirects "
        f"it decided (`PIDKIT_RESOLVE_CACHE={RESOLVE_CACHE}`, enough for both request sets; exact: dropped "
        "at any change of the store, `pidkit.web.fastpath`)",
        f"- before the warm-ups every server got {settings.fill:g} s of keep-alive load per request set it "
        "serves (a server that has run for a while: pidkit's workers then hold most of the set)",
        f"- arklet: {versions.get('arklet', '0.2.3')} (Django {versions.get('Django', '?')}) from PyPI in "
        f"`benchmarks/.peers/arklet-venv`, gunicorn {versions.get('gunicorn', '?')} with {WORKERS} sync "
        "workers (they close the connection after every response, keep-alive or not), PostgreSQL database "
        f"`{ARKLET_DB}` with persistent connections (`CONN_MAX_AGE=600`, `benchmarks/arklet/settings.py`); "
        "ARKs loaded by SQL COPY after arklet's own migrations",
        f"- both servers get {WORKERS} worker processes; the machine has {os.cpu_count()} cores and the load "
        "generator runs on the same cores (and so does anything else running on the machine at the time), "
        "so every figure is lower than on a dedicated server",
        "- before the runs, 200 random ARKs were resolved by hand on every server (302 with the bound "
        "target as Location, for `/ark:NAAN/…` and `/ark:/NAAN/…`); errors = responses outside 2xx/3xx + "
        "socket errors + timeouts",
        "",
        f"- nginx {versions.get('nginx', '?')} (Debian's nginx-light), the floor (issue 18): "
        f"`worker_processes {NGINX_WORKERS}`, access log off, serving the files `pidkit edge nginx` writes "
        "from the SQLite store — a `map` of every public binding and `return 302` (what the map lacks "
        "would be passed to pidkit: nothing of this set); goal: pidkit at least "
        f"{NGINX_SHARE[True]} of its requests/s with keep-alive, {NGINX_SHARE[False]} without, and a p99 "
        f"at most {NGINX_P99:g}× its own",
        "",
        "- registry-forwarded (pidkit only): the same blades under every registry record but NAAN "
        f"{NAAN}'s (not served by the store), each answered from the in-memory NAAN registry with the "
        "record's redirect; 200 sampled by hand before the runs",
        "",
        "| server | database | ARKs | keep-alive | requests/s | p50 ms | p99 ms | errors | requests "
        "| rounds (req/s) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ld = r.load
        errs = f"{ld.errors}" + (f" ({ld.error_detail})" if ld.error_detail else "")
        each = ", ".join(f"{x:,.0f}" for x in r.rounds)
        lines.append(
            f"| {r.server} | {r.backend} | {_SETS[r.requests]} | {'on' if r.keepalive else 'off'} "
            f"| {ld.rps:,.0f} "
            f"| {_ms(ld.p50)} | {_ms(ld.p99)} | {errs} | {ld.requests:,} | {each} |"
        )
    if not rows:
        lines.append("| (nothing measured: see below) | | | | | | | | | |")
    lines += ["", "Goal: pidkit at least 3× arklet's requests/s, with a lower p99 and no errors; "
              f"registry-forwarded ARKs at the requests/s of bound ones (at least {FORWARDED_GOAL}× them, "
              "the spread of one run).", ""]
    for backend in ("SQLite", "PostgreSQL"):
        for keepalive in (True, False):
            local = _find(rows, "pidkit", backend, keepalive)
            fwd = _find(rows, "pidkit", backend, keepalive, "registry")
            if local is None or fwd is None or not local.rps:
                continue
            met = "met" if fwd.rps >= FORWARDED_GOAL * local.rps else "**not met**"
            lines.append(
                f"- pidkit on {backend}, keep-alive {'on' if keepalive else 'off'}: registry-forwarded "
                f"{fwd.rps:,.0f} req/s = {fwd.rps / local.rps:.2f}× the bound ARKs' {local.rps:,.0f}, "
                f"{fwd.errors} errors: goal {met}"
            )
    for backend in ("SQLite", "PostgreSQL"):
        for keepalive in (True, False):
            mine = _find(rows, "pidkit", backend, keepalive)
            peer = _find(rows, "arklet", "PostgreSQL", keepalive)
            if mine is None or peer is None or not peer.rps:
                continue
            verdict = "met" if goal_met(mine, peer) else "**missed**"
            lines.append(
                f"- pidkit on {backend}, keep-alive {'on' if keepalive else 'off'}: "
                f"{mine.rps / peer.rps:.1f}× arklet's requests/s, p99 {_ms(mine.p99)} vs "
                f"{_ms(peer.p99)} ms, {mine.errors} errors — {verdict}"
            )
    for backend in ("SQLite", "PostgreSQL"):
        for keepalive in (True, False):
            mine = _find(rows, "pidkit", backend, keepalive)
            floor = _find(rows, "nginx", "map", keepalive)
            if mine is None or floor is None or not floor.rps:
                continue
            share, p99 = mine.rps / floor.rps, mine.p99 / floor.p99 if floor.p99 else float("inf")
            verdict = "met" if share >= NGINX_SHARE[keepalive] and p99 <= NGINX_P99 else "**missed**"
            lines.append(
                f"- pidkit on {backend}, keep-alive {'on' if keepalive else 'off'}, against nginx's floor: "
                f"{share:.2f} of its requests/s (goal ≥ {NGINX_SHARE[keepalive]}), p99 {p99:.1f}× its "
                f"{_ms(floor.p99)} ms (goal ≤ {NGINX_P99:g}×) — {verdict}"
            )
    missed = [
        (mine, peer)
        for backend in ("SQLite", "PostgreSQL")
        for keepalive in (True, False)
        if (mine := _find(rows, "pidkit", backend, keepalive)) is not None
        and (peer := _find(rows, "arklet", "PostgreSQL", keepalive)) is not None
        and not goal_met(mine, peer)
    ]
    if missed:
        lines += [
            "",
            "Where the time goes: `benchmarks/resolver/PROFILE.md` (py-spy profiles of the server, what "
            "was changed after each, and how to reproduce them).",
        ]
    if notes:
        lines += ["", *[f"- {n}" for n in notes]]
    return "\n".join(lines) + "\n"


def write_section(text: str) -> None:
    """Replace (or append) this benchmark's section of docs/performance-notes.md, keeping the others."""
    NOTES.parent.mkdir(exist_ok=True)
    old = NOTES.read_text(encoding="utf-8") if NOTES.exists() else ""
    out: list[str] = []
    skipping = False
    for line in old.splitlines(keepends=True):
        if line.rstrip("\n") == SECTION:
            skipping = True
            continue
        if skipping and line.startswith("## "):
            skipping = False
        if not skipping:
            out.append(line)
    body = "".join(out).rstrip("\n")
    body = (body + "\n\n" if body else "") + text
    tmp = NOTES.with_name(NOTES.name + ".tmp")
    tmp.write_text(body, encoding="utf-8")
    os.replace(tmp, NOTES)


LOCK_WAIT: Final = 900.0  # seconds to wait for another run of this benchmark to finish


@contextlib.contextmanager
def exclusive_run() -> Iterator[None]:
    """One run at a time on a machine: two runs would drop each other's databases, overwrite each other's
    data files and load the same cores.  Waits (bounded) for a run already going, then takes its turn."""
    import fcntl

    DATA.mkdir(parents=True, exist_ok=True)
    with (DATA / "run.lock").open("a+") as lock:
        deadline = time.monotonic() + LOCK_WAIT
        told = False
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise SkipError(
                        f"another resolver benchmark still runs after {LOCK_WAIT:.0f} s"
                    ) from None
                if not told:
                    _log("another run of this benchmark is going on this machine; waiting for it to finish")
                    told = True
                time.sleep(2)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def run(quick: bool) -> list[Result]:
    """Measure every configuration, write the notes section, return one Result per comparison."""
    if os.environ.get("PIDKIT_BENCH_SKIP_RESOLVER"):
        print("  [resolver] skipped (PIDKIT_BENCH_SKIP_RESOLVER is set)")
        return []
    try:
        with exclusive_run():
            rows, versions, notes, settings = collect(quick)
            write_section(render_section(rows, versions, notes, quick, settings))
    except SkipError as exc:
        _log(f"not measured: {exc}")
        return []
    _log(f"wrote the section {SECTION!r} of {NOTES.relative_to(ROOT)}")
    return results(rows)


if __name__ == "__main__":
    quick_run = "--quick" in sys.argv[1:]
    for res in run(quick_run):
        print(f"{res.name} [{res.pidkit}]: ratio {res.ratio:.3f} (goal <= {res.max_ratio:.3f}) {res.note}")
