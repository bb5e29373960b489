"""pidkit.atomic: all-or-nothing writes; temp files of killed writers are cleaned up by the next one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pidkit.atomic import AtomicWriter, backup_path, temp_prefix


def test_exception_leaves_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old")
    def write_and_fail() -> None:
        with AtomicWriter(target, text=True) as fh:
            fh.write("new")
            raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_and_fail()
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_backup_and_mode_kept(tmp_path: Path) -> None:
    target = tmp_path / "f.bin"
    target.write_bytes(b"old")
    target.chmod(0o640)
    with AtomicWriter(target, backup=True) as fh:
        fh.write(b"new")
    assert target.read_bytes() == b"new"
    assert Path(backup_path(target)).read_bytes() == b"old"
    assert target.stat().st_mode & 0o777 == 0o640


def test_temp_file_of_a_killed_writer_is_removed_by_the_next(tmp_path: Path) -> None:
    target = tmp_path / "tree.ged"
    target.write_bytes(b"old")
    code = (
        "import sys, time\n"
        "from pidkit.atomic import AtomicWriter\n"
        "with AtomicWriter(sys.argv[1]) as fh:\n"
        "    fh.write(b'half'); fh.flush(); print('ready', flush=True); time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(target)], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"ready"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    stale = list(tmp_path.glob(temp_prefix(target) + "*.tmp"))
    assert len(stale) == 1
    assert target.read_bytes() == b"old"
    # a live writer's temp file of another target is left alone
    other = tmp_path / (temp_prefix(tmp_path / "other") + f"{os.getpid()}-x.tmp")
    other.write_bytes(b"")
    with AtomicWriter(target) as fh:
        fh.write(b"new")
    assert target.read_bytes() == b"new"
    assert not stale[0].exists()
    assert other.exists()
