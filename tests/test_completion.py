"""``pidkit completion bash|zsh|fish``: generated from the parser, valid, and completing for real in bash."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pidkit.cli.completion import command_tree
from pidkit.cli.main import build_parser, main

BASH = shutil.which("bash")


def _script(shell: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pidkit", "completion", shell], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


@pytest.fixture(scope="module")
def bash_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("completion") / "pidkit.bash"
    path.write_text(_script("bash"), encoding="utf-8")
    return path


def _complete(bash_file: Path, words: list[str]) -> list[str]:
    """Source the script in bash, set COMP_WORDS/COMP_CWORD as readline would, and call ``_pidkit``."""
    assert BASH is not None
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    code = (
        f"source '{bash_file}'\n"
        f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}\n"
        "_pidkit\n"
        "printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    done = subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", code], capture_output=True, text=True, check=True
    )
    assert done.stderr == ""
    return [line for line in done.stdout.splitlines() if line]


@pytest.mark.skipif(BASH is None, reason="bash not installed")
def test_bash_script_is_valid(bash_file: Path) -> None:
    assert BASH is not None
    subprocess.run([BASH, "-n", str(bash_file)], check=True)
    done = subprocess.run(
        [BASH, "--norc", "-c", f"source '{bash_file}' && complete -p pidkit"], capture_output=True, text=True
    )
    assert done.stdout.strip() == "complete -o default -F _pidkit pidkit"


@pytest.mark.skipif(BASH is None, reason="bash not installed")
@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["pidkit", "ar"], ["ark"]),
        (["pidkit", "comp"], ["completion"]),
        (["pidkit", "ark", ""], ["parse", "normalize", "check", "--help", "-h"]),
        (["pidkit", "ark", "n"], ["normalize"]),
        (["pidkit", "ark", "parse", "--j"], ["--json"]),
        (["pidkit", "new", ""], ["xarkid", "tid", "uid", "--gedcom7", "--guid", "--help", "-h", "-n"]),
        (["pidkit", "convert", "AYvP5WgA-_-_ASNFZ4mr", "--to", ""], ["compact", "guid", "hex", "uid"]),
        (["pidkit", "completion", ""], ["bash", "zsh", "fish", "--help", "-h"]),
        (["pidkit", "--ver"], ["--version"]),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) and v and v[0] == "pidkit" else None,
)
def test_bash_completes(bash_file: Path, words: list[str], expected: list[str]) -> None:
    assert _complete(bash_file, words) == expected


@pytest.mark.skipif(BASH is None, reason="bash not installed")
def test_bash_completes_every_top_level_command(bash_file: Path) -> None:
    top = command_tree(build_parser()).children
    got = _complete(bash_file, ["pidkit", ""])
    assert [w for w in got if not w.startswith("-")] == list(top)
    assert {"inspect", "ark", "gedcom", "completion"} <= set(top)


@pytest.mark.skipif(BASH is None, reason="bash not installed")
def test_bash_valued_option_without_choices_completes_files(bash_file: Path, tmp_path: Path) -> None:
    # --db takes a URL/path: the script hands over to filename completion (compgen -f)
    (tmp_path / "store.db").write_text("", encoding="utf-8")
    got = _complete(bash_file, ["pidkit", "mint", "--db", str(tmp_path / "sto")])
    assert got == [str(tmp_path / "store.db")]


def test_tree_follows_the_parser() -> None:
    tree = command_tree(build_parser())
    assert tree.children["ark"].children.keys() >= {"parse", "normalize", "check"}
    assert tree.children["convert"].valued["--to"] == ["compact", "guid", "hex", "uid"]
    assert tree.children["completion"].positional_choices == ["bash", "zsh", "fish"]
    assert "--version" in tree.options and "--version" not in tree.valued


def test_zsh_script() -> None:
    script = _script("zsh")
    lines = script.splitlines()
    assert lines[0] == "#compdef pidkit"
    assert lines[1] == "autoload -U +X bashcompinit && bashcompinit"
    assert script.endswith(_script("bash"))


def test_fish_script() -> None:
    script = _script("fish")
    lines = script.splitlines()
    assert lines[1] == "complete -c pidkit -f"
    assert "complete -c pidkit -n '__fish_use_subcommand' -f -a 'ark'" in script
    assert (
        "complete -c pidkit -n '__fish_seen_subcommand_from ark; and not __fish_seen_subcommand_from "
        "parse normalize check' -f -a 'parse'" in script
    )
    assert "-l to -x -a 'compact guid hex uid'" in script
    assert all(line.startswith(("#", "complete -c pidkit ")) for line in lines)
    assert all(line.count("'") % 2 == 0 or "\\'" in line for line in lines)


def test_fish_script_parses(tmp_path: Path) -> None:
    if shutil.which("fish") is None:  # make test installs fish where it can (Makefile: system-tools)
        if os.environ.get("CI"):
            pytest.fail("fish is not installed under CI")
        pytest.skip("fish not installed (apt-get install fish)")
    path = tmp_path / "pidkit.fish"
    path.write_text(_script("fish"), encoding="utf-8")
    subprocess.run(["fish", "--no-execute", str(path)], check=True)


def test_in_process_and_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "bash"]) == 0
    assert capsys.readouterr().out.startswith("# bash completion for pidkit")
    assert main(["completion", "tcsh"]) == 2
    assert "invalid choice: 'tcsh'" in capsys.readouterr().err
