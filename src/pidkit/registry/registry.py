"""The registry: every record indexed for lookup by NAAN and by (NAAN, shoulder), and the matching rule.

Matching (:meth:`Registry.match`) is on the ARK's draft-kunze-ark-40 §3.2 normalized form, as N2T's
resolver matches (CDLUC3/resolver ``PidDefinitionCatalog.get``): the shoulder records of the ARK's NAAN
whose shoulder starts the part after ``NAAN/`` (the Name and qualifiers) match, and the longest of them
wins; without one, the NAAN record matches; without that, nothing does.  Lookups are dictionary
accesses: one per distinct shoulder length of that NAAN (at most 4 in the 2024 registry), then one for
the NAAN.

>>> from pidkit.registry import default
>>> reg = default()
>>> reg.match("ark:/99999/fk4x5").what, reg.match("ark:/99999/x5").what, reg.match("ark:/00000/x5")
('99999/fk4', '99999', None)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..ark import Ark
from .records import Record, RegistryError
from .templates import expand, template_values

__all__ = ["Registry", "RegistryMatch", "erc", "naan_line", "organization"]


@dataclass(frozen=True, slots=True)
class RegistryMatch:
    """What the registry says about one ARK: the record matched (the most specific: a shoulder beats
    its NAAN), the ARK (normalized), the ``target`` URL its template gives and the redirect's
    ``http_code``."""

    record: Record
    ark: Ark
    target: str
    http_code: int


class Registry:
    """An immutable set of registry records, indexed.  Build it with :func:`pidkit.registry.parse` or
    :func:`pidkit.registry.load` (which validate); ``metadata`` is the source's ``metadata`` object and
    ``source`` names where it was read from.

    >>> from pidkit.registry import default
    >>> reg = default()
    >>> len(reg), len(reg.naans()), reg.date
    (1800, 1432, '2024-11-07')
    """

    __slots__ = ("_by_naan", "_haystacks", "_lengths", "_records", "_shoulders", "metadata", "source")

    def __init__(self, records: Iterable[Record], metadata: Mapping[str, Any], source: str) -> None:
        self._records = tuple(records)
        self._haystacks: tuple[str, ...] | None = None  # for search, built on first use
        self.metadata = dict(metadata)
        self.source = source
        self._by_naan: dict[str, Record] = {}
        self._shoulders: dict[tuple[str, str], Record] = {}
        lengths: dict[str, set[int]] = {}
        seen: dict[str, int] = {}
        for i, r in enumerate(self._records):
            if r.what in seen:
                raise RegistryError(
                    f"data[{i}] (what {r.what!r}): what: duplicate of data[{seen[r.what]}]", text=source
                )
            seen[r.what] = i
            if r.is_shoulder:
                self._shoulders[(r.naan, r.shoulder)] = r
                lengths.setdefault(r.naan, set()).add(len(r.shoulder))
            else:
                self._by_naan[r.naan] = r
        # Longest first: the first hit is the most specific shoulder.
        self._lengths = {naan: tuple(sorted(ls, reverse=True)) for naan, ls in lengths.items()}

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[Record]:
        return iter(self._records)

    def __repr__(self) -> str:
        return f"<Registry {len(self._by_naan)} NAANs, {len(self._shoulders)} shoulders from {self.source}>"

    @property
    def date(self) -> str | None:
        """The date of the registry (``metadata.updated``, else ``created_date``), ``YYYY-MM-DD``."""
        for key in ("updated", "modified_date", "created_date"):
            value = self.metadata.get(key)
            if isinstance(value, str) and value:
                return value[:10]
        return None

    def naans(self) -> tuple[Record, ...]:
        """Every NAAN record, in registry order."""
        return tuple(self._by_naan.values())

    def naan(self, naan: str) -> Record | None:
        """The record of ``naan`` (as in an ARK: case-insensitive, like §3.2 step 4), or ``None``.

        >>> from pidkit.registry import default
        >>> default().naan("12148").who.acronym
        'BNF'
        """
        return self._by_naan.get(naan.lower())

    def shoulder(self, naan: str, shoulder: str) -> Record | None:
        """The record of the shoulder ``naan/shoulder`` exactly as registered, or ``None``.

        >>> from pidkit.registry import default
        >>> default().shoulder("99999", "fk4").who.name
        'ARK Test'
        """
        return self._shoulders.get((naan.lower(), shoulder))

    def shoulders_of(self, naan: str) -> tuple[Record, ...]:
        """The shoulder records of ``naan``, sorted by shoulder.

        >>> from pidkit.registry import default
        >>> [r.shoulder for r in default().shoulders_of("99999")][:3]
        ['fk3', 'fk4', 'fk8']
        """
        naan = naan.lower()
        return tuple(sorted((r for r in self._shoulders.values() if r.naan == naan), key=lambda r: r.what))

    def match(self, ark: Ark | str) -> Record | None:
        """The most specific record for ``ark`` (see the module docstring), or ``None``.

        >>> from pidkit.registry import default
        >>> default().match("ark:19156/tkt42x").what
        '19156/tkt42'
        """
        norm = _normalized(ark)
        return self._match(norm.naan, norm.normalized.partition("/")[2])

    def _match(self, naan: str, value: str) -> Record | None:
        for length in self._lengths.get(naan, ()):
            if len(value) >= length:
                hit = self._shoulders.get((naan, value[:length]))
                if hit is not None:
                    return hit
        return self._by_naan.get(naan)

    def resolve(self, ark: Ark | str) -> RegistryMatch | None:
        """Where the registry sends ``ark``: the most specific record, its target template filled in
        (:mod:`pidkit.registry.templates`) and its HTTP code; ``None`` if the NAAN is not registered.

        >>> from pidkit.registry import default
        >>> m = default().resolve("ark:/12148/btv1b8449691v/f29")
        >>> m.target, m.http_code, m.record.who.acronym
        ('http://ark.bnf.fr/ark:/12148/btv1b8449691v/f29', 302, 'BNF')
        """
        norm = _normalized(ark)
        record = self._match(norm.naan, norm.normalized.partition("/")[2])
        if record is None:
            return None
        url = expand(record.target.url, template_values(norm, record.shoulder))
        return RegistryMatch(record, norm, url, record.target.http_code)

    def search(self, text: str) -> list[Record]:
        """Records whose ``what`` (NAAN or NAAN/shoulder), name, native name or acronym contains
        ``text`` (case-insensitive), in registry order; every record for an empty ``text``.

        >>> from pidkit.registry import default
        >>> [r.what for r in default().search("bibliothèque nationale de france")]
        ['12148']
        """
        if self._haystacks is None:
            self._haystacks = tuple(_haystack(r) for r in self._records)
        needle = text.casefold()
        return [r for r, hay in zip(self._records, self._haystacks, strict=True) if needle in hay]


def _haystack(r: Record) -> str:
    parts = (r.what, r.who.name, r.who.name_native or "", r.who.acronym or "")
    return "\n".join(parts).casefold()


def _normalized(ark: Ark | str) -> Ark:
    return (Ark.parse(ark) if isinstance(ark, str) else ark).normalize()


def organization(record: Record) -> str:
    """The organization behind a record, as one line: its name in its own language when the registry
    has one (else its name), then its acronym in parentheses.

    >>> from pidkit.registry import default
    >>> organization(default().naan("12148"))
    'Bibliothèque nationale de France (BNF)'
    """
    name = record.who.name_native or record.who.name
    acronym = record.who.acronym
    return f"{name} ({acronym})" if acronym and acronym != name else name


def naan_line(naan: str, registry: Registry) -> str:
    """``inspect``'s line about a NAAN: the organization, or a mark that it is not registered.

    >>> from pidkit.registry import default
    >>> naan_line("12148", default())
    'NAAN 12148: Bibliothèque nationale de France (BNF)'
    >>> naan_line("00000", default())
    'NAAN 00000: not in the public NAAN registry'
    """
    record = registry.naan(naan)
    if record is None:
        return f"NAAN {naan}: not in the public NAAN registry"
    return f"NAAN {naan}: {organization(record)}"


def erc(record: Record) -> dict[str, dict[str, str]]:
    """The ``?info`` record of a NAAN or shoulder: an ``erc`` segment (who runs it, what it is, when it
    was registered, where its service is) and an ``erc-support`` segment (the commitment: who, the
    naming policy, the tenure, the policy statement's URL), each with ``who``/``what``/``when``/``where``
    (draft-kunze-ark-40 §5.3), ``""`` where the registry has nothing.

    >>> from pidkit.registry import default
    >>> e = erc(default().naan("12148"))
    >>> e["erc"]
    {'who': 'National Library of France = Bibliothèque nationale de France (BNF)', 'what': 'NAAN 12148', 'when': '2005-07-17', 'where': 'http://ark.bnf.fr'}
    >>> e["erc-support"]["what"], e["erc-support"]["when"]
    ('NR, OP, CC (organization type NP)', '2005')
    """  # noqa: E501
    who = record.who.name
    if record.who.name_native and record.who.name_native != who:
        who += f" = {record.who.name_native}"
    if record.who.acronym:
        who += f" ({record.who.acronym})"
    what = f"shoulder {record.what}" if record.is_shoulder else f"NAAN {record.naan}"
    policy = record.na_policy
    return {
        "erc": {"who": who, "what": what, "when": record.when[:10], "where": record.where},
        "erc-support": {
            "who": who,
            "what": f"{policy.policy} (organization type {policy.orgtype})" if policy.policy else "",
            "when": policy.tenure,
            "where": policy.policy_url or "",
        },
    }
