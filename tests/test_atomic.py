"""pidkit.atomic: all-or-nothing writes; temp files of killed writers are cleaned up by the next one."""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pidkit.atomic import AtomicWriter, backup_path, open_output, require_regular_file, temp_prefix
from pidkit.errors import OutputError


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
    with subprocess.Popen([sys.executable, "-c", code, str(target)], stdout=subprocess.PIPE) as proc:
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


# -- issue 11: only regular files are replaced; new files follow the umask --------------------------
def test_new_file_follows_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        with AtomicWriter(tmp_path / "new.txt", text=True) as fh:
            fh.write("x")
    finally:
        os.umask(old)
    assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o640


def test_backup_keeps_the_original_mode(tmp_path: Path) -> None:
    target = tmp_path / "tree.ged"
    target.write_bytes(b"old")
    target.chmod(0o604)
    with AtomicWriter(target, backup=True) as fh:
        fh.write(b"new")
    assert Path(backup_path(target)).stat().st_mode & 0o777 == 0o604
    assert target.stat().st_mode & 0o777 == 0o604


def test_a_symlink_stays_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    with open_output(link, text=True) as fh:
        fh.write("new")
    assert link.is_symlink()
    assert real.read_text() == "new"


def test_a_fifo_is_written_directly(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    with open_output(fifo) as fh:
        fh.write(b"through the pipe")
    reader.join(10)
    assert got == [b"through the pipe"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_a_device_is_written_directly() -> None:
    with open_output("/dev/null", text=True) as fh:
        fh.write("gone")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_dash_and_fd_paths_write_the_descriptor(tmp_path: Path) -> None:
    code = (
        "from pidkit.atomic import open_output\n"
        "with open_output('-', text=True) as fh: fh.write('one\\n')\n"
        "with open_output('/dev/stdout', text=True) as fh: fh.write('two\\n')\n"
        "with open_output('/dev/fd/1') as fh: fh.write(b'three\\n')\n"
        "print('four')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=tmp_path, timeout=60)
    assert (r.returncode, r.stdout) == (0, b"one\ntwo\nthree\nfour\n"), r.stderr
    assert list(tmp_path.iterdir()) == []


def test_backup_of_a_stream_or_device_is_refused(tmp_path: Path) -> None:
    for target in ("-", "/dev/null"):
        with pytest.raises(OutputError, match="cannot be backed up"), open_output(target, backup=True):
            pass


def test_in_place_needs_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="a FIFO cannot be edited in place"):
        require_regular_file(fifo)
    with pytest.raises(OutputError, match="a character device cannot be edited in place"):
        require_regular_file("/dev/zero")
    with pytest.raises(OutputError, match="a directory cannot be edited in place"):
        require_regular_file(tmp_path)
    with pytest.raises(OutputError, match="cannot open"):
        require_regular_file(tmp_path / "missing")
    regular = tmp_path / "f"
    regular.write_bytes(b"")
    require_regular_file(regular)


def test_a_directory_is_not_an_output(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="is a directory"), open_output(tmp_path):
        pass


# -- a backup never overwrites a file: the first free FILE.bak, FILE.bak.1 … -------------------------------


def _write(target: Path, data: bytes) -> AtomicWriter:
    writer = AtomicWriter(target, backup=True)
    with writer as fh:
        fh.write(data)
    return writer


def _backups(target: Path) -> dict[str, bytes]:
    """The files next to ``target`` whose names start with its backup name, and what they hold."""
    prefix = f"{target.name}.bak"
    return {p.name: p.read_bytes() for p in target.parent.iterdir() if p.name.startswith(prefix)}


def test_a_backup_never_overwrites_an_existing_file(tmp_path: Path) -> None:
    # issue: the user's FILE.bak (or the backup of an earlier --in-place run) was replaced
    target = tmp_path / "tree.ged"
    target.write_bytes(b"v1")
    target.chmod(0o604)
    Path(f"{target}.bak").write_bytes(b"the user's own backup")
    writers = [_write(target, b"v2"), _write(target, b"v3")]
    assert _backups(target) == {
        "tree.ged.bak": b"the user's own backup",
        "tree.ged.bak.1": b"v1",
        "tree.ged.bak.2": b"v2",
    }
    assert Path(f"{target}.bak.2").stat().st_mode & 0o777 == 0o604
    assert target.read_bytes() == b"v3"
    assert [w.backup_name for w in writers] == [backup_path(target, 1), backup_path(target, 2)]
    assert backup_path(target, 2) == f"{target}.bak.2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tree.ged", *sorted(_backups(target))]


def test_no_backup_of_a_new_file_nor_of_a_failed_write(tmp_path: Path) -> None:
    target = tmp_path / "new.ged"
    writer = _write(target, b"v1")

    def write_and_fail() -> None:
        with AtomicWriter(target, backup=True) as fh:
            fh.write(b"v2")
            raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_and_fail()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.ged"]
    assert writer.backup_name is None


def test_concurrent_writers_never_take_the_same_backup_name(tmp_path: Path) -> None:
    target = tmp_path / "tree.ged"
    target.write_bytes(b"old")
    count = 8
    barrier = threading.Barrier(count)
    writers = [AtomicWriter(target, backup=True) for _ in range(count)]

    def write(n: int) -> None:
        with writers[n] as fh:
            fh.write(b"new %d" % n)
            barrier.wait(30)  # all of them keep their backups at once

    threads = [threading.Thread(target=write, args=(n,)) for n in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    backups = _backups(target)
    assert sorted(backups) == sorted(["tree.ged.bak", *(f"tree.ged.bak.{n}" for n in range(1, count))])
    assert set(backups.values()) <= {b"old", *(b"new %d" % n for n in range(count))}
    assert sorted(str(w.backup_name) for w in writers) == sorted(backup_path(target, n) for n in range(count))
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_name_taken_at_the_last_moment_is_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # another run creates FILE.bak just after this one found it free: the link fails, the next name is taken
    target = tmp_path / "tree.ged"
    target.write_bytes(b"old")
    link = os.link

    def racing_link(src: str, dst: str) -> None:
        if dst == f"{target}.bak":
            Path(dst).write_bytes(b"the other run's backup")
        link(src, dst)

    monkeypatch.setattr(os, "link", racing_link)
    writer = _write(target, b"new")
    assert _backups(target) == {"tree.ged.bak": b"the other run's backup", "tree.ged.bak.1": b"old"}
    assert writer.backup_name == f"{target}.bak.1"


@pytest.mark.parametrize("code", [errno.EPERM, errno.EOPNOTSUPP])
def test_backups_on_a_file_system_without_hard_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    # FAT and some network file systems: the name is created exclusively, then the copy renamed over it
    def no_link(src: str, dst: str) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "link", no_link)
    target = tmp_path / "tree.ged"
    target.write_bytes(b"v1")
    target.chmod(0o640)
    Path(f"{target}.bak").write_bytes(b"mine")
    writers = [_write(target, b"v2"), _write(target, b"v3")]
    assert _backups(target) == {"tree.ged.bak": b"mine", "tree.ged.bak.1": b"v1", "tree.ged.bak.2": b"v2"}
    assert Path(f"{target}.bak.1").stat().st_mode & 0o777 == 0o640
    assert [w.backup_name for w in writers] == [f"{target}.bak.1", f"{target}.bak.2"]
    assert not list(tmp_path.glob(".*.tmp"))


def test_open_output_names_the_backup_it_kept(tmp_path: Path) -> None:
    target = tmp_path / "tree.ged"
    kept: list[str] = []
    for data in (b"v1", b"v2", b"v3"):
        with open_output(target, backup=True, on_backup=kept.append) as fh:
            fh.write(data)
    with open_output(target, on_backup=kept.append) as fh:
        fh.write(b"v4")
    assert kept == [backup_path(target), backup_path(target, 1)]
