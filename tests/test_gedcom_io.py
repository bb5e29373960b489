"""GEDCOM reader/writer: byte-exact round trips, encodings, line endings, messy lines, line grammar."""

from __future__ import annotations

import codecs
import io
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pidkit.errors import GedcomError, PidkitError
from pidkit.gedcom import GedcomReader, parse_line, read_bytes, write_records
from pidkit.gedcom.reader import Dialect, Undecodable, escape_at, is_pointer, unescape_at

GEDCOM_DIR = Path(__file__).parent / "data" / "gedcom"
ALL_FILES = sorted(GEDCOM_DIR.rglob("*.ged"))


def _ids(path: Path) -> str:
    return path.relative_to(GEDCOM_DIR).as_posix()


def _roundtrip(data: bytes, chunk_size: int = 1 << 20) -> bytes:
    reader = GedcomReader(io.BytesIO(data), chunk_size=chunk_size)
    return reader.bom + b"".join(rec.raw for rec in reader)


def test_fixtures_present() -> None:
    assert len(ALL_FILES) >= 60


@pytest.mark.parametrize("path", ALL_FILES, ids=_ids)
def test_round_trip_every_file_through_the_writer(path: Path, tmp_path: Path) -> None:
    data = path.read_bytes()
    out = tmp_path / "out.ged"
    with GedcomReader.open(path) as reader:
        write_records(out, reader.bom, reader)
    assert out.read_bytes() == data


@pytest.mark.parametrize("path", ALL_FILES, ids=_ids)
@pytest.mark.parametrize("chunk_size", [1, 3, 64])
def test_round_trip_with_small_chunks_and_line_numbers(path: Path, chunk_size: int) -> None:
    data = path.read_bytes()
    reader = GedcomReader(io.BytesIO(data), chunk_size=chunk_size)
    records = list(reader)
    assert reader.bom + b"".join(line.raw for rec in records for line in rec.lines) == data
    numbers = [line.number for rec in records for line in rec.lines]
    assert numbers == list(range(1, len(numbers) + 1))


VERSIONS = [
    ("gedcom7code/5/char_utf8-1.ged", "5.5.1", "utf-8"),
    ("gedcom7code/5/char_ascii_1.ged", "5.5.1", "ascii"),
    ("gedcom7code/5/char_ascii_2.ged", "5.5.1", "latin-1"),
    ("gedcom7code/5/char_utf16le-1.ged", "5.5.1", "utf-16-le"),
    ("gedcom7code/5/char_utf16le-2.ged", "5.5.1", "utf-16-le"),
    ("gedcom7code/5/char_utf16be-1.ged", "5.5.1", "utf-16-be"),
    ("gedcom7code/5/char_utf16be-2.ged", "5.5.1", "utf-16-be"),
    ("gedcom7code/7/char_utf8-1.ged", "7.0", "utf-8"),
    ("real/royal92.ged", None, "gedcom"),
    ("real/bach.ged", "5.5", "utf-8"),
]


@pytest.mark.parametrize(("name", "version", "codec"), VERSIONS, ids=[v[0] for v in VERSIONS])
def test_version_and_encoding(name: str, version: str | None, codec: str) -> None:
    with GedcomReader.open(GEDCOM_DIR / name) as reader:
        assert reader.version == version
        assert reader.codec == codec


@pytest.mark.parametrize("name", ["char_utf16le-1", "char_utf16le-2", "char_utf16be-1", "char_utf16be-2"])
def test_utf16_fixture_text(name: str) -> None:
    with GedcomReader.open(GEDCOM_DIR / "gedcom7code" / "5" / f"{name}.ged") as reader:
        notes = [rec.text(i) for rec in reader for i, line in enumerate(rec.lines) if line.tag == "NOTE"]
    assert len(notes) == 1
    assert notes[0].endswith(": ¶ ☺ 𒍅")


def _sample(eol: str = "\n") -> str:
    return eol.join(
        [
            "0 HEAD",
            "1 GEDC",
            "2 VERS 5.5.1",
            "1 CHAR UNICODE",
            "0 @I1@ INDI",
            "1 NAME José /Müller/",
            "1 NOTE a@@b 𒍅",
            "0 TRLR",
            "",
        ]
    )


@pytest.mark.parametrize(
    ("codec", "bom"),
    [
        ("utf-16-le", b""),
        ("utf-16-le", codecs.BOM_UTF16_LE),
        ("utf-16-be", b""),
        ("utf-16-be", codecs.BOM_UTF16_BE),
    ],
    ids=["le", "le-bom", "be", "be-bom"],
)
@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_built_utf16_files(codec: str, bom: bytes, eol: str) -> None:
    data = bom + _sample(eol).encode(codec)
    for chunk in (1, 5, 1 << 20):
        assert _roundtrip(data, chunk) == data
    reader = read_bytes(data)
    assert reader.codec == codec
    assert reader.bom == bom
    indi = next(rec for rec in reader if rec.tag == "INDI")
    assert indi.text(1) == "José /Müller/"
    assert indi.text(2) == "a@b 𒍅"


def test_built_ansel_file_with_diacritic() -> None:
    # ANSEL: the combining acute (0xE2) comes before its base letter; 0xE8 is the diaeresis.
    data = b"0 HEAD\r\n1 CHAR ANSEL\r\n0 @I1@ INDI\r\n1 NAME Jos\xe2e /M\xe8uller/\r\n0 TRLR\r\n"
    assert _roundtrip(data) == data
    reader = read_bytes(data)
    assert reader.codec == "gedcom"
    indi = next(rec for rec in reader if rec.tag == "INDI")
    # the codec gives the combining (decomposed) form
    assert unicodedata.normalize("NFC", indi.text(1)) == "José /Müller/"


@pytest.mark.parametrize(
    ("charset", "raw", "text"),
    [("ANSI", b"\x80", "€"), ("IBMPC", b"\x81", "ü"), ("MACINTOSH", b"\x8a", "ä"), ("LATIN1", b"\xe9", "é")],
)
def test_eight_bit_charsets(charset: str, raw: bytes, text: str) -> None:
    data = b"0 HEAD\n1 CHAR " + charset.encode() + b"\n0 @N1@ NOTE x" + raw + b"\n0 TRLR\n"
    assert _roundtrip(data) == data
    note = next(rec for rec in read_bytes(data) if rec.tag == "NOTE")
    assert note.text(0) == "x" + text


def test_cr_only_file_streams_and_keeps_endings() -> None:
    data = _sample("\r").replace("UNICODE", "UTF-8").encode()
    assert b"\n" not in data
    for chunk in (1, 2, 7):
        reader = GedcomReader(io.BytesIO(data), chunk_size=chunk)
        records = list(reader)
        assert [r.tag for r in records] == ["HEAD", "INDI", "HEAD"[:0] or "TRLR"]
        assert {line.eol for r in records for line in r.lines} == {b"\r"}
        assert reader.bom + b"".join(r.raw for r in records) == data


def test_mixed_endings_kept_per_line_with_a_warning() -> None:
    data = b"0 HEAD\r\n1 CHAR UTF-8\n0 @I1@ INDI\r1 NAME A\r\n0 TRLR"
    reader = read_bytes(data)
    records = list(reader)
    assert [line.eol for r in records for line in r.lines] == [b"\r\n", b"\n", b"\r", b"\r\n", b""]
    assert [r.tag for r in records] == ["HEAD", "INDI", "TRLR"]
    assert reader.bom + b"".join(r.raw for r in records) == data
    assert [w.line for w in reader.warnings if w.kind == "mixed-eol"] == [2, 3]


MESSY = (
    b"0 HEAD\n"  # 1
    b"1 CHAR UTF-8\n"  # 2
    b"\n"  # 3 blank
    b"  0 @I1@ INDI\n"  # 4 leading spaces (still a record)
    b"1 NAME John  /Doe/ \n"  # 5 trailing space
    b"1  SEX M\n"  # 6 two delimiters
    b"this is not gedcom\n"  # 7 stray
    b"1 NOTE " + b"x" * 300 + b"\n"  # 8 long (5.5.1: 255)
    b"1 BIRT \n"  # 9 delimiter without value
    b"0 TRLR\n"  # 10
    b"\x1a"  # 11 DOS end-of-file mark
)


def test_messy_lines_are_kept_with_warnings_naming_the_line() -> None:
    reader = read_bytes(MESSY)
    records = list(reader)
    assert reader.bom + b"".join(r.raw for r in records) == MESSY
    assert [r.tag for r in records] == ["HEAD", "INDI", "TRLR"]
    found = {(w.line, w.kind) for w in reader.warnings}
    assert found == {
        (3, "blank-line"),
        (4, "leading-space"),
        (5, "trailing-space"),
        (6, "extra-space"),
        (7, "not-gedcom"),
        (8, "long-line"),
        (9, "trailing-space"),
        (11, "not-gedcom"),
    }
    indi = records[1]
    assert [line.tag for line in indi.lines] == ["INDI", "NAME", "SEX", None, "NOTE", "BIRT"]
    assert indi.lines[1].payload == b"John  /Doe/ "


def test_truncated_utf16_raises_a_gedcom_error() -> None:
    with pytest.raises(GedcomError):
        list(read_bytes(b"\xff\xfe0\x00 \x00H"))


def test_at_escapes_per_version() -> None:
    with GedcomReader.open(GEDCOM_DIR / "gedcom7code" / "5" / "atsign.ged") as reader:
        notes = {rec.xref: rec.text(0) for rec in reader if rec.tag == "NOTE"}
    assert notes["@N03@"] == "@ two leading"
    assert notes["@N05@"] == "doubled @ internal"
    assert notes["@N19@"] == "@ at at front and @ at after CONC and \n@ at after CONT and @ inside CONT too."
    with GedcomReader.open(GEDCOM_DIR / "familysearch" / "escapes.ged") as reader:
        records = list(reader)
    indi = next(rec for rec in records if rec.tag == "INDI")
    snotes = {rec.xref: rec.text(0) for rec in records if rec.tag == "SNOTE"}
    note = next(i for i, line in enumerate(indi.lines) if line.tag == "NOTE")
    assert indi.text(note) == (
        "me@example.com is an example email address.\n"
        "@me and @I are example social media handles.\n"
        "@@@@ has four @ characters where only the first is escaped."
    )
    assert snotes["@N05@"] == "doubled @@ internal has two @ characters, not escaped"


def test_pointer_payload_is_not_unescaped() -> None:
    assert is_pointer("@I1@", gedcom7=True)
    assert is_pointer("@NoTe ref@", gedcom7=False)
    assert not is_pointer("@#DJULIAN@", gedcom7=False)


# -- property tests -------------------------------------------------------------------------------------

TAGS = st.from_regex(r"_?[A-Z][A-Z0-9_]{0,8}", fullmatch=True)
XREFS = st.from_regex(r"@[A-Z0-9_]{1,8}@", fullmatch=True)
VALUES = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\r\n\x00"), max_size=40
)
EOLS = st.sampled_from(["\n", "\r\n", "\r"])


@given(level=st.integers(0, 99), xref=st.none() | XREFS, tag=TAGS, value=st.none() | VALUES, eol=EOLS)
def test_generated_lines_parse_back(
    level: int, xref: str | None, tag: str, value: str | None, eol: str
) -> None:
    text = f"{level} {xref + ' ' if xref else ''}{tag}{' ' + value if value is not None else ''}{eol}"
    line = parse_line(text.encode("utf-8"), 7)
    assert (line.level, line.xref, line.tag, line.eol) == (level, xref, tag, eol.encode())
    assert line.payload == (value.encode("utf-8") if value is not None else None)
    assert line.number == 7


@given(
    lines=st.lists(
        st.tuples(st.integers(0, 3), st.none() | XREFS, TAGS, st.none() | VALUES, EOLS),
        min_size=1,
        max_size=30,
    ),
    codec=st.sampled_from(["utf-8", "utf-16-le", "utf-16-be"]),
    chunk=st.sampled_from([1, 4, 1 << 16]),
)
@settings(max_examples=200)
def test_generated_files_round_trip(
    lines: list[tuple[int, str | None, str, str | None, str]], codec: str, chunk: int
) -> None:
    text = "".join(
        f"{lv} {x + ' ' if x else ''}{t}{' ' + v if v is not None else ''}{e}" for lv, x, t, v, e in lines
    )
    data = ("0 HEAD\n" + text).encode(codec)
    assert _roundtrip(data, chunk) == data


@given(data=st.binary(max_size=400), chunk=st.sampled_from([1, 3, 1 << 16]))
@settings(max_examples=300)
def test_random_bytes_raise_only_pidkit_errors(data: bytes, chunk: int) -> None:
    try:
        reader = GedcomReader(io.BytesIO(data), chunk_size=chunk)
        out = reader.bom + b"".join(rec.raw for rec in reader for _ in [rec.lines])
    except PidkitError:
        return
    assert out == data


@given(text=st.text(max_size=30), gedcom7=st.booleans())
def test_at_escape_round_trip(text: str, gedcom7: bool) -> None:
    assert unescape_at(escape_at(text, gedcom7=gedcom7), gedcom7=gedcom7) == text


def test_crlf_lines_in_a_cr_file_are_one_line_each() -> None:
    # gedcom-1: EOL = %x0D [%x0A] / %x0A — a CR followed by LF is one terminator, even in a CR file.
    data = b"0 HEAD\r1 NOTE a\r\n1 NOTE b\r0 TRLR\r"
    for chunk in (1, 2, 5, 1 << 16):
        reader = GedcomReader(io.BytesIO(data), chunk_size=chunk)
        records = list(reader)
        lines = [line for r in records for line in r.lines]
        assert [line.number for line in lines] == [1, 2, 3, 4]
        assert [line.eol for line in lines] == [b"\r", b"\r\n", b"\r", b"\r"]
        assert reader.lines_read == 4
        assert [r.number for r in records] == [1, 4]
        assert [(w.line, w.kind) for w in reader.warnings] == [(2, "mixed-eol")]
        assert reader.bom + b"".join(r.raw for r in records) == data


@given(
    first=EOLS,
    rest=st.lists(st.tuples(st.sampled_from(["1 NOTE x", "0 @I1@ INDI", "2 DATE 1900"]), EOLS), max_size=40),
    last_eol=st.booleans(),
    chunk=st.sampled_from([1, 2, 3, 7, 1 << 16]),
)
@settings(max_examples=300)
def test_mixed_endings_give_the_right_line_numbers(
    first: str, rest: list[tuple[str, str]], last_eol: bool, chunk: int
) -> None:
    lines = [("0 HEAD", first), *rest, ("0 TRLR", "\n" if last_eol else "")]
    data = "".join(body + eol for body, eol in lines).encode()
    reader = GedcomReader(io.BytesIO(data), chunk_size=chunk)
    records = list(reader)
    read = [line for r in records for line in r.lines]
    assert [(line.number, line.eol) for line in read] == [
        (i, eol.encode()) for i, (_, eol) in enumerate(lines, 1)
    ]
    assert reader.lines_read == len(lines)
    assert {w.kind for w in reader.warnings} <= {"mixed-eol"}
    assert reader.bom + b"".join(r.raw for r in records) == data


V7_HEAD = b"0 HEAD\n1 GEDC\n2 VERS 7.0\n"


def test_gedcom7_leniency_warns_naming_the_line() -> None:
    data = (
        V7_HEAD  # 1-3
        + b"0 @i1@ INDI\n"  # 4 lowercase xref
        + b"1 famc @F1@\n"  # 5 lowercase tag
        + b"1 FAMS @f2@\n"  # 6 lowercase pointer
        + b"1 NOTE a\n"  # 7
        + b"2 CONC b\n"  # 8 CONC is 5.x only
        + b"1 NOTE @x y\n"  # 9 single leading @
        + b"1 NOTE @@ok\n"  # 10 doubled: fine
        + b"1 _EXT @VOID@\n"  # 11 fine
        + b"0 TRLR\n"
    )
    for chunk in (1, 1 << 16):
        reader = GedcomReader(io.BytesIO(data), chunk_size=chunk)
        records = list(reader)
        assert reader.bom + b"".join(r.raw for r in records) == data
        assert [(w.line, w.kind) for w in reader.warnings] == [
            (4, "xref-7"),
            (5, "tag-7"),
            (6, "pointer-7"),
            (8, "conc-7"),
            (9, "at-7"),
        ]
        assert "'@f2@'" in str(reader.warnings[2])
        assert records[1].text(3) == "ab"  # still read (and CONC joined) as 5.x would


def test_the_same_lines_in_a_5x_file_give_no_gedcom7_warnings() -> None:
    data = b"0 HEAD\n1 GEDC\n2 VERS 5.5.1\n0 @i1@ INDI\n1 famc @f1@\n1 NOTE a\n2 CONC b\n0 TRLR\n"
    reader = read_bytes(data)
    list(reader)
    assert reader.warnings == []


@pytest.mark.parametrize("path", ALL_FILES, ids=_ids)
def test_every_fixture_passes_the_gedcom_file_check(path: Path) -> None:
    with GedcomReader.open(path) as reader:
        reader.require_gedcom()


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"", "the file is empty"),
        (codecs.BOM_UTF8, "the file is empty"),
        (b"\n0 HEAD\n0 TRLR\n", "does not start with '0 HEAD' (line 1: '')"),
        (b"HEAD\n0 TRLR\n", "does not start with '0 HEAD' (line 1: 'HEAD')"),
        (b"1 HEAD\n", "does not start with '0 HEAD' (line 1: '1 HEAD')"),
        (b"0 HEADER\n", "does not start with '0 HEAD' (line 1: '0 HEADER')"),
        (b"\x7fELF\x02\x01", "does not start with '0 HEAD' (line 1: '\\x7fELF\\x02\\x01')"),
    ],
)
def test_not_a_gedcom_file(data: bytes, why: str) -> None:
    with pytest.raises(GedcomError, match="^not a GEDCOM file: " + re.escape(why) + "$"):
        read_bytes(data).require_gedcom()


@pytest.mark.parametrize(
    "data",
    [b"0 HEAD", b"0 HEAD\r\n", codecs.BOM_UTF8 + b"0 HEAD\n", "0 HEAD\n".encode("utf-16-le")],
)
def test_gedcom_file_check_accepts(data: bytes) -> None:
    read_bytes(data).require_gedcom()


# constructed (tests/data/README.md): ANSEL with combining diacritics (0xE2 acute, 0xE8 diaeresis) in the
# header and a record; HEAD.CHAR IBM WINDOWS with CP1252 letters (0xE9 é, 0x8C Œ, 0x80 €)
ANSEL_FILE = (GEDCOM_DIR / "constructed" / "ansel-diacritics.ged").read_bytes()
IBM_WINDOWS_FILE = (GEDCOM_DIR / "constructed" / "ibm-windows.ged").read_bytes()


@pytest.mark.parametrize("chunk", [1, 7, 1 << 20])
def test_bytes_are_checked_in_the_declared_encoding(chunk: int) -> None:
    # ANSEL and HEAD.CHAR IBM WINDOWS (CP1252, as other readers take it): no false "not valid utf-8"
    for data, codec, name in (
        (ANSEL_FILE, "gedcom", "René /Müller/"),
        (IBM_WINDOWS_FILE, "cp1252", "René /Œuvre/"),
    ):
        reader = GedcomReader(io.BytesIO(data), chunk_size=chunk)
        records = list(reader)
        assert reader.codec == codec
        assert reader.warnings == []
        assert reader.bom + b"".join(r.raw for r in records) == data
        assert unicodedata.normalize("NFC", records[1].text(1)) == name
    reader = read_bytes(IBM_WINDOWS_FILE)
    assert next(rec for rec in reader if rec.tag == "INDI").text(2) == "€ 10"


def test_bad_bytes_are_named_in_the_declared_encoding() -> None:
    data = IBM_WINDOWS_FILE.replace(b"\x80 10", b"\x81 10")  # 0x81 is not a CP1252 character
    reader = read_bytes(data)
    list(reader)
    assert [str(w) for w in reader.warnings] == [
        "line 7: byte 0x81 at position 8 is not valid cp1252 (kept as is)"
    ]


@pytest.mark.parametrize("chunk", [1, 5, 1 << 20])
@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_an_unpaired_surrogate_of_a_utf_16_file_is_named_in_utf_16(codec: str, chunk: int) -> None:
    # issue: the warning said "byte 0xed at position 9 is not valid utf-8" (the reader's UTF-8 view)
    text = "0 HEAD\n1 CHAR UNICODE\n0 @I1@ INDI\n1 NAME \U0001f600 J\udc00r\n0 TRLR\n"
    data = codecs.BOM_UTF16_LE if codec.endswith("le") else codecs.BOM_UTF16_BE
    data += text.encode(codec, "surrogatepass")
    reader = GedcomReader(io.BytesIO(data), chunk_size=chunk)
    records = list(reader)
    assert reader.codec == codec
    # "1 NAME " 7 units, the pair 2, " J" 2: the lone one starts at byte 23 of the line
    assert [str(w) for w in reader.warnings] == [
        f"line 4: code unit 0xdc00 (an unpaired surrogate) at position 23 is not valid {codec} (kept as is)"
    ]
    assert reader.bom + b"".join(r.raw for r in records) == data  # kept as is, indeed
    line = records[1].lines[1]
    assert line.value(reader.dialect) == "\U0001f600 J\ufffdr"  # one U+FFFD, not one per byte of the view
    assert [b.position for b in line.checked_value(reader.dialect)[1]] == [23]


def test_every_undecodable_piece_of_a_value_is_named() -> None:
    line = parse_line(b"1 NAME J\xe9r\xe2\x82me \xff\n", 6)
    text, found = line.checked_value()
    assert text == "J\ufffdr\ufffdme \ufffd"
    assert [str(b) for b in found] == [
        "byte 0xe9 at position 9 is not valid utf-8",
        "byte sequence 0xe2 0x82 at position 11 is not valid utf-8",  # truncated: one U+FFFD
        "byte 0xff at position 16 is not valid utf-8",
    ]
    assert parse_line(b"1 NAME J\x80r\n").checked_value(Dialect("gedcom", "gedcom"))[1] == (
        Undecodable(9, "byte 0x80", "gedcom"),
    )
    assert parse_line(b"1 NAME Jo\n").checked_value() == ("Jo", ())
    assert parse_line(b"1 BIRT\n").checked_value() == (None, ())


@pytest.mark.parametrize("chunk", [1, 3, 64, 1 << 20])
@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
def test_a_line_longer_than_the_limit_is_an_error_naming_it(chunk: int, eol: bytes) -> None:
    lines = [b"0 HEAD", b"1 GEDC", b"2 VERS 7.0", b"0 @I1@ INDI", b"1 NOTE " + b"x" * 93, b"0 TRLR"]
    data = eol.join(lines) + eol
    for limit in (100, 101, 1000):  # the NOTE line has 100 bytes before its terminator
        reader = GedcomReader(io.BytesIO(data), chunk_size=chunk, max_line_bytes=limit)
        assert reader.bom + b"".join(r.raw for r in reader) == data
    for limit in (99, 50):
        with pytest.raises(GedcomError, match=rf"^line 5 is longer than {limit} bytes$"):
            list(GedcomReader(io.BytesIO(data), chunk_size=chunk, max_line_bytes=limit))
    with pytest.raises(GedcomError, match=r"^line 1 is longer than 5 bytes$"):
        GedcomReader(io.BytesIO(data), chunk_size=chunk, max_line_bytes=5)


@pytest.mark.parametrize("chunk", [1, 64, 1 << 20])
def test_a_line_without_end_stops_at_the_limit(chunk: int) -> None:
    endless = io.BytesIO(b"0 HEAD\n1 NOTE " + b"x" * 5000)
    with pytest.raises(GedcomError, match=r"^line 2 is longer than 1000 bytes$"):
        list(GedcomReader(endless, chunk_size=chunk, max_line_bytes=1000))


def test_the_limit_in_utf16_files() -> None:
    data = "0 HEAD\n1 CHAR UNICODE\n1 NOTE é€xxxxxxxx\n0 TRLR\n".encode("utf-16-le")
    # measured in UTF-8: the NOTE line has 20 bytes before its terminator
    for chunk in (1, 3, 1 << 20):
        reader = GedcomReader(io.BytesIO(data), chunk_size=chunk, max_line_bytes=20)
        assert reader.bom + b"".join(r.raw for r in reader) == data
        with pytest.raises(GedcomError, match=r"^line 3 is longer than 19 bytes$"):
            list(GedcomReader(io.BytesIO(data), chunk_size=chunk, max_line_bytes=19))


def test_the_line_grammar_is_written_once() -> None:
    # every regular expression of pidkit.gedcom is built in grammar.py; UUID text is read by
    # pidkit.codecs.read_uuid_text (no UUID pattern here)
    package = Path(__file__).parents[1] / "src" / "pidkit" / "gedcom"
    for path in sorted(package.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name != "grammar.py":
            assert "re.compile(" not in text, path.name
        assert "{8}-" not in text and "{12}" not in text, path.name


def test_a_utf16_line_that_is_not_gedcom_is_shown_cut_between_characters() -> None:
    """The warning shows the line's first 60 characters; cut as bytes of the UTF-8 view, a character of
    three bytes was split and its decoding failed (a traceback, found by the stress suite's fuzzers)."""
    text = "0 HEAD\r\n" + "x" + "\u0800" * 40 + "\r\n0 TRLR\r\n"  # byte 60 of the view: inside one
    reader = read_bytes(b"\xff\xfe" + text.encode("utf-16-le"))
    list(reader)
    shown = [w for w in reader.warnings if w.kind == "not-gedcom"]
    assert len(shown) == 1 and "\u0800" * 20 in shown[0].message and "\ufffd" not in shown[0].message
