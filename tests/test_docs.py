"""The documentation is tested: every example in ``docs/*.md`` runs, and the generated references are current.

What runs, per page (one test per page; the examples of a page share their state, in page order):

* ```` ```python ```` blocks: with ``>>>`` prompts they are doctests (``doctest.DocTestParser``, ELLIPSIS on);
  without, they are executed.  All Python blocks of a page share one namespace.
* ```` ```console ```` blocks: every ``$ command`` line (continued by ``> `` lines, as an interactive shell
  shows them) runs in ``bash`` in a fresh temporary directory shared by the page, with the virtualenv's
  real ``pidkit`` entry point first on ``PATH``; the lines up to the next ``$`` are its expected output
  (stdout and stderr together, ``...`` matches anything).  The command must exit 0: pages show a failure
  with ``; echo "exit status: $?"``.  ```` ```console postgres ```` blocks run with
  ``PIDKIT_DATABASE_URL`` set to a fresh schema of the test PostgreSQL database (skipped without one).
* ```` ```nginx ```` blocks (``recipes.md``): the server block is run in front of ``pidkit serve`` and must
  pass ``/ark:`` paths through unmodified (``make test`` installs nginx-light; without it the test fails
  under CI and is skipped elsewhere).

Blocks in other languages (``sh``, ``text``, ``json``, ``ini`` …) are shown, not run: configuration and
file contents.  ``docs/performance*.md`` and ``docs/reliability.md`` are written by the benchmark and
reliability suites, not here.
"""

from __future__ import annotations

import contextlib
import doctest
import html
import http.client
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from _schema import schema_url
from test_edge import free_port, wait_for_port

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
TOOLS = ROOT / "tools"
BIN = Path(sys.executable).parent
#: Pages other suites write (their figures come from runs, not from examples).
NOT_OURS = frozenset({"performance.md", "performance-notes.md", "reliability.md"})
#: Every page the documentation must have (issues 7 and 19), each linked from index.md.
REQUIRED_PAGES = (
    "index.md",
    "xarkid.md",
    "tid-and-record-keys.md",
    "gedcom-uid.md",
    "library-link.md",
    "ark.md",
    "inspect.md",
    "cli.md",
    "api.md",
    "recipes.md",
    # issue 19: a quick start per kind of user, the deployment recipes, the sources
    "quickstart-ark-resolver.md",
    "quickstart-gedcom.md",
    "quickstart-tid.md",
    "quickstart-library-link.md",
    "quickstart-types.md",
    "deployment.md",
    "sources.md",
    "persistence.md",
    "oai.md",  # issue 15: OAI-PMH at /oai
    "backoffice.md",  # issue 14
    "ezid.md",  # issue 15: EZID's API below /ezid
)
COMMAND_TIMEOUT = 120

_FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)[ \t]*([^\n`]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    """One fenced code block: its language, the rest of the info string, its text and first line number."""

    lang: str
    info: str
    text: str
    line: int


def blocks(text: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, in order."""
    out = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 2  # the first line inside the fence
        out.append(Block(m.group(1).lower(), m.group(2).strip(), m.group(3), line))
    return out


def pages() -> list[Path]:
    """The pages whose examples this module runs."""
    return sorted(p for p in DOCS.glob("*.md") if p.name not in NOT_OURS)


# --- console blocks ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    """A ``$ command`` of a console block and the output it must print."""

    command: str
    expected: str
    line: int


def commands(block: Block) -> list[Command]:
    """Split a console block into commands (``$ `` lines with their ``> `` continuations) and outputs."""
    out: list[Command] = []
    cmd: list[str] | None = None
    expected: list[str] = []
    start = 0
    in_command = False
    for offset, line in enumerate(block.text.splitlines()):
        if line.startswith("$ ") or line == "$":
            if cmd is not None:
                out.append(Command("\n".join(cmd), "".join(expected), start))
            cmd, expected, start, in_command = [line[2:]], [], block.line + offset, True
        elif cmd is not None and in_command and (line.startswith("> ") or line == ">"):
            cmd.append(line[2:])
        elif cmd is None:
            raise AssertionError(f"line {block.line + offset}: console block text before the first '$ '")
        else:
            in_command = False
            expected.append(line + "\n")
    if cmd is not None:
        out.append(Command("\n".join(cmd), "".join(expected), start))
    return out


_CHECKER = doctest.OutputChecker()


def output_matches(expected: str, got: str) -> bool:
    """Whether ``got`` is the expected output (``...`` matches anything, as in doctest's ELLIPSIS)."""
    return _CHECKER.check_output(expected, got, doctest.ELLIPSIS)


def run_command(cmd: Command, cwd: Path, env: dict[str, str], where: str) -> None:
    """Run one console command in bash and compare its output."""
    proc = subprocess.run(
        ["bash", "-c", cmd.command],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=COMMAND_TIMEOUT,
        check=False,
    )
    got = proc.stdout
    if proc.returncode != 0:
        pytest.fail(
            f"{where}:{cmd.line}: `{cmd.command}` exited {proc.returncode} (show failures with "
            f'`; echo "exit status: $?"`)\n--- output ---\n{got}'
        )
    if not output_matches(cmd.expected, got):
        pytest.fail(
            f"{where}:{cmd.line}: `{cmd.command}` printed something else\n"
            f"--- expected ---\n{cmd.expected}--- got ---\n{got}"
        )


def console_env(home: Path) -> dict[str, str]:
    """The environment of console examples: the venv first on PATH, no inherited pidkit settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIDKIT_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as written
    env["COLUMNS"] = "100"
    env["LC_ALL"] = "C.UTF-8"
    env.pop("VIRTUAL_ENV", None)
    return env


def stop_background_servers(work: Path) -> list[int]:
    """Stop the processes a page started in the background (``… & echo $! > NAME.pid``), if still running.

    A page stops its servers itself (``kill "$(cat serve.pid)"``); this is for a page whose example failed
    before that line.  Returns the process ids it had to stop.
    """
    stopped = []
    for pidfile in sorted(work.glob("*.pid")):
        text = pidfile.read_text(encoding="utf-8").strip()
        if not text.isdigit():
            continue
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(text), signal.SIGTERM)
            stopped.append(int(text))
    return stopped


# --- PostgreSQL ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def fresh_schema(base_url: str) -> Iterator[str]:
    """A URL of ``base_url`` whose search_path is a new, empty schema (dropped afterwards)."""
    import psycopg

    schema = f"docs_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield schema_url(base_url, schema)
    finally:
        with psycopg.connect(base_url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


# --- nginx (free_port and wait_for_port: tests/test_edge.py's) -------------------------------------------


def raw_get(port: int, path: str) -> tuple[int, dict[str, str], str]:
    """GET ``path`` exactly as written (no client-side normalization)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("GET", path, skip_accept_encoding=True)
        conn.endheaders()
        resp = conn.getresponse()
        headers = {k.lower(): v for k, v in resp.getheaders()}
        return resp.status, headers, resp.read().decode("utf-8", "replace")
    finally:
        conn.close()


NGINX_CASES = (
    # (path as sent, expected Location) — hyphens, the old label, %xx, doubled slashes: all as sent
    ("/ark:12345/x54xz321", "https://example.org/objects/x54xz321"),
    ("/ark:/12345/x5-4-xz-321", "https://example.org/objects/x54xz321"),
    ("/ark:12345/x54xz321/c3//s5.pdf", "https://example.org/objects/x54xz321/c3/s5.pdf"),
    ("/ark:12345/x54xz321/p%2f1", "https://example.org/objects/x54xz321/p%2f1"),
)


def check_nginx_block(block: Block, tmp: Path, where: str) -> None:
    """Run the nginx server block in front of ``pidkit serve`` and check the ARK paths pass through."""
    nginx = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)
    if nginx is None:
        missing = f"{where}:{block.line}: nginx is not installed (make test installs nginx-light if it can)"
        if os.environ.get("CI"):
            pytest.fail(missing)  # under CI the recipe must really be run
        pytest.skip(missing)
    text = block.text
    assert "listen 80;" in text and "127.0.0.1:8000" in text, f"{where}:{block.line}: unexpected snippet"
    app_port, proxy_port = free_port(), free_port()
    db = tmp / "nginx.db"
    env = console_env(tmp)
    for argv in (
        ["naan", "add", "12345"],
        ["bind", "ark:/12345/x5-4-xz-321", "https://example.org/objects/x54xz321", "--passthrough"],
    ):
        subprocess.run([str(BIN / "pidkit"), *argv, "--db", f"sqlite:///{db}"], env=env, check=True,
                       capture_output=True)
    server = text.replace("listen 80;", f"listen 127.0.0.1:{proxy_port};").replace(
        "127.0.0.1:8000", f"127.0.0.1:{app_port}"
    )
    conf = tmp / "nginx.conf"
    conf.write_text(
        f"daemon off;\nworker_processes 1;\npid {tmp / 'nginx.pid'};\nerror_log {tmp / 'error.log'};\n"
        "events { worker_connections 64; }\nhttp {\n"
        f"  access_log off;\n  client_body_temp_path {tmp}/body;\n  proxy_temp_path {tmp}/proxy;\n"
        f"  fastcgi_temp_path {tmp}/fcgi;\n  uwsgi_temp_path {tmp}/uwsgi;\n  scgi_temp_path {tmp}/scgi;\n"
        f"{server}\n}}\n",
        encoding="utf-8",
    )
    check = subprocess.run([nginx, "-t", "-c", str(conf), "-p", str(tmp)], capture_output=True, text=True,
                           check=False)
    assert check.returncode == 0, f"{where}:{block.line}: nginx -t failed:\n{check.stderr}"
    app = subprocess.Popen(
        [str(BIN / "pidkit"), "serve", "--port", str(app_port), "--db", f"sqlite:///{db}",
         "--log-level", "warning"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    proxy = subprocess.Popen([nginx, "-c", str(conf), "-p", str(tmp)], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    try:
        wait_for_port(app_port, app, "pidkit serve")
        wait_for_port(proxy_port, proxy, "nginx")
        for path, location in NGINX_CASES:
            direct = raw_get(app_port, path)
            proxied = raw_get(proxy_port, path)
            assert direct[0] == 302 and direct[1]["location"] == location, (path, direct)
            assert proxied[0] == 302 and proxied[1]["location"] == location, (
                f"{where}:{block.line}: through nginx {path} gave {proxied[0]} {proxied[1].get('location')}"
            )
        status, _, body = raw_get(proxy_port, "/ark:/12345/x5-4-xz-321?info")
        assert status == 200 and body.startswith("erc:"), (status, body)
        assert raw_get(proxy_port, "/.well-known/ark")[2] == "/\n"
    finally:
        for proc in (proxy, app):
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout:
                proc.stdout.close()


# --- the tests -----------------------------------------------------------------------------------------


def test_every_page_exists_and_index_links_them() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    for name in REQUIRED_PAGES:
        assert (DOCS / name).is_file(), f"docs/{name} is missing"
        if name != "index.md":
            assert f"]({name})" in index, f"docs/index.md does not link {name}"


def test_relative_links_resolve() -> None:
    link = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for m in link.finditer(text):
            target = m.group(1)
            if "://" in target or target.startswith("mailto:"):
                continue
            assert (page.parent / target).exists(), f"{page.name}: broken link to {target}"


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.name)
def test_examples_run(page: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    text = page.read_text(encoding="utf-8")
    where = f"docs/{page.name}"
    work = tmp_path / "work"
    work.mkdir()
    env = console_env(tmp_path)
    globs: dict[str, Any] = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    ran = 0
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.chdir(work))
        stack.callback(stop_background_servers, work)
        pg_env: dict[str, str] | None = None
        for block in blocks(text):
            if block.lang in ("python", "pycon", "py"):
                if ">>>" in block.text:
                    name = f"{where}:{block.line}"
                    test = parser.get_doctest(block.text, globs, name, str(page), block.line - 1)
                    result = runner.run(test, clear_globs=False)
                    globs.update(test.globs)  # DocTest works on a copy: later blocks see this one's names
                    assert result.failed == 0, f"{where}:{block.line}: doctest failed (see the output above)"
                else:
                    code = compile(block.text, f"{where}:{block.line}", "exec")
                    exec(code, globs)
                ran += 1
            elif block.lang == "console":
                block_env = env
                if block.info == "postgres":
                    if pg_env is None:
                        base = request.getfixturevalue("postgres_url")
                        url = stack.enter_context(fresh_schema(base))
                        pg_env = {**env, "PIDKIT_DATABASE_URL": url}
                    block_env = pg_env
                for cmd in commands(block):
                    run_command(cmd, work, block_env, where)
                ran += 1
            elif block.lang == "nginx":
                nginx_dir = tmp_path / f"nginx{block.line}"
                nginx_dir.mkdir()
                check_nginx_block(block, nginx_dir, where)
                ran += 1
    if page.name not in ("cli.md", "api.md", "index.md"):
        assert ran, f"{where} has no runnable example"


# --- generated references ------------------------------------------------------------------------------


def load_tool(name: str) -> ModuleType:
    """Import ``tools/<name>.py`` (the tools directory is not a package)."""
    spec = importlib.util.spec_from_file_location(f"pidkit_tools_{name}", TOOLS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("tool", "output"),
    [("gen_cli_reference", "cli.md"), ("gen_api_reference", "api.md")],
    ids=["cli.md", "api.md"],
)
def test_generated_reference_is_current(tool: str, output: str) -> None:
    module = load_tool(tool)
    fresh: str = module.render()
    assert fresh.startswith("<!-- generated by tools/"), "the generated page must say what generated it"
    current = (DOCS / output).read_text(encoding="utf-8") if (DOCS / output).exists() else ""
    if current != fresh:
        pytest.fail(f"docs/{output} is out of date: regenerate it with `.venv/bin/python tools/{tool}.py`")


def test_cli_reference_covers_every_command() -> None:
    module = load_tool("gen_cli_reference")
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    for path in module.command_paths():
        assert f"## pidkit {' '.join(path)}" in text or f"### pidkit {' '.join(path)}" in text, path


def test_api_reference_covers_every_operation() -> None:
    from pidkit.web import create_app

    text = (DOCS / "api.md").read_text(encoding="utf-8")
    for path, operations in create_app("sqlite:///:memory:").openapi()["paths"].items():
        for method in operations:
            assert f"`{method.upper()} {path}`" in text, (method, path)


# --- the site --------------------------------------------------------------------------------------------


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of ``config`` into ``site`` (this interpreter's mkdocs: the docs extra)."""
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        pytest.fail("mkdocs-material is not installed: `make install` installs it (the docs extra, in dev)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir",
         str(site)],
        cwd=config.parent, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT, check=False,
    )


def nav_pages(nav: Any) -> list[str]:
    """The page files named in a ``nav`` tree of mkdocs.yml.

    >>> nav_pages([{"Home": "index.md"}, {"A": [{"B": "b.md"}, "c.md"]}])
    ['index.md', 'b.md', 'c.md']
    """
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    return []


def mkdocs_config() -> dict[str, Any]:
    """mkdocs.yml as data."""
    import yaml

    config: dict[str, Any] = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return config


def test_site_builds_strict_with_every_page_in_the_navigation(tmp_path: Path) -> None:
    in_nav = nav_pages(mkdocs_config()["nav"])
    on_disk = sorted(p.name for p in DOCS.glob("*.md"))
    assert sorted(in_nav) == on_disk, f"pages not in the navigation: {set(on_disk) - set(in_nav)}"
    proc = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for page in in_nav:
        built = tmp_path / "site" / ("index.html" if page == "index.md" else f"{page[:-3]}/index.html")
        assert built.is_file(), built
    # the deployment page shows the files of deploy/ themselves (pymdownx.snippets)
    page = (tmp_path / "site" / "deployment" / "index.html").read_text(encoding="utf-8")
    deployment = html.unescape(re.sub(r"<[^>]+>", "", page))
    for line in ("ProtectSystem=strict", "HEALTHCHECK", "service_healthy", "pidkit dump -o"):
        assert line in deployment, line
    assert "--8<--" not in deployment


def test_strict_site_build_fails_on_a_broken_link(tmp_path: Path) -> None:
    """The strict build above would catch a broken link (the check can fail)."""
    for part in ("docs", "deploy", "tools"):
        shutil.copytree(ROOT / part, tmp_path / part)
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    with (tmp_path / "docs" / "index.md").open("a", encoding="utf-8") as f:
        f.write("\nSee [the missing page](no-such-page.md).\n")
    proc = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode != 0 and "no-such-page.md" in proc.stdout + proc.stderr


def test_site_hook_strips_test_markers_only() -> None:
    hooks = load_tool("mkdocs_hooks")
    text = "```console postgres\n$ pidkit --version\n```\n\n```python\n>>> 1\n1\n```\n"
    assert hooks.on_page_markdown(text) == "```console\n$ pidkit --version\n```\n\n```python\n>>> 1\n1\n```\n"
    assert blocks(text)[0].info == "postgres"  # the test harness still reads the marker


#: Backquoted repository paths the texts cite, which must exist (issue 19: cite only files that exist).
_CITED_PATH = re.compile(r"`((?:specs|tests/data|src/pidkit|deploy|tools|docs)/[^`\s]*)`")
#: Paths into material beside or outside the repository (``seeds/…``, ``shared/…``, ``../shared``, an absolute
#: ``/…/shared``), which no clone or package has: cite the copy under ``specs/`` or ``tests/data/``, or a
#: public URL, instead.  Not inside URLs (``https://host/shared/x`` is an address, not a path).
_OUTSIDE_PATH = re.compile(
    r"(?<![\w.:/-])((?:\.\./)+(?:[\w.-]+/)*(?:seeds|shared)\b[\w./{},*-]*"
    r"|/(?:[\w.-]+/)*(?:seeds|shared)\b[\w./{},*-]*"
    r"|(?:[\w.-]+/)*(?:seeds|shared)/[\w./{},*-]*)"
)
#: The directories whose text is shipped (in the sdist) and may cite files.
SHIPPED_DIRS = ("docs", "src", "tests", "specs", "deploy", "tools", "benchmarks", "stress")
#: Cited files another branch is changing now; each with the fix it needs (remove once it is made).
PENDING_CITATIONS: dict[tuple[str, str], str] = {}


def citing_texts() -> list[Path]:
    """The texts whose citations must resolve: the pages, every README.md, and the Python sources.

    The Python files of ``src/``, ``tools/``, ``benchmarks/``, ``stress/`` and ``tests/`` (docstrings and
    comments cite sources; a string naming ``../shared`` would be a test reading outside the repository).
    """
    texts = [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]
    for top in SHIPPED_DIRS:
        for pattern in ("README.md", "*.py"):
            for path in sorted((ROOT / top).rglob(pattern)):
                parts = path.relative_to(ROOT).parts
                if not any(part.startswith(".") or part in ("__pycache__", "site") for part in parts):
                    texts.append(path)
    return [p for p in dict.fromkeys(texts) if p != Path(__file__).resolve()]


def cited_paths_missing(text: str) -> list[str]:
    """The paths ``text`` cites that are not in the repository.

    >>> cited_paths_missing("see ``seeds/002`` and `specs/ezid/apidoc.2.rst`, not ../shared/specs/x.md")
    ['seeds/002', '../shared/specs/x.md']
    >>> cited_paths_missing("copied from ../shared (see `tests/data/README.md`); https://example.org/shared/x")
    ['../shared']
    >>> cited_paths_missing("`specs/seeds/004`, `/work/shared/registries/`, `shared/` beside the repository")
    ['specs/seeds/004', '/work/shared/registries/', 'shared/']
    """
    found = [m.group(1).replace("{service,timer}", "service") for m in _CITED_PATH.finditer(text)]
    outside = [m.group(1).rstrip(".,;:") for m in _OUTSIDE_PATH.finditer(text)]
    missing = []
    for path in [*found, *(p for p in outside if p not in found)]:
        if path.startswith(("../", "/")) or not _exists(path):
            missing.append(path)
    return list(dict.fromkeys(missing))


def _exists(path: str) -> bool:
    """Whether the repository has ``path``; a placeholder (``<name>``) or a ``*`` matches any name.

    >>> _exists("tests/data/importers/noid/<name>/noid.bdb"), _exists("specs/*/no-such-file")
    (True, False)
    """
    pattern = re.sub(r"<[^<>/]*>", "*", path)
    if "*" in pattern:
        return any(ROOT.glob(pattern))
    return (ROOT / path).exists()


def test_cited_repository_files_exist() -> None:
    missing = []
    for text in citing_texts():
        where = text.relative_to(ROOT).as_posix()
        for path in cited_paths_missing(text.read_text(encoding="utf-8")):
            if (where, path) not in PENDING_CITATIONS:
                missing.append(f"{where}: {path}")
    assert not missing, "\n".join(missing)


# --- the harness itself ----------------------------------------------------------------------------------


def test_console_block_parsing() -> None:
    block = Block("console", "", "$ echo a\na\n$ cat <<'EOF'\n> x\n> EOF\nx\n$ true\n", 10)
    assert commands(block) == [
        Command("echo a", "a\n", 10),
        Command("cat <<'EOF'\nx\nEOF", "x\n", 12),
        Command("true", "", 16),
    ]


@pytest.mark.parametrize(
    ("expected", "got", "ok"),
    [("a\n", "a\n", True), ("a\n", "b\n", False), ("key ...\n", "key pk_1_x\n", True), ("", "x\n", False)],
    ids=["same", "different", "ellipsis", "unexpected-output"],
)
def test_output_matching(expected: str, got: str, ok: bool) -> None:
    assert output_matches(expected, got) is ok


def test_fence_parsing_keeps_language_info_and_line() -> None:
    text = "intro\n\n```console postgres\n$ pidkit --version\n```\n\n```python\n>>> 1\n1\n```\n"
    assert blocks(text) == [
        Block("console", "postgres", "$ pidkit --version\n", 4),
        Block("python", "", ">>> 1\n1\n", 8),
    ]
