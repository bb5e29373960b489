"""The GEDCOM work of the C helper (issue 18): ``pidkit._speedups.gedcom_scan``, the reader's fast line
check and record cutter, against the grammar's regular expressions
(:func:`pidkit.gedcom.grammar.record_scanner` with ``compiled=False``), and
``pidkit._speedups.paf_strings``, new ``_UID`` values, against the Python code
(:func:`pidkit.gedcom_uid._paf_strings`).

Each pair is compared on the same input: generated lines built from the pieces where the grammar has
its edges (levels, xrefs, tags of either case, ``CONC``, ``@`` values, the 240-byte value limit of 5.x,
every terminator in every file terminator's mode), a window from every line start of the GEDCOM files in
``tests/data/gedcom``, and whole files read by :class:`~pidkit.gedcom.reader.GedcomReader` both ways.
The C helper not being built fails these tests under CI (``CI=true``) and skips them elsewhere, as
``tests/test_xarkid_speedups.py`` does.
"""

from __future__ import annotations

import functools
import importlib
import os
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pidkit.gedcom import reader as reader_module
from pidkit.gedcom.grammar import Scan, record_scanner
from pidkit.gedcom.reader import GedcomReader, Record
from pidkit.gedcom_uid import GedcomUid, UidForm, _paf_strings, paf_checksum

NOT_BUILT = "pidkit._speedups is not built (it needs a C compiler and the Python headers at install)"
GEDCOM_FILES = sorted((Path(__file__).parent / "data" / "gedcom").rglob("*.ged"))
EOLS = (b"\n", b"\r\n", b"\r")
WINDOW = 2000  # bytes from a line start: several lines of any real file


def _compiled() -> ModuleType | None:
    try:
        return importlib.import_module("pidkit._speedups")
    except ImportError:
        return None


C = _compiled()
pytestmark = pytest.mark.skipif(C is None and not os.environ.get("CI"), reason=NOT_BUILT)


def _both(eol: bytes, gedcom7: bool, data: bytes, pos: int) -> tuple[Scan, Scan]:
    assert C is not None, NOT_BUILT
    regex = record_scanner(eol, gedcom7=gedcom7, compiled=False)(data, pos)
    return C.gedcom_scan(gedcom7, eol, data, pos), regex


def test_the_scanner_is_the_helper_when_it_is_built() -> None:
    assert C is not None, NOT_BUILT
    scan = record_scanner(b"\n", gedcom7=False)
    assert isinstance(scan, functools.partial) and scan.func is C.gedcom_scan


# The pieces a generated line is made of: where the grammar decides something.
LEVELS = st.sampled_from([b"0", b"1", b"2", b"9", b"10", b"01", b"00", b"", b" 1", b"1\t", b"a"])
XREFS = st.sampled_from(
    [b"", b"@I1@ ", b"@VOID@ ", b"@i1@ ", b"@N 1@ ", b"@@ ", b"@I1@", b"@I1 ", b"@I#1@ ", b"@I\r1@ ",
     b"@I\n1@ ", b"@I1@  ", b"@I1@\t"]
)
TAGS = st.sampled_from(
    [b"INDI", b"NAME", b"_UID", b"_", b"_x", b"Name", b"name", b"CONC", b"CONT", b"CONCX", b"CONCx", b"CONC_",
     b"CON", b"N4", b"4N", b"", b"A-B", b"TAG\t"]
)
VALUES = st.one_of(
    st.sampled_from(
        [b"", b" ", b"  ", b" x", b" @I1@", b" @VOID@", b" @i1@", b" @@x", b" @", b" @#DJULIAN@ 1 JAN",
         b" @I1@ x", b" a@b", b"\tx", b" \xc3\xa9", b" \x00", b" \r", b" x\rx", b"x"]
    ),
    st.integers(min_value=235, max_value=245).map(lambda n: b" " + b"v" * (n - 1)),  # the 240-byte limit
    st.binary(max_size=12).map(lambda b: b" " + b),
)
TERMINATORS = st.sampled_from([b"\n", b"\r\n", b"\r", b"\n\r", b"", b"\r\r\n"])
LINE = st.tuples(LEVELS, XREFS, TAGS, VALUES, TERMINATORS).map(
    lambda p: p[0] + (b" " if p[0] and not p[0].endswith(b"\t") else b"") + b"".join(p[1:])
)


@settings(max_examples=3000, deadline=None)
@given(
    lines=st.lists(LINE, max_size=6),
    eol=st.sampled_from(EOLS),
    gedcom7=st.booleans(),
    skip=st.integers(0, 6),
    offset=st.sampled_from([0, 0, 0, 0, 1, 2]),  # mostly a line start, sometimes within a line
)
def test_the_helper_agrees_with_the_grammar_on_generated_lines(
    lines: list[bytes], eol: bytes, gedcom7: bool, skip: int, offset: int
) -> None:
    data = b"".join(lines)
    pos = min(len(b"".join(lines[:skip])) + offset, len(data))
    c_scan, regex_scan = _both(eol, gedcom7, data, pos)
    assert c_scan == regex_scan, (data, pos, eol, gedcom7)


@pytest.mark.parametrize("gedcom7", [False, True], ids=["5", "7"])
@pytest.mark.parametrize("eol", EOLS, ids=["LF", "CRLF", "CR"])
@pytest.mark.parametrize("length", [239, 240, 241])
def test_the_5x_value_limit_is_the_grammars(eol: bytes, gedcom7: bool, length: int) -> None:
    long_tag = b"1 NOTE" + b"x" * length + b" " + eol  # a tag of length + 4 characters, an empty value
    short = b"1 NOTE " + b"y" * (length - 1) + eol  # after the tag: the space and length - 1 bytes
    for text in (long_tag, short, short + long_tag, b"0 @N1@ NOTE" + b" z" * (length // 2) + eol):
        c_scan, regex_scan = _both(eol, gedcom7, text, 0)
        assert c_scan == regex_scan, (text, eol, gedcom7)
    assert _both(eol, False, short, 0)[0][:2] == ((len(short), 1) if length <= 240 else (0, 0))


@pytest.mark.parametrize("path", GEDCOM_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_helper_agrees_with_the_grammar_at_every_line_of_the_real_files(path: Path) -> None:
    data = path.read_bytes()
    starts = [0] + [i + 1 for i, byte in enumerate(data) if byte in b"\r\n"]
    for eol in EOLS:
        for gedcom7 in (False, True):
            check = record_scanner(eol, gedcom7=gedcom7, compiled=False)
            assert C is not None, NOT_BUILT
            # a window from each line start (the whole rest of the file would make this quadratic)
            windows = [data[pos : pos + WINDOW] for pos in starts]
            disagree = [w for w in windows if C.gedcom_scan(gedcom7, eol, w, 0) != check(w, 0)]
            assert not disagree, (eol, gedcom7, disagree[:5])


def _read(path: Path, chunk_size: int) -> tuple[list[tuple[bytes, int, str | None]], list[object], int]:
    with path.open("rb") as fh, GedcomReader(fh, name=path.name, chunk_size=chunk_size) as reader:
        read = list(reader)
        records = [(rec.data, rec.number, rec.tag) for rec in read]
        # the tag the scan read is the one the record's own bytes give
        assert [tag for _, _, tag in records] == [Record(d, n, reader.dialect).tag for d, n, _ in records]
        # a record said to be well-formed is a run of lines the grammar accepts, whole
        check = record_scanner(reader.default_eol, gedcom7=reader.gedcom7, compiled=False)
        assert all(check(rec.data, 0)[0] == len(rec.data) for rec in read if rec.well_formed)
        return records, list(reader.warnings), reader.lines_read


@pytest.mark.parametrize("path", GEDCOM_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_reader_reads_every_file_alike_with_and_without_the_helper(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled = [_read(path, size) for size in (1 << 20, 97)]
    monkeypatch.setattr(reader_module, "record_scanner", functools.partial(record_scanner, compiled=False))
    plain = [_read(path, size) for size in (1 << 20, 97)]
    assert compiled == plain
    assert compiled[0][0], path  # records were read


def test_records_cut_from_one_run_are_marked_well_formed() -> None:
    path = Path(__file__).parent / "data" / "gedcom" / "real" / "royal92.ged"
    with GedcomReader.open(path) as reader:
        read = list(reader)
    # royal92.ged's lines all pass the check (a 5.5 file of short lines): every record is cut from one run
    # but the last, which is not followed by a level-0 line and so is finished when the file ends
    assert [rec.tag for rec in read if not rec.well_formed] == ["TRLR"]
    assert not Record(read[1].data, 1, reader.dialect).well_formed  # only the reader says so


def test_the_scanner_refuses_what_is_not_a_terminator() -> None:
    with pytest.raises(ValueError, match="CR-LF, CR or LF"):
        record_scanner(b"\n\r", gedcom7=False)
    assert C is not None, NOT_BUILT
    with pytest.raises(ValueError, match="eol must be"):
        C.gedcom_scan(False, b";", b"0 HEAD;", 0)
    with pytest.raises(ValueError, match="outside the data"):
        C.gedcom_scan(False, b"\n", b"0 HEAD\n", 8)


def test_the_scan_cuts_records_at_level_0_lines_and_counts_lines() -> None:
    data = b"1 NOTE x\r\n0 HEAD\r\n1 CHAR UTF-8\r\n0 @I1@ INDI\r\n0 TRLR\r\n1 b@d\r\n0 X\r\n"
    # lines of 10, 8, 14, 13 and 8 bytes, then one the grammar refuses (a tag followed by "@")
    for compiled in (True, False):
        scan = record_scanner(b"\r\n", gedcom7=False, compiled=compiled)
        assert scan(data, 0) == (53, 5, [10, 32, 45], [1, 3, 4], ["HEAD", "INDI", "TRLR"])
        assert scan(data, 10) == (53, 4, [32, 45], [2, 3], ["INDI", "TRLR"])
        assert scan(data, 53) == (53, 0, [], [], [])


# -- new _UID values ------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(data=st.binary(min_size=0, max_size=16 * 40).map(lambda b: b[: len(b) - len(b) % 16]))
def test_paf_strings_in_c_are_the_python_codes(data: bytes) -> None:
    assert C is not None, NOT_BUILT
    assert C.paf_strings(data) == _paf_strings(data)


def test_paf_strings_are_valid_uuid_v4_values_with_the_u2_checksum() -> None:
    # U2 by hand for the all-zero block: bytes 7 and 9 become 0x40 and 0x80 (version 4, variant 10);
    # check 1 = 0x40 + 0x80 = 0xC0, check 2 = (17 - 7) * 0x40 + (17 - 9) * 0x80 = 1664 = 0x80 (mod 256).
    assert _paf_strings(bytes(16)) == ["00000000000040008000000000000000C080"]
    assert C is not None, NOT_BUILT
    assert C.paf_strings(bytes(16)) == ["00000000000040008000000000000000C080"]
    values = GedcomUid.new_paf_strings(50)
    assert len(set(values)) == 50
    for value in values:
        uid = GedcomUid.parse(value)
        as_uuid = uid.to_uuid()
        assert uid.form is UidForm.VALID and as_uuid is not None and as_uuid.version == 4
        assert value[32:] == paf_checksum(bytes.fromhex(value[:32]))


def test_paf_strings_refuses_a_partial_block() -> None:
    assert C is not None, NOT_BUILT
    with pytest.raises(ValueError, match="multiple of 16"):
        C.paf_strings(bytes(15))
