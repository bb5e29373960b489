"""ERC records as ANVL text (draft-kunze-ark-40 §5.2 THUMP ``?info`` example, §5.3 "The Electronic
Resource Citation").

An ERC record is ANVL (``label: value`` lines, email-header style).  §5.3: "Care should be taken to
escape structural characters that appear in element names and values, specifically, line terminators
(both newlines and carriage returns) and, in element names, colons".  ANVL escapes with %-encoding, so
``%`` itself is encoded first to keep the escaping reversible.

>>> print(erc_anvl(Binding("ark", "ark:99999/fk4x", "ark:99999/fk4x", "https://e.org/",
...                        erc=Erc(who="Austin, Larry", what="Line 1\\nLine 2"))), end="")
erc:
who: Austin, Larry
what: Line 1%0ALine 2
when: (:unav)
where: ark:99999/fk4x
erc-support:
who: (:unav)
what: (:unav)
when: (:unav)
where: (:unav)
"""

from __future__ import annotations

from typing import Final

from .base import ERC_UNAVAILABLE as UNAVAILABLE
from .base import Binding, Erc

#: §5.3: line terminators are escaped in values (after '%', so the encoding is reversible) …
_VALUE_ESCAPES: Final = str.maketrans({"%": "%25", "\n": "%0A", "\r": "%0D"})
#: … and colons too in element names.
_NAME_ESCAPES: Final = str.maketrans({"%": "%25", "\n": "%0A", "\r": "%0D", ":": "%3A"})


def anvl_value(value: str) -> str:
    """An ANVL value: surrounding whitespace dropped, ``%``, CR and LF %-encoded, ``(:unav)`` if empty.

    >>> anvl_value("a\\r\\nb 100%")
    'a%0D%0Ab 100%25'
    >>> anvl_value("  ")
    '(:unav)'
    """
    value = value.strip()
    return value.translate(_VALUE_ESCAPES) if value else UNAVAILABLE


def anvl_name(name: str) -> str:
    """An ANVL element name with ``%``, CR, LF and ``:`` %-encoded.

    >>> anvl_name("dc:title")
    'dc%3Atitle'
    """
    return name.translate(_NAME_ESCAPES)


def anvl_line(name: str, value: str) -> str:
    """One ``name: value`` line.

    >>> anvl_line("who", "Kunze, John")
    'who: Kunze, John'
    """
    return f"{anvl_name(name)}: {anvl_value(value)}"


def erc_segment(label: str, erc: Erc) -> list[str]:
    """An ERC segment: its label line (``erc:`` / ``erc-support:``) and who/what/when/where.

    >>> erc_segment("erc-support", Erc(who="UNT"))[:2]
    ['erc-support:', 'who: UNT']
    """
    return [f"{anvl_name(label)}:", *(anvl_line(k, v) for k, v in erc.to_dict().items())]


def object_erc(binding: Binding) -> Erc:
    """The object's ERC, with ``where`` defaulting to the id itself (§5.2: "where" is preferably the
    persistent identifier, not a transient redirect target).

    >>> object_erc(Binding("ark", "ark:1/x", "ark:1/x", None)).where
    'ark:1/x'
    """
    e = binding.erc
    return e if e.where.strip() else Erc(who=e.who, what=e.what, when=e.when, where=binding.key)


def erc_anvl(binding: Binding) -> str:
    """The ``?info`` record: ``erc:`` (the object) then ``erc-support:`` (the commitment); a tombstone
    adds ``status`` and ``reason`` lines.  Ends with a newline.

    >>> b = Binding("ark", "ark:1/x", "ark:1/x", None, status="tombstoned", tombstone_reason="gone")
    >>> erc_anvl(b).splitlines()[-2:]
    ['status: tombstoned', 'reason: gone']
    """
    lines = [*erc_segment("erc", object_erc(binding)), *erc_segment("erc-support", binding.support)]
    if binding.is_tombstoned:
        lines.append(anvl_line("status", "tombstoned"))
        lines.append(anvl_line("reason", binding.tombstone_reason or ""))
    return "\n".join(lines) + "\n"
