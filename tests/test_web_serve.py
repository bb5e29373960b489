"""``pidkit serve`` as a real process on 127.0.0.1: bounds on request headers (size and time, whatever
HTTP parser uvicorn uses) and clear errors for a bad port, a port in use and a missing ``server``
extra (issue 11)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)/")
#: Seconds the servers under test give a client to send its headers (``PIDKIT_HEADER_TIMEOUT``).
TIMEOUT = 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIDKIT_")}
    env.update(PIDKIT_HEADER_TIMEOUT=str(TIMEOUT), **extra)
    return env


def _wait_for_port(port: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[0]
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"GET /.well-known/ark HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            if s.recv(100).startswith(b"HTTP/1.1 200"):
                return
        time.sleep(0.1)
    raise AssertionError("the server did not answer")


@contextlib.contextmanager
def _running(argv: list[str], env: dict[str, str], port: int) -> Iterator[int]:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    try:
        _wait_for_port(port, proc)
        yield port
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


@dataclass(frozen=True)
class Server:
    port: int
    kind: str


@pytest.fixture(scope="module", params=["pidkit-serve", "h11"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A running server: ``pidkit serve`` (uvicorn's default parser, httptools), or the same app and
    guarded protocol over h11 (what uvicorn uses without httptools)."""
    db = f"sqlite:///{tmp_path_factory.mktemp('serve')}/s.db"
    port = free_port()
    if request.param == "pidkit-serve":
        argv = [sys.executable, "-m", "pidkit", "serve", "--db", db, "--port", str(port),
                "--log-level", "warning"]
    else:
        code = ("import uvicorn; uvicorn.run('pidkit.web.app:app_from_env', factory=True, host='127.0.0.1', "
                f"port={port}, http='pidkit.web.protocol:GuardedH11Protocol', log_level='warning', "
                "h11_max_incomplete_event_size=65536)")
        argv = [sys.executable, "-c", code]
    with _running(argv, _env(PIDKIT_DATABASE_URL=db), port) as p:
        yield Server(p, request.param)


def _read_all(s: socket.socket) -> bytes:
    out = b""
    with contextlib.suppress(TimeoutError, ConnectionResetError):
        while chunk := s.recv(65536):
            out += chunk
    return out


def _one_response(s: socket.socket) -> bytes:
    """One response with a ``content-length`` body, read from a keep-alive connection."""
    out = b""
    while b"\r\n\r\n" not in out:
        out += s.recv(1000)
    head, _, body = out.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))  # type: ignore[union-attr]
    while len(body) < length:
        body += s.recv(1000)
    return head + b"\r\n\r\n" + body


def test_one_mebibyte_header_is_refused(server: Server) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            s.sendall(b"GET /.well-known/ark HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n")
        answer = _read_all(s)
    # h11 refuses a head over its h11_max_incomplete_event_size itself, with a 400
    assert answer.startswith((b"HTTP/1.1 431 ", b"HTTP/1.1 400 ")), answer[:200]
    assert server.kind != "pidkit-serve" or answer.startswith(b"HTTP/1.1 431 ")


def test_headers_under_the_bound_are_served(server: Server) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"GET /.well-known/ark HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 30_000
                  + b"\r\nConnection: close\r\n\r\n")
        assert _read_all(s).startswith(b"HTTP/1.1 200 ")


def test_slow_headers_are_cut_off(server: Server) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        start = time.monotonic()
        s.sendall(b"GET /.well-known/ark HTTP/1.1\r\nHost: t\r\nX-Slow: ")
        s.setblocking(False)
        answer = b""
        while time.monotonic() - start < TIMEOUT + 5:
            with contextlib.suppress(BlockingIOError, BrokenPipeError, ConnectionResetError):
                s.sendall(b"a")  # one header byte a second
            with contextlib.suppress(BlockingIOError):
                answer = s.recv(1000)
                break
            time.sleep(1)
        elapsed = time.monotonic() - start
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert TIMEOUT - 0.5 < elapsed < TIMEOUT + 2.5


def test_idle_new_connection_is_closed(server: Server) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT + 5) as s:
        start = time.monotonic()
        answer = _read_all(s)
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert time.monotonic() - start < TIMEOUT + 2.5


def test_keep_alive_requests_reset_the_bound(server: Server) -> None:
    """A connection that sends complete requests is not cut off by the header timer."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        for _ in range(3):
            s.sendall(b"GET /.well-known/ark HTTP/1.1\r\nHost: t\r\n\r\n")
            answer = _one_response(s)
            assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"\r\n\r\n/\n"), answer
            time.sleep(TIMEOUT * 0.75)



def _without_date(answer: bytes) -> bytes:
    return re.sub(rb"(?im)^date: [^\r\n]*\r\n", b"", answer)


def test_a_redirect_answered_again_is_the_same(server: Server) -> None:
    """The second answer of a worker (a redirect it keeps: the protocol writes it, issue 18) is the
    first's, and so is the answer of a new connection that ends after it."""
    # forwarded by the registry: a 302 from an empty store
    ask = b"GET /ark:12345/x9 HTTP/1.1\r\nHost: t\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        answers = []
        for _ in range(4):
            s.sendall(ask)
            answers.append(_without_date(_one_response(s)))
    assert answers[0].startswith(b"HTTP/1.1 302 Found\r\n")
    assert b"\r\nlocation: https://" in answers[0]  # the registry's record for 12345
    assert answers == [answers[0]] * 4
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(ask.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
        closing = _without_date(_read_all(s))
    expected = answers[0].replace(b"\r\n\r\n", b"\r\nconnection: close\r\n\r\n")
    # h11 writes "Connection: close"
    assert closing == expected or (server.kind == "h11" and closing.lower() == expected.lower())


# --- clear errors ---------------------------------------------------------------------------------------

#: A ``sitecustomize`` that makes the ``server`` extra look uninstalled: importing fastapi or uvicorn fails.
NO_SERVER_EXTRA = '''
import sys

class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("fastapi", "uvicorn"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _Missing())
'''


def _serve(*args: str, pythonpath: str | None = None) -> subprocess.CompletedProcess[str]:
    env = _env()
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "pidkit", "serve", *args], capture_output=True, text=True,
                          env=env, timeout=60, check=False)


def _one_error_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pidkit: error: "), stderr
    return lines[0]


@pytest.mark.parametrize("port", ["99999", "65536", "-1"])
def test_port_out_of_range_is_a_usage_error(tmp_path: Path, port: str) -> None:
    r = _serve("--db", f"sqlite:///{tmp_path}/s.db", "--port", port)
    assert r.returncode == 2
    assert port in _one_error_line(r.stderr)
    assert not (tmp_path / "s.db").exists()  # refused before anything was opened


def test_missing_server_extra_names_the_install(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(NO_SERVER_EXTRA)
    r = _serve("--db", f"sqlite:///{tmp_path}/s.db", "--port", "0", pythonpath=str(tmp_path))
    assert r.returncode == 1
    line = _one_error_line(r.stderr)
    assert "pip install 'pidkit[server]'" in line and "uvicorn" in line


def test_port_in_use_is_one_clear_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        r = _serve("--db", f"sqlite:///{tmp_path}/s.db", "--port", port)
    assert r.returncode == 1
    line = _one_error_line(r.stderr)
    assert port in line and "in use" in line
