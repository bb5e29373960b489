"""Payloads of GEDCOM 5.x written as GEDCOM 7.0 payloads: dates, ages, languages, media types, file paths.

Each function takes the 5.x text and returns a :class:`Converted`: the 7.0 payload, the text for a
``PHRASE`` beside it when the conversion loses something the original said (``None`` when not), and
whether the result is a valid 7.0 payload.  The rules cite gedcom-2
(``specs/gedcom7/gedcom-2-data-types.md``).

>>> date_7("@#DJULIAN@ 8 MAR 1401/8")
Converted(value='JULIAN 8 MAR 1401', phrase='@#DJULIAN@ 8 MAR 1401/8', ok=True)
>>> age_7("<0Y"), age_7("child")
(Converted(value='< 0y', phrase=None, ok=True), Converted(value='< 8y', phrase='child', ok=True))
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple
from urllib.parse import quote

from .grammar import (
    AGE_5,
    AGE_5_PART,
    AGE_7,
    BC_5,
    BCP47,
    DATE_CALENDAR_WORDS_5,
    DATE_DUAL_5,
    DATE_ESCAPE_5,
    DATE_EXACT_7,
    DATE_INT_5,
    DATE_PHRASE_5,
    DATE_VALUE_7,
    MEDIA_TOKEN,
    URL_DRIVE,
    URL_SCHEME,
)
from .tags import LANGUAGES_551, MEDIA_TYPES_551

__all__ = ["Converted", "age_7", "date_7", "date_exact_7", "file_7", "language_7", "media_type_7"]


class Converted(NamedTuple):
    """A 7.0 payload, the ``PHRASE`` that keeps what it lost (or ``None``), and whether it is valid."""

    value: str
    phrase: str | None
    ok: bool


# -- gedcom-2 "Date" ---------------------------------------------------------------------------------------

# 5.5.1 "DATE_CALENDAR_ESCAPE" → 7.0 calendar names (gedcom-2 "Date": FRENCH_R); 5.5.1's ROMAN and UNKNOWN
# are no 7.0 calendars: extension calendars (gedcom-2 ``calendar = … / extTag``)
_ESCAPES: Final = {
    "DGREGORIAN": "GREGORIAN",
    "DJULIAN": "JULIAN",
    "DHEBREW": "HEBREW",
    "DFRENCH R": "FRENCH_R",
    "DROMAN": "_ROMAN",
    "DUNKNOWN": "_UNKNOWN",
}
_CALENDARS_7: Final = frozenset({"GREGORIAN", "JULIAN", "FRENCH_R", "HEBREW"})


def date_7(text: str) -> Converted:
    """A 5.x ``DATE_VALUE`` as 7.0's ``DateValue``.

    gedcom-2 "Date": calendar escapes ``@#DJULIAN@`` become the calendar names (``JULIAN``, ``FRENCH_R``);
    ``B.C.`` becomes ``BCE``; a dual year ``1401/8`` keeps its first year; 5.5.1's date phrases
    (``INT date (phrase)``, ``(phrase)``) move to ``PHRASE`` ("Versions 5.3 through 5.5.1 allowed phrases
    inside DateValue payloads").  Whatever changed the meaning keeps the original as the ``PHRASE``; a text
    that is no 7.0 date becomes an empty date with the text as its phrase (``ok`` False).

    >>> date_7("abt 1900"), date_7("(in the war)")
    (Converted(value='ABT 1900', phrase=None, ok=True), Converted(value='', phrase='in the war', ok=True))
    >>> date_7("INT 1900 (about then)"), date_7("1401 B.C.").value
    (Converted(value='1900', phrase='about then', ok=True), '1401 BCE')
    >>> date_7("the spring of 1900")
    Converted(value='', phrase='the spring of 1900', ok=False)
    """
    if DATE_VALUE_7.fullmatch(text) and "ROMAN" not in text and "UNKNOWN" not in text and _days_exist(text):
        return Converted(text, None, True)  # already a 7.0 date (most 5.5.1 dates are)
    original = text
    work = " ".join(text.split()).upper()
    m = DATE_INT_5.fullmatch(work)
    if m is not None:
        value = _date_body(m.group(1))
        inner = DATE_INT_5.fullmatch(" ".join(text.split()))
        phrase = inner.group(2) if inner else m.group(2)
        if DATE_DUAL_5.search(m.group(1)):  # the dual year is lost too: the phrase keeps all
            phrase = original
        if value is not None:
            return Converted(value, phrase, True)
        return Converted("", original, False)
    m = DATE_PHRASE_5.fullmatch(" ".join(text.split()))
    if m is not None:
        return Converted("", m.group(1), True)
    value = _date_body(work)
    if value is None:
        return Converted("", original, False)
    return Converted(value, original if DATE_DUAL_5.search(work) else None, True)


def _date_body(work: str) -> str | None:
    """The 7.0 form of an upper-cased 5.x date (no phrase), or ``None`` if it is none."""

    def escape(m: re.Match[str]) -> str:
        name = _ESCAPES.get(m.group(1).strip())
        return "" if name is None else name + " "

    out = DATE_CALENDAR_WORDS_5.sub(r"_\1", DATE_ESCAPE_5.sub(escape, work))
    out = DATE_DUAL_5.sub(r"\1", out)
    out = BC_5.sub(" BCE", out)
    out = " ".join(out.split())
    if DATE_VALUE_7.fullmatch(out) is None or not _days_exist(out):
        return None
    return out


#: gedcom-2 "Date": the months of the Gregorian and Julian calendars and their longest length (a day past
#: it names no day; February is taken at 29 in either calendar).
_MONTH_DAYS: Final = {
    "JAN": 31, "FEB": 29, "MAR": 31, "APR": 30, "MAY": 31, "JUN": 30,
    "JUL": 31, "AUG": 31, "SEP": 30, "OCT": 31, "NOV": 30, "DEC": 31,
}  # fmt: skip
#: gedcom-3 "Calendars": the months of each calendar 7.0 defines (an extension calendar has its own).
_MONTHS: Final[dict[str, frozenset[str]]] = {
    "GREGORIAN": frozenset(_MONTH_DAYS),
    "JULIAN": frozenset(_MONTH_DAYS),
    "FRENCH_R": frozenset(
        {"VEND", "BRUM", "FRIM", "NIVO", "PLUV", "VENT", "GERM", "FLOR", "PRAI", "MESS", "THER", "FRUC"}
        | {"COMP"}
    ),
    "HEBREW": frozenset(
        {"TSH", "CSH", "KSL", "TVT", "SHV", "ADR", "ADS", "NSN", "IYR", "SVN", "TMZ", "AAV", "ELL"}
    ),
}
_DATE_WORDS: Final = frozenset({"BET", "AND", "FROM", "TO", "ABT", "CAL", "EST", "AFT", "BEF"})


def _days_exist(date: str) -> bool:
    """Whether every month of a 7.0 date is one of its calendar's, and every Gregorian or Julian day
    exists (gedcom-2 "Date": ``month`` is a month of the calendar; the calendar is Gregorian unless named).

    >>> _days_exist("31 NOV 1900"), _days_exist("BET 1 JAN 1900 AND 29 FEB 1901"), _days_exist("SPRING 1900")
    (False, True, False)
    >>> _days_exist("HEBREW 1 TSH 5000"), _days_exist("_ROMAN 3 _MONTH 88")
    (True, True)
    """
    calendar, start = "GREGORIAN", True  # start: where a date (and its calendar) may begin
    tokens = date.split()
    for i, token in enumerate(tokens):
        if token in _DATE_WORDS:
            calendar, start = "GREGORIAN", True
            continue
        if start and (token in _MONTHS or token[0] == "_"):
            calendar, start = token, False
            continue
        start = False
        months = _MONTHS.get(calendar)
        if token.isdigit() or token in ("BCE",) or token[0] == "_" or months is None:
            continue  # a day, a year, an epoch, or an extension calendar's month
        if token not in months:
            return False
        day = tokens[i - 1] if i else ""
        if calendar in ("GREGORIAN", "JULIAN") and day.isdigit() and not 1 <= int(day) <= _MONTH_DAYS[token]:
            return False
    return True


def date_exact_7(text: str) -> Converted:
    """A 5.x ``DATE_EXACT`` (``CHAN.DATE``, ``HEAD.DATE``) as 7.0's ``DateExact`` (no phrase possible).

    >>> date_exact_7("25 may 2021"), date_exact_7("2021").ok
    (Converted(value='25 MAY 2021', phrase=None, ok=True), False)
    """
    value = " ".join(text.split()).upper()
    return Converted(value, None, DATE_EXACT_7.fullmatch(value) is not None and _days_exist(value))


# -- gedcom-2 "Age" ----------------------------------------------------------------------------------------

_AGE_WORDS: Final = {"CHILD": "< 8y", "INFANT": "< 1y", "STILLBORN": "0y"}
_UNITS: Final = "ymwd"


def age_7(text: str) -> Converted:
    """A 5.x ``AGE_AT_EVENT`` as 7.0's ``Age``.

    gedcom-2 "Age": "Versions 5.5 and 5.5.1 allowed a few specific phrases inside Age payloads": ``CHILD``
    is ``< 8y``, ``INFANT`` ``< 1y``, ``STILLBORN`` ``0y``, each keeping the word as ``PHRASE``.  Units are
    lower case, in the order years, months, weeks, days, separated by a space, and a bound is followed by a
    space; a number without a unit is years (as 5.5 programs wrote it).  Anything else: an empty age and
    the text as phrase.

    >>> age_7("> 3Y 2M"), age_7("11m99y").value, age_7("> 99").value, age_7("about 3").ok
    (Converted(value='> 3y 2m', phrase=None, ok=True), '99y 11m', '> 99y', False)
    """
    stripped = text.strip()
    word = _AGE_WORDS.get(stripped.upper())
    if word is not None:
        return Converted(word, stripped, True)
    m = AGE_5.fullmatch(stripped)
    if m is not None:
        parts = AGE_5_PART.findall(m.group(2).lower())
        units = [u or "y" for _, u in parts]
        if len(set(units)) == len(units):
            ordered = sorted(zip(units, (n for n, _ in parts), strict=True), key=lambda p: _UNITS.index(p[0]))
            value = " ".join(str(int(n)) + u for u, n in ordered)
            if m.group(1):
                value = f"{m.group(1)} {value}"
            if AGE_7.fullmatch(value):
                return Converted(value, None, True)
    return Converted("", text, False)


# -- gedcom-2 "Language", "Media Type", "File Path" --------------------------------------------------------

def language_7(text: str) -> Converted:
    """A 5.5.1 language name as a BCP 47 tag; an unknown name is ``und`` (undetermined), not ok.

    >>> language_7("English"), language_7("Hmong")
    (Converted(value='en', phrase=None, ok=True), Converted(value='und', phrase='Hmong', ok=False))
    """
    stripped = text.strip()
    tag = LANGUAGES_551.get(stripped.upper())
    if tag is not None:
        return Converted(tag, None, True)
    if BCP47.fullmatch(stripped):  # already a language tag
        return Converted(stripped, None, True)
    return Converted("und", stripped, False)


def media_type_7(text: str) -> Converted:
    """A 5.5.1 multimedia format (``jpg``) as a media type (``image/jpeg``); a media type stays.

    >>> media_type_7("JPG").value, media_type_7("mp3").value, media_type_7("image/png").value
    ('image/jpeg', 'application/x-mp3', 'image/png')
    """
    stripped = text.strip()
    if "/" in stripped:
        return Converted(stripped, None, True)
    key = stripped.lower()
    known = MEDIA_TYPES_551.get(key)
    if known is not None:
        return Converted(known, None, True)
    subtype = MEDIA_TOKEN.sub("-", key) or "unknown"
    return Converted(f"application/x-{subtype}", None, True)


def file_7(text: str) -> Converted:
    """A 5.5.1 file name as 7.0's ``FilePath`` (a URL reference, gedcom-2 "File Path").

    A URL with a scheme stays; a Windows or Unix path gets forward slashes, absolute paths become
    ``file:`` URLs, and characters a URL path cannot hold are percent-encoded.

    >>> file_7(r"c:\\windows\\x y.jpg").value, file_7("/unix/abs").value, file_7("https://a.b/c?d").value
    ('file:///c:/windows/x%20y.jpg', 'file:///unix/abs', 'https://a.b/c?d')
    """
    if URL_SCHEME.match(text):
        return Converted(text, None, True)
    path = text.replace("\\", "/")
    if URL_DRIVE.match(text):
        return Converted("file:///" + path[:2] + quote(path[2:], safe="/"), None, True)
    if path.startswith("//"):
        return Converted("file:" + quote(path, safe="/"), None, True)
    if path.startswith("/"):
        return Converted("file://" + quote(path, safe="/"), None, True)
    return Converted(quote(path, safe="/"), None, True)
