"""Packages that install and test anywhere (issue 19): the sdist, the wheels, and ``pidkit version``.

* The sdist is built with ``python -m build`` (as a distribution packager does), must hold everything the
  tests need (``conftest.py``, ``_webutil.py``, ``tests/data/``, ``docs/``, ``specs/``, ``deploy/``), and
  a quick subset of the suite runs in it, unpacked into a temporary directory, against its own sources.
* Wheels are built from that unpacked sdist: with the C compiler the wheel holds the C helper
  ``pidkit._speedups``; with ``CC=/bin/false`` (no working compiler) the build still succeeds and the wheel
  is pure Python — installed, it computes the same ids and says so in ``pidkit version --json``.
* The wheel's metadata: project URLs, classifiers (Python versions, status), keywords, the extras.

``python -m build`` makes its own build environment with the ``setuptools`` that ``pyproject.toml``
requires (from the package index), as every packager's build does; ``make install`` puts ``build`` in
the virtualenv (the ``dev`` extra) and gcc on the machine (``make compiler``).
"""

from __future__ import annotations

import contextlib
import email.parser
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pidkit import __version__
from pidkit.cli.version import version_line
from pidkit.store import migrations, open_store

ROOT = Path(__file__).resolve().parent.parent
BUILD_TIMEOUT = 300
#: What a quick run of the suite in the unpacked sdist covers: value types, doctests of a module, the
#: docs' own checks and the version command (all pure Python; a minute at most).
QUICK_SUBSET = (
    "tests/test_xarkid.py",
    "tests/test_tid.py",
    "tests/test_gedcom_uid.py",
    "tests/test_record_key.py",
    "src/pidkit/llid.py",
    "tests/test_docs.py::test_relative_links_resolve",
    "tests/test_docs.py::test_every_page_exists_and_index_links_them",
    "tests/test_packaging.py::test_version_json_names_every_version",
)
#: Files the sdist must hold for its tests and docs (issue 19: "everything its tests need").
SDIST_MUST_HOLD = (
    "tests/conftest.py",
    "tests/_webutil.py",
    "tests/data/README.md",
    "tests/data/vectors/xarkid.json",
    "docs/index.md",
    "docs/deployment.md",
    "mkdocs.yml",
    "tools/gen_cli_reference.py",
    "tools/mkdocs_hooks.py",
    "specs/README.md",
    "deploy/pidkit.service",
    "deploy/Dockerfile",
    "deploy/compose.yaml",
    "src/pidkit/_speedups.c",
    "src/pidkit/py.typed",
    "setup.py",
    "Makefile",
    "LICENSE",
)


def pidkit_env(**extra: str) -> dict[str, str]:
    """The environment of child processes: no inherited ``PYTHONPATH`` or pidkit settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIDKIT_") and k != "PYTHONPATH"}
    env.update(extra)
    return env


def run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = BUILD_TIMEOUT) -> str:
    """Run ``argv``; fail with its output if it exits non-zero; return its output."""
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)
    if proc.returncode != 0:
        pytest.fail(f"`{' '.join(argv)}` exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout + proc.stderr


def need_build() -> None:
    """``python -m build`` must be there (``make install``: the ``dev`` extra); say so where it is not."""
    if importlib.util.find_spec("build") is None:
        pytest.fail("the `build` package is missing: `make install` (pip install -e '.[dev]') installs it")


# --- the sdist -----------------------------------------------------------------------------------------


@contextlib.contextmanager
def _checkout_lock() -> Iterator[None]:
    """An exclusive lock on this checkout, across processes (a lock file beside the system's temp files)."""
    import fcntl
    import hashlib
    import tempfile

    name = hashlib.sha256(str(ROOT).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"pidkit-build-{name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist of this checkout, built as a packager builds it."""
    need_build()
    out = tmp_path_factory.mktemp("sdist")
    # A build writes its egg-info into the checkout: one build at a time (make test runs pytest-xdist
    # workers, each with its own session fixtures).
    with _checkout_lock():
        run([sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(ROOT)], ROOT, pidkit_env())
    (archive,) = out.glob("pidkit-*.tar.gz")
    return archive


@pytest.fixture(scope="session")
def unpacked(sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist unpacked into a temporary directory (its top directory)."""
    where = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(sdist) as tar:
        tar.extractall(where, filter="data")
    (top,) = where.iterdir()
    return top


def test_the_sdist_prunes_what_git_ignores_inside_a_grafted_directory() -> None:
    """A benchmark's cache (``benchmarks/.cache``: gigabytes of stores) or data, ignored by git, must not
    go into the sdist of a checkout that has them: MANIFEST.in prunes every such directory."""
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8").splitlines()
    grafted = [line.split()[1] for line in manifest if line.startswith("graft ")]
    pruned = {line.split()[1] for line in manifest if line.startswith("prune ")}
    ignored = [
        line.strip().strip("/")
        for line in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#") and "*" not in line
    ]
    inside = [path for path in ignored if any(path.startswith(top + "/") for top in grafted)]
    assert "benchmarks/.cache" in inside  # what this test is for
    assert [path for path in inside if path not in pruned] == []


def test_sdist_holds_what_the_tests_need(sdist: Path) -> None:
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    missing = [name for name in SDIST_MUST_HOLD if name not in names]
    assert not missing, f"the sdist lacks {missing}"
    # every test module and every page of the repository is in it
    for pattern in ("tests/test_*.py", "docs/*.md", "specs/**/*"):
        for path in ROOT.glob(pattern):
            rel = path.relative_to(ROOT).as_posix()
            if path.is_file():
                assert rel in names, f"the sdist lacks {rel}"
    # and nothing built or local
    unwanted = [n for n in names if n.endswith((".so", ".pyc")) or n.startswith(("site/", ".venv/"))]
    assert not unwanted, unwanted


def test_quick_subset_of_the_suite_runs_in_the_unpacked_sdist(unpacked: Path) -> None:
    env = pidkit_env(PYTHONPATH=str(unpacked / "src"), PIDKIT_PURE_PYTHON="1")
    where = run([sys.executable, "-c", "import pidkit; print(pidkit.__file__)"], unpacked, env)
    assert Path(where.strip()).is_relative_to(unpacked / "src"), f"pidkit came from {where}"
    out = run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(unpacked),
         *QUICK_SUBSET],
        unpacked,
        env,
    )
    last = out.strip().splitlines()[-1]
    assert " passed" in last and "failed" not in last and "skipped" not in last, out[-3000:]


# --- wheels --------------------------------------------------------------------------------------------


def build_wheel(unpacked: Path, out: Path, **env: str) -> Path:
    """Build the wheel of the unpacked sdist into ``out``, from a fresh copy of it (no ``build/`` left by
    another build: setuptools would reuse a C helper compiled there)."""
    source = out.parent / "source"
    shutil.copytree(unpacked, source)
    run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(source)], source,
        pidkit_env(**env))
    (wheel,) = out.glob("pidkit-*.whl")
    return wheel


def install_wheel(wheel: Path, target: Path) -> Path:
    """Install ``wheel`` (without its dependencies: they are this interpreter's) into ``target``."""
    run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target",
         str(target), str(wheel)], target.parent, pidkit_env())
    return target


def wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        return zf.namelist()


def version_json(site: Path) -> dict[str, object]:
    """``pidkit version --json`` run from the installed wheel in ``site``."""
    env = pidkit_env(PYTHONPATH=str(site))
    script = (
        "import pidkit, sys; from pidkit.cli.main import main; print(pidkit.__file__, file=sys.stderr); "
        "sys.exit(main(['version', '--json']))"
    )
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=60, check=True)
    assert Path(proc.stderr.strip()).is_relative_to(site), f"pidkit came from {proc.stderr}"
    info: dict[str, object] = json.loads(proc.stdout)
    return info


LLID_INPUT = (
    '[["http://bibfra.me/purl/versa/type","http://schema.org/Person"],'
    '["http://schema.org/name","Augusta Ada King"]]'
)
LLID_EXPECTED = "xjgOrUFiw_o"  # the Library.Link page's own worked example


def llid_from(site: Path) -> str:
    """``pidkit llid -`` of the worked example, run from the installed wheel in ``site``."""
    proc = subprocess.run([sys.executable, "-m", "pidkit", "llid", "-"], input=LLID_INPUT + "\n",
                          env=pidkit_env(PYTHONPATH=str(site)), capture_output=True, text=True, timeout=60,
                          check=True)
    return proc.stdout.strip()


def test_wheel_with_a_compiler_holds_the_c_helper(unpacked: Path, tmp_path: Path) -> None:
    need_build()
    if shutil.which("gcc") is None and shutil.which("cc") is None:
        pytest.fail("no C compiler (make test installs gcc with apt-get where it can)")
    wheel = build_wheel(unpacked, tmp_path / "dist")
    helpers = [n for n in wheel_names(wheel) if n.startswith("pidkit/_speedups") and n.endswith(".so")]
    assert helpers, f"{wheel.name} has no compiled pidkit._speedups"
    assert "py3-none-any" not in wheel.name  # a compiled wheel is tagged for its platform
    site = install_wheel(wheel, tmp_path / "site")
    info = version_json(site)
    assert info["c_helper"] == {"built": True, "in_use": True, "abi": info["c_helper"]["abi"]}  # type: ignore[index]
    assert llid_from(site) == LLID_EXPECTED


@pytest.fixture(scope="session")
def pure_wheel(unpacked: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of the sdist built where no C compiler works (one build for the tests that read it)."""
    need_build()
    return build_wheel(unpacked, tmp_path_factory.mktemp("pure") / "dist", CC="/bin/false", CXX="/bin/false")


def test_wheel_without_a_compiler_is_pure_python_and_works(pure_wheel: Path, tmp_path: Path) -> None:
    wheel = pure_wheel
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name  # pure Python: installs anywhere
    names = wheel_names(wheel)
    assert not [n for n in names if n.endswith((".so", ".pyd"))], "CC=/bin/false still built the C helper"
    assert "pidkit/llid.py" in names and "pidkit/py.typed" in names
    assert not [n for n in names if n.endswith(".c")], "the C source belongs in the sdist only"
    site = install_wheel(wheel, tmp_path / "site")
    info = version_json(site)
    assert info["c_helper"] == {"built": False, "in_use": False, "abi": None}
    assert llid_from(site) == LLID_EXPECTED  # the same id from the pure-Python fallback


def test_wheel_metadata(pure_wheel: Path) -> None:
    with zipfile.ZipFile(pure_wheel) as zf:
        (meta_name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        meta = email.parser.Parser().parsestr(zf.read(meta_name).decode("utf-8"))
    assert meta["Name"] == "pidkit" and meta["Version"] == __version__
    assert meta["Requires-Python"] == ">=3.11"
    classifiers = meta.get_all("Classifier") or []
    assert any(c.startswith("Development Status :: ") for c in classifiers)
    for minor in ("3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {minor}" in classifiers
    assert "Typing :: Typed" in classifiers
    keywords = {k.strip() for k in (meta["Keywords"] or "").split(",")}
    assert {"ark", "gedcom", "atproto", "persistent identifier"} <= keywords
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert urls and all(u.startswith("https://") for u in urls.values()), urls
    extras = set(meta.get_all("Provides-Extra") or [])
    assert {"server", "postgres", "pydantic", "sqlalchemy", "numpy", "docs", "dev"} <= extras
    requires = meta.get_all("Requires-Dist") or []
    assert any(r.startswith("mkdocs-material") and 'extra == "docs"' in r for r in requires), requires


# --- pidkit --version and pidkit version --json ------------------------------------------------------------


def cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("PIDKIT_")}
    full_env.update(env)
    return subprocess.run([sys.executable, "-m", "pidkit", *args], capture_output=True, text=True, timeout=60,
                          env=full_env, check=False)


def test_version_json_names_every_version() -> None:
    r = cli("version", "--json")
    assert r.returncode == 0 and r.stderr == ""
    info = json.loads(r.stdout)
    assert info["pidkit"] == __version__
    assert info["python"] == {"version": platform.python_version(), "implementation": sys.implementation.name}
    # the schema this pidkit writes: the newest migration, and what a new store is created at
    assert info["store_schema"] == max(m.version for m in migrations.load())
    with open_store("sqlite:///:memory:") as store:
        assert store.schema_version() == info["store_schema"]
    spec = importlib.util.find_spec("pidkit._speedups")
    assert info["c_helper"]["built"] is (spec is not None)
    if info["c_helper"]["built"]:
        assert info["c_helper"]["abi"] and info["c_helper"]["abi"] in Path(str(spec.origin)).name  # type: ignore[union-attr]


def test_version_json_says_when_the_c_helper_is_not_in_use() -> None:
    info = json.loads(cli("version", "--json", PIDKIT_PURE_PYTHON="1").stdout)
    assert info["c_helper"]["in_use"] is False


def test_dash_dash_version_is_one_line_with_the_same_facts() -> None:
    r = cli("--version")
    assert r.returncode == 0 and r.stderr == ""
    info = json.loads(cli("version", "--json").stdout)
    assert r.stdout == version_line(info) + "\n"
    assert r.stdout.startswith(f"pidkit {__version__} (C helper: ")
    assert f"Python {platform.python_version()}" in r.stdout
    assert f"store schema {info['store_schema']}" in r.stdout
    assert cli("version").stdout == r.stdout
