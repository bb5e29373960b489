"""``pidkit COMMAND`` builds the parser of COMMAND's module alone (``pidkit.cli.main.MODULE_OF``): the
table names every command of every module, and a command parses and answers as the whole parser does."""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import io
import subprocess
import sys

import pytest

from pidkit.cli.main import COMMAND_MODULES, MODULE_OF, build_parser, main


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_the_table_names_exactly_the_commands_each_module_registers(module: str) -> None:
    parser = argparse.ArgumentParser(prog="pidkit")
    importlib.import_module(module).register(parser.add_subparsers(dest="command"))
    assert sorted(_commands(parser)) == sorted(c for c, m in MODULE_OF.items() if m == module)


def test_the_whole_parser_has_every_command_of_the_table() -> None:
    assert set(_commands(build_parser())) == set(MODULE_OF)


@pytest.mark.parametrize("command", sorted(MODULE_OF))
def test_a_command_has_the_same_help_from_its_module_alone(command: str) -> None:
    whole = _commands(build_parser())[command].format_help()
    alone = _commands(build_parser(command))[command].format_help()
    assert alone == whole
    siblings = {c for c, m in MODULE_OF.items() if m == MODULE_OF[command]}
    assert set(_commands(build_parser(command))) == siblings


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_what_is_not_a_command_gets_the_whole_parser() -> None:
    code, _, err = _run(["bogus"])
    assert code == 2
    assert "invalid choice: 'bogus'" in err and "'gedcom'" in err and "'inspect'" in err
    code, out, _ = _run(["--help"])
    assert code == 0 and all(c in out for c in ("inspect", "gedcom", "serve", "registry"))
    code, _, err = _run([])
    assert code == 2 and "COMMAND" in err


def test_a_command_line_parses_and_runs_with_its_module_alone() -> None:
    code, out, _ = _run(["inspect", "ark:12345/x6np1wh8k"])
    assert code == 0 and "naan: 12345" in out and "blade: np1wh8k" in out
    code, _, err = _run(["inspect", "--no-such-option", "x"])
    assert code == 2 and "unrecognized arguments: --no-such-option" in err


def test_a_command_in_a_new_process_loads_no_other_command_module() -> None:
    probe = (
        "import sys; from pidkit.cli.main import main; code = main(['new', 'tid']); "
        "print(sorted(m for m in sys.modules if m.startswith('pidkit.')), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = ast.literal_eval(done.stderr.strip().splitlines()[-1])  # the module names printed above
    assert "pidkit.cli.ids" in loaded
    others = {"pidkit.cli.store", "pidkit.cli.gedcom", "pidkit.cli.registry", "pidkit.cli.serve"}
    assert not others & set(loaded)
    assert not [m for m in loaded if m.startswith(("pidkit.store", "pidkit.web", "pidkit.gedcom."))]
