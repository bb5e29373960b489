"""``make demo``: ``pidkit serve --demo`` started as a real process on a free port with a temp data dir;
it prints the URL, resolves a demo ARK (302 to its target), seeds idempotently, and moves to a free port
when the one asked for is taken."""

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
from pathlib import Path

import httpx

LISTENING = re.compile(r"listening on (http://127\.0\.0\.1:(\d+)/)")
DEMO_LINE = re.compile(r"(http://\S+/(ark:99999/fk4\w+))\s+\((public|passthrough|tombstoned)\)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def demo_server(data_dir: Path, port: int,
                db: str | None = None) -> Iterator[tuple[str, dict[str, str], str]]:
    """Start the demo (in ``db`` if given); yield (base URL, {role: ark}, everything printed before the
    URL line)."""
    env = {k: v for k, v in os.environ.items() if k != "PIDKIT_DATABASE_URL"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pidkit", "serve", "--demo", "--port", str(port), "--data-dir", str(data_dir),
         "--log-level", "warning", *(["--db", db] if db else [])],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        seen: list[str] = []
        deadline = time.monotonic() + 60
        base = None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            m = LISTENING.search(line)
            if m:
                base = m.group(1)
                break
        output = "".join(seen)
        assert base is not None, f"no URL line from pidkit serve --demo:\n{output}"
        roles = {m.group(3): m.group(2) for m in DEMO_LINE.finditer(output)}
        for _ in range(100):  # the socket is listening already; wait until the app answers
            with contextlib.suppress(httpx.TransportError):
                httpx.get(base + ".well-known/ark", timeout=2)
                break
            time.sleep(0.1)
        yield base, roles, output
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


def test_demo_serves_seeded_arks(tmp_path: Path) -> None:
    with demo_server(tmp_path, free_port()) as (base, roles, output):
        assert set(roles) == {"public", "passthrough", "tombstoned"}
        assert re.search(r"demo API key for NAAN 99999 \(shown once\): pk_[0-9a-f]{16}_\S{43}", output)
        r = httpx.get(base + roles["public"], timeout=10)
        assert (r.status_code, r.headers["location"]) == (302, "https://example.org/demo/rhythm")
        r = httpx.get(base + roles["passthrough"] + "/page/2", timeout=10)
        assert (r.status_code, r.headers["location"]) == (302, "https://example.org/demo/collection/page/2")
        assert httpx.get(base + roles["tombstoned"], timeout=10).status_code == 410
        info = httpx.get(base + roles["public"] + "?info", timeout=10)
        assert info.text.startswith("erc:\nwho: Austin, Larry\n")
        assert httpx.get(base + "id/3jzfcijpj2z2a", timeout=10).status_code == 302
        # the demo prints a sign-in for its back-office user, and it signs in
        signin = re.search(r"demo back office: (\S+)  user (\S+)  password (\S+)  \(shown once\)", output)
        assert signin is not None and signin[1] == base + "office/signin"
        with httpx.Client(base_url=base, timeout=10) as browser:
            page = browser.get("office/signin")
            csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
            assert csrf is not None
            form = {"csrf": csrf[1], "name": signin[2], "password": signin[3]}
            r = browser.post("office/signin", data=form)
            assert r.status_code == 303 and r.headers["location"] == "/office"
            assert "Dashboard" in browser.get("office").text
    assert (tmp_path / "pidkit-demo.db").exists()

    # Seeding is idempotent, and a taken port is reported and replaced by a free one.
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        taken = blocker.getsockname()[1]
        with demo_server(tmp_path, taken) as (base2, roles2, output2):
            assert roles2 == roles
            assert signin[3] not in output2  # a new demo password each start
            assert f"port {taken} is in use; using port" in output2
            assert not base2.endswith(f":{taken}/")
            r = httpx.get(base2 + roles["public"], timeout=10)
            assert r.status_code == 302
