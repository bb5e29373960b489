"""The README's short tour, typed into a shell as a new user would (issue 11: "the README tour works when
typed into a terminal"): every command of its ``sh`` block runs in a fresh directory with the venv's
``pidkit`` on PATH and exits 0 without a traceback; ``pidkit serve`` starts and says where it listens."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def tour_commands() -> list[str]:
    """The commands of the README's "A short tour" block, a continued line joined to its first.

    >>> cmds = tour_commands()
    >>> cmds[0].startswith("pidkit inspect "), any(c.startswith("pidkit serve") for c in cmds)
    (True, True)
    """
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## A short tour\n.*?```sh\n(.*?)```", text, re.S)
    assert block is not None, "README.md has no short tour"
    commands: list[str] = []
    pending = ""
    for line in block[1].splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1]
            continue
        commands.append(pending + line)
        pending = ""
    return commands


def test_the_tour_names_what_it_promises() -> None:
    commands = tour_commands()
    assert len(commands) >= 20
    for verb in ("inspect", "new", "convert", "llid", "ark normalize", "naan add", "minter create", "mint",
                 "bind", "fetch", "history", "check", "dump", "registry show", "serve", "gedcom migrate"):
        assert any(f"pidkit {verb}" in c for c in commands), verb


def test_every_command_of_the_tour_runs(tmp_path: Path) -> None:
    (tmp_path / "tests").symlink_to(ROOT / "tests")  # the tour runs from a clone: its test data is there
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIDKIT_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    for command in tour_commands():
        if command.startswith("pidkit serve"):
            _serve_starts(command, tmp_path, env)
            continue
        r = subprocess.run(["bash", "-c", f"set -o pipefail; {command}"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)  # fmt: skip
        assert r.returncode == 0, f"{command}\n{r.stderr}"
        assert "Traceback" not in r.stderr, command
    assert len((tmp_path / "ids.txt").read_text().split()) == 1_000_000
    minted = (tmp_path / "minted.txt").read_text().split()
    assert len(minted) == len(set(minted)) == 100_000
    assert (tmp_path / "family-7.ged").read_bytes().startswith(b"\xef\xbb\xbf0 HEAD")  # a 7.0 file: BOM
    assert (tmp_path / "store.jsonl").stat().st_size > 0


def _serve_starts(command: str, cwd: Path, env: dict[str, str]) -> None:
    """``pidkit serve`` (on a free port: the default may be taken here) prints its URL and answers."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(["bash", "-c", f"exec {command.split('#')[0].strip()} --port {port}"], cwd=cwd,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # fmt: skip
    try:
        import urllib.request

        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    assert response.status == 200
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"{command} did not start: {proc.stdout.read() if proc.stdout else ''}")
                time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        out = proc.communicate(timeout=30)[0]
    assert f"http://127.0.0.1:{port}" in out, out
