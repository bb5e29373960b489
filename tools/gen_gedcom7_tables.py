"""Generate ``src/pidkit/gedcom/g7tables.py``: GEDCOM 7.0's structure tables, from the specification.

Reads the ``gedstruct`` blocks of ``gedcom-3-structures-1-organization.md`` (the metasyntax of its section
"A Metasyntax for Structure Organization": level markers ``n``/``0``/``+k``, rule instantiation
``<<RULE>>``, alternatives ``[ | ]``, a structure type URI at the end of each line) and writes:

* ``RECORDS``: record tag → structure type (``g7:record-INDI`` …), plus ``HEAD`` and ``TRLR``;
* ``SUBSTRUCTURES``: structure type → {tag → structure type} of the substructures it may have
  (every occurrence of a type contributes: a type is defined by its URI);
* ``PAYLOADS``: structure type → payload as the metasyntax writes it (``<Text>``, ``@<XREF:INDI>@``,
  ``[Y|<NULL>]``, ``""`` for none).

Run from the repository root, naming the specification file::

    .venv/bin/python tools/gen_gedcom7_tables.py specs/gedcom7/gedcom-3-structures-1-organization.md

``--check`` exits 1 if the checked-in module differs from what the specification gives.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "src" / "pidkit" / "gedcom" / "g7tables.py"

_SECTION = re.compile(r"^#### (?:`(?P<name>[A-Z_]+)`|(?P<doc>Dataset)) :=")
_FENCE = re.compile(r"^(`{3,})")
_ITEM = re.compile(
    r"^(?P<level>n|0|\+\d+)\s+"
    r"(?:<<(?P<rule>[A-Z_]+)>>|(?:@XREF:[A-Z_]+@\s+)?(?P<tag>[A-Z_][A-Z0-9_]*)(?:\s+(?P<payload>.*?))?)"
    r"\s+\{[01M:-]+\}(?:\s+(?P<uri>g7:[A-Za-z0-9_-]+))?\s*$"
)


@dataclass
class Item:
    """One line of a rule: its level offset (0 for ``n``/``0``), and a rule or a structure."""

    offset: int
    rule: str | None = None
    tag: str | None = None
    payload: str = ""
    uri: str | None = None
    children: list[Item] = field(default_factory=list)


def parse_rules(text: str) -> dict[str, list[Item]]:
    """Every rule of the specification: name → its top-level items (with their nested items)."""
    rules: dict[str, list[Item]] = {}
    name: str | None = None
    fence: str | None = None
    stack: list[Item] = []
    for line in text.splitlines():
        if fence is None:
            m = _SECTION.match(line)
            if m:
                name = m.group("name") or m.group("doc")
                continue
            f = _FENCE.match(line)
            if f and name is not None and "gedstruct" in line:
                fence = f.group(1)
                rules.setdefault(name, [])
                stack = []
            continue
        if line.strip() == fence:
            fence = None
            name = None
            continue
        body = line.strip()
        if body in ("[", "|", "]") or not body:
            continue
        m = _ITEM.match(body)
        if m is None:
            raise SystemExit(f"unreadable gedstruct line in {name}: {line!r}")
        level = m.group("level")
        offset = 0 if level in ("n", "0") else int(level[1:])
        payload = (m.group("payload") or "").strip()
        item = Item(offset, m.group("rule"), m.group("tag"), payload, m.group("uri"))
        while stack and stack[-1].offset >= offset:
            stack.pop()
        assert name is not None
        if stack:
            stack[-1].children.append(item)
        else:
            rules[name].append(item)
        stack.append(item)
    return rules


def expand(items: list[Item], rules: dict[str, list[Item]]) -> list[Item]:
    """``items`` with every rule instantiation replaced by the rule's items (recursively)."""
    out: list[Item] = []
    for item in items:
        if item.rule is not None:
            out.extend(expand(rules[item.rule], rules))
        else:
            out.append(item)
    return out


def tables(rules: dict[str, list[Item]]) -> tuple[dict[str, str], dict[str, dict[str, str]], dict[str, str]]:
    """``RECORDS``, ``SUBSTRUCTURES`` and ``PAYLOADS`` (see the module docstring)."""
    records: dict[str, str] = {}
    subs: dict[str, dict[str, str]] = {}
    payloads: dict[str, str] = {}

    seen: set[int] = set()  # items visited (rules refer to each other: NOTE_STRUCTURE ↔ SOURCE_CITATION)

    def visit(item: Item) -> None:
        assert item.uri is not None and item.tag is not None, item
        if id(item) in seen:
            return
        seen.add(id(item))
        payloads[item.uri] = item.payload
        children = subs.setdefault(item.uri, {})
        for child in expand(item.children, rules):
            assert child.tag is not None and child.uri is not None, child
            known = children.setdefault(child.tag, child.uri)
            if known != child.uri:
                raise SystemExit(f"{item.uri}: {child.tag} is both {known} and {child.uri}")
            visit(child)

    for item in expand(rules["Dataset"], rules):
        assert item.tag is not None and item.uri is not None
        records[item.tag] = item.uri
        visit(item)
    return records, subs, payloads


def _q(text: str) -> str:
    """A Python string literal in double quotes (as the project's code writes them)."""
    return json.dumps(text, ensure_ascii=False)


def render(source: str, rules: dict[str, list[Item]]) -> str:
    """The module's text."""
    records, subs, payloads = tables(rules)
    out = [
        '"""GEDCOM 7.0 structure tables: generated by tools/gen_gedcom7_tables.py; do not edit.',
        "",
        f"Source: ``{source}`` (GEDCOM 7.0, ``specs/gedcom7/``).",
        "``RECORDS``: record tag → structure type; ``SUBSTRUCTURES``: structure type → {tag → structure",
        "type}; ``PAYLOADS``: structure type → payload as the specification's metasyntax writes it.",
        "",
        '>>> SUBSTRUCTURES[RECORDS["INDI"]]["BIRT"], PAYLOADS["g7:FAM-HUSB"]',
        "('g7:BIRT', '@<XREF:INDI>@')",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final",
        "",
        '__all__ = ["PAYLOADS", "RECORDS", "SUBSTRUCTURES"]',
        "",
        "RECORDS: Final[dict[str, str]] = {",
    ]
    out += [f"    {_q(tag)}: {_q(uri)}," for tag, uri in sorted(records.items())]
    out += ["}", "", "SUBSTRUCTURES: Final[dict[str, dict[str, str]]] = {"]
    for uri in sorted(subs):
        children = subs[uri]
        if not children:
            out.append(f"    {_q(uri)}: {{}},")
            continue
        out.append(f"    {_q(uri)}: {{")
        out += [f"        {_q(tag)}: {_q(child)}," for tag, child in sorted(children.items())]
        out.append("    },")
    out += ["}", "", "PAYLOADS: Final[dict[str, str]] = {"]
    out += [f"    {_q(uri)}: {_q(payload)}," for uri, payload in sorted(payloads.items())]
    out += ["}", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) the module."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", type=Path, help="gedcom-3-structures-1-organization.md")
    parser.add_argument("--check", action="store_true", help="exit 1 if the module is out of date")
    args = parser.parse_args(argv)
    text = render(args.spec.name, parse_rules(args.spec.read_text(encoding="utf-8")))
    if args.check:
        if OUTPUT.read_text(encoding="utf-8") != text:
            print(f"{OUTPUT} is out of date", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
