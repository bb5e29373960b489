"""One error tree for pidkit.

Every error raised for bad input is a :class:`PidkitError`, itself a :class:`ValueError`, and names the
input and, where it has one, the 1-based position of the offending character (and, for files, the
1-based line number).  The command line turns any of them into one line on stderr; the web app turns
them into a 4xx JSON body.

>>> err = XarkIdError("invalid character '!'", text="AYvP5WgA-_-_ASNFZ4m!", position=20)
>>> str(err)
"invalid character '!' in 'AYvP5WgA-_-_ASNFZ4m!' at position 20"
>>> isinstance(err, ValueError)
True
>>> print(err.caret())
AYvP5WgA-_-_ASNFZ4m!
                   ^
"""

from __future__ import annotations

__all__ = [
    "ArkError",
    "ConflictError",
    "ExhaustedError",
    "GedcomError",
    "GedcomUidError",
    "LlidError",
    "NoidError",
    "NotFoundError",
    "ParseError",
    "PidkitError",
    "RecordKeyError",
    "StoreError",
    "TidError",
    "TimestampRangeError",
    "XarkIdError",
    "show",
]

_MAX_SHOWN = 120


def show(text: str) -> str:
    """Quote ``text`` for an error message, shortening very long inputs.

    >>> show("abc")
    "'abc'"
    >>> len(show("x" * 1000)) < 150
    True
    """
    if len(text) > _MAX_SHOWN:
        return repr(text[:_MAX_SHOWN]) + f"… ({len(text)} characters)"
    return repr(text)


class PidkitError(ValueError):
    """Base of every pidkit error.

    Attributes: ``message`` (what is wrong), ``text`` (the input, or ``None``), ``position`` (1-based
    character position in ``text``, or ``None``), ``line`` (1-based line number in a file, or ``None``).

    >>> PidkitError("empty input", text="").position is None
    True
    """

    def __init__(
        self,
        message: str,
        *,
        text: str | None = None,
        position: int | None = None,
        line: int | None = None,
    ) -> None:
        self.message = message
        self.text = text
        self.position = position
        self.line = line
        super().__init__(self._render())

    def _render(self) -> str:
        out = self.message
        if self.text is not None:
            out += f" in {show(self.text)}"
        if self.line is not None:
            out += f" on line {self.line}"
        if self.position is not None:
            out += f" at position {self.position}"
        return out

    def caret(self) -> str:
        """The input with a caret under the offending character (or just the input without a position).

        >>> print(ArkError("bad", text="ark:12345/a b", position=12).caret())
        ark:12345/a b
                   ^
        """
        if self.text is None:
            return self.message
        if self.position is None or len(self.text) > _MAX_SHOWN:
            return self.text[:_MAX_SHOWN]
        return f"{self.text}\n{' ' * (self.position - 1)}^"


class TimestampRangeError(PidkitError, OverflowError):
    """A valid id whose embedded time :mod:`datetime` cannot represent (after 9999-12-31T23:59:59Z).

    Also an :class:`OverflowError`, which is what :mod:`datetime` raises and what callers caught before.

    >>> issubclass(TimestampRangeError, OverflowError), issubclass(TimestampRangeError, ValueError)
    (True, True)
    """


class ParseError(PidkitError):
    """Text that is not a valid identifier of the kind asked for."""


class XarkIdError(ParseError):
    """Not a valid XarkId (compact, GUID or hex form)."""


class TidError(ParseError):
    """Not a valid atproto TID."""


class RecordKeyError(ParseError):
    """Not a valid atproto record key, or not valid for a key type."""


class GedcomUidError(ParseError):
    """Not a usable GEDCOM ``_UID``/``UID`` value for the operation asked for."""


class LlidError(ParseError):
    """Input that cannot give a Library.Link resource id (bad pairs, bad Versa Markdown)."""


class ArkError(ParseError):
    """Not a valid ARK (draft-kunze-ark-40)."""


class NoidError(ParseError):
    """Bad NOID template or check zone."""


class GedcomError(ParseError):
    """A GEDCOM file that cannot be read or changed as asked (names the line)."""


class OutputError(PidkitError):
    """A file pidkit was asked to write or edit in place cannot be (not a regular file, …)."""


class StoreError(PidkitError):
    """A store operation that cannot be done (the store itself is consistent)."""


class NotFoundError(StoreError):
    """No such minter, NAAN, binding or key."""


class ConflictError(StoreError):
    """The operation would break a guarantee: rebind a tombstoned ARK, duplicate a minter name …"""


class ExhaustedError(StoreError):
    """A bounded minter has minted every id its template can make."""
