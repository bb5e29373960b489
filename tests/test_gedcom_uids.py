"""GEDCOM UID operations: audit, add-uids, migrate, match."""

from __future__ import annotations

import io
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pidkit.cli.gedcom import match_text
from pidkit.gedcom import GedcomReader, Record, add_uids, audit, match, migrate_bytes, read_bytes
from pidkit.gedcom.sites import UidSite, uid_sites
from pidkit.gedcom_uid import GedcomUid, UidForm

GEDCOM_DIR = Path(__file__).parent / "data" / "gedcom"
ALL_FILES = sorted(GEDCOM_DIR.rglob("*.ged"))
RECORDS_WITH_UID = ("INDI", "FAM", "SOUR", "REPO", "OBJE", "NOTE", "SNOTE", "SUBM")


def _ids(path: Path) -> str:
    return path.relative_to(GEDCOM_DIR).as_posix()


def _apply(data: bytes, op: str = "add", *, events: bool = False, xarkid: bool = False) -> bytes:
    if op == "migrate":
        return migrate_bytes(data)[1]
    reader = read_bytes(data)
    _, records = add_uids(reader, events=events, xarkid=xarkid)
    return reader.bom + b"".join(rec.raw for rec in records)


def _lines(data: bytes, codec: str) -> list[bytes]:
    if codec.startswith("utf-16"):
        return [ln.encode(codec) for ln in re.split(r"(?<=\r\n)|(?<=\n)|(?<=\r)(?!\n)", data.decode(codec))]
    return data.splitlines(keepends=True)


@pytest.mark.parametrize("events", [False, True], ids=["records", "events"])
@pytest.mark.parametrize("path", ALL_FILES, ids=_ids)
def test_add_uids_then_audit_and_only_insertions(path: Path, events: bool) -> None:
    data = path.read_bytes()
    with GedcomReader.open(path) as reader:
        codec, gedcom7 = reader.codec, reader.gedcom7
    out = _apply(data, events=events)
    before = audit(read_bytes(data))
    after = audit(read_bytes(out))
    for tag in RECORDS_WITH_UID:
        assert after.without_uid[tag] == 0, tag
        assert after.records[tag] == before.records[tag]
    # the output minus the added lines is the input, byte for byte
    new_tag = b"UID" if gedcom7 else b"_UID"
    old_lines, new_lines = _lines(data, codec), _lines(out, codec)
    known = set(old_lines)  # (a set: a list's `in` made this quadratic, a minute for royal92.ged)
    added = [ln for ln in new_lines if ln not in known]
    assert all(re.match(rb"[12] " + new_tag + rb" \S+\r?\n?$|\r$", ln.decode(codec).encode()) for ln in added)
    remaining = [ln for ln in new_lines if ln in known]  # every occurrence of every added line taken out
    joined = b"".join(remaining)
    # equal, except that a last line without terminator gets one when a line is added after it
    assert joined == data or (joined.startswith(data) and not data.decode(codec).endswith(("\r", "\n")))
    assert len(new_lines) - len(old_lines) == len(added)


def test_add_uids_keeps_every_existing_uid_untouched() -> None:
    data = (GEDCOM_DIR / "real" / "EnglishTudorRoyalFamily.ged").read_bytes()
    out = _apply(data)
    old = re.findall(rb"\n1 _UID [^\n]*", data)
    new = re.findall(rb"\n1 _UID [^\n]*", out)
    assert len(old) == 268
    assert [x for x in new if x in old] == old  # same values, same order
    assert len(new) == 200 + 347 + 16 + 6 + 1  # FAM, INDI, NOTE, SOUR, SUBM records: one each now


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        # a record whose last line follows a lone CR (in a file of LF lines): the new line still goes last
        (b"0 @I1@ INDI\n1 NAME x\r1 SEX M\n", b"0 @I1@ INDI\n1 NAME x\r1 SEX M\n1 _UID X1\n"),
        (b"0 @I1@ INDI\r\n1 NAME x\r\n1 SEX M\r\n", b"0 @I1@ INDI\r\n1 NAME x\r\n1 SEX M\r\n1 _UID X1\r\n"),
        (b"0 @I1@ INDI\r1 NAME x\n1 SEX M\r", b"0 @I1@ INDI\r1 NAME x\n1 SEX M\r1 _UID X1\r"),
        (b"0 @I1@ INDI\n1 NAME x\n1 SEX M", b"0 @I1@ INDI\n1 NAME x\n1 SEX M\n1 _UID X1\n"),  # no end
        (b"0 @I1@ INDI\n1 NAME x\nnot a line\n", b"0 @I1@ INDI\n1 NAME x\n1 _UID X1\nnot a line\n"),
    ],
    ids=["lone-CR-before", "CRLF", "lone-LF-before", "unterminated", "junk-last"],
)
def test_the_new_uid_line_goes_after_the_records_last_gedcom_line(record: bytes, expected: bytes) -> None:
    head = b"0 HEAD\n1 GEDC\n2 VERS 5.5.1\n"
    reader = read_bytes(head + record)
    _, records = add_uids(reader, new_uid=lambda: "X1")
    assert b"".join(rec.raw for rec in records) == head + expected


def test_new_values_per_version() -> None:
    five = b"0 HEAD\n1 GEDC\n2 VERS 5.5.1\n0 @I1@ INDI\n1 NAME A\n0 TRLR\n"
    out = _apply(five)
    value = re.search(rb"1 _UID (\S+)", out)
    assert value is not None
    assert GedcomUid.parse(value.group(1).decode()).form is UidForm.VALID
    seven = b"0 HEAD\n1 GEDC\n2 VERS 7.0\n0 @I1@ INDI\n1 NAME A\n0 TRLR\n"
    value = re.search(rb"1 UID (\S+)", _apply(seven))
    assert value is not None
    assert uuid.UUID(value.group(1).decode()).version == 4
    assert re.fullmatch(
        rb"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", value.group(1)
    )
    x5 = re.search(rb"1 _UID (\S+)", _apply(five, xarkid=True))
    assert x5 is not None
    assert re.fullmatch(rb"[A-Za-z0-9_-]{20}", x5.group(1))
    x7 = re.search(rb"1 UID (\S+)", _apply(seven, xarkid=True))
    assert x7 is not None
    assert re.fullmatch(rb"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}", x7.group(1))


def test_new_line_placement_and_line_endings() -> None:
    data = b"0 HEAD\r\n0 @I1@ INDI\r\n1 NAME A\r\n1 BIRT\r\n2 DATE 1900\r\n1 NOTE x\r\n2 CONT y\r\n0 TRLR"
    out = _apply(data, events=True)
    lines = out.split(b"\r\n")
    assert lines[:5] == [b"0 HEAD", b"0 @I1@ INDI", b"1 NAME A", b"1 BIRT", b"2 DATE 1900"]
    assert lines[5].startswith(b"2 _UID ")
    assert lines[6:8] == [b"1 NOTE x", b"2 CONT y"]
    assert lines[8].startswith(b"1 _UID ")
    assert lines[9] == b"0 TRLR"


def test_file_ending_without_terminator_gets_one_before_the_new_line() -> None:
    data = b"0 HEAD\r0 @I1@ INDI\r1 NAME A"
    out = _apply(data)
    assert out.startswith(data + b"\r1 _UID ")
    assert b"\n" not in out


def test_7_record_with_old_uid_gets_no_second_identifier() -> None:
    data = b"0 HEAD\n1 GEDC\n2 VERS 7.0\n0 @I1@ INDI\n1 _UID abc\n0 TRLR\n"
    assert _apply(data) == data


def test_audit_real_files() -> None:
    with GedcomReader.open(GEDCOM_DIR / "real" / "EnglishTudorRoyalFamily.ged") as reader:
        report = audit(reader)
    assert report.records["INDI"] == 347
    assert report.with_uid["INDI"] == 268
    assert report.forms == {"valid": 268}
    # 6800C4FC09D7D711BA22444553540000FCA3 stands on @I27@, @I270@ and @I271@
    assert report.duplicate_count == 2
    assert {b.xref for _, b in report.duplicates} == {"@I270@", "@I271@"}
    assert {a.line for a, _ in report.duplicates} == {1244}  # the _UID line of @I27@
    assert not report.ok
    with GedcomReader.open(GEDCOM_DIR / "familysearch" / "maximal70.ged") as reader:
        report = audit(reader)
    assert report.ok
    assert report.level2 == 4
    assert report.tags == {"UID": 18}


def test_audit_forms_tags_levels_and_version_rules() -> None:
    data = (
        b"0 HEAD\n1 GEDC\n2 VERS 7.0\n"
        b"0 @I1@ INDI\n1 UID 161C15D03ECE47968211BBB2E9EE7F4FA5A6\n"
        b"1 BIRT\n2 UID 550e8400-e29b-41d4-a716-446655440000\n"
        b"0 @I2@ INDI\n1 _UID 161C15D03ECE47968211BBB2E9EE7F4F0000\n"
        b"0 @F1@ FAM\n1 UID 161c15d0-3ece-4796-8211-bbb2e9ee7f4f\n"
        b"0 @S1@ SOUR\n1 NAME x\n2 UID 550e8400-e29b-41d4-a716-446655440001\n"
        b"0 TRLR\n"
    )
    report = audit(read_bytes(data))
    assert report.forms == {"valid": 1, "bad-checksum": 1, "uuid": 1}
    assert report.level2_forms == {"uuid": 2}
    assert report.tags == {"UID": 4, "_UID": 1}
    assert report.problem_counts == {"not-uuid-7": 1, "_UID-in-7": 1, "bad-checksum": 1, "no-home-7": 1}
    assert report.duplicate_count == 1  # one identity on I1 and F1 (I2's bad checksum is another one)
    assert report.probable_count == 2  # I2 has the data digits of I1 (and F1) with a bad checksum
    assert [(a.line, b.line) for a, b in report.probable] == [(5, 9), (9, 11)]
    assert report.without_uid["SOUR"] == 1


def test_migrate_renames_uid_tags_where_7_has_a_uid() -> None:
    data = (
        b"0 HEAD\n1 GEDC\n2 VERS 5.5.1\n1 _UID 0000\n"
        b"0 @I1@ INDI\n1 _UID 161C15D03ECE47968211BBB2E9EE7F4FA5A6\n1 BIRT\n2 _UID abc\n1 NAME _UID x\n"
        b"0 @I2@ INDI\n1 _UID 550e8400-e29b-41d4-a716-446655440000\n0 TRLR\n"
    )
    report, out = migrate_bytes(data)
    assert out == (
        b"\xef\xbb\xbf0 HEAD\n1 GEDC\n2 VERS 7.0\n1 _UID 0000\n"
        b"0 @I1@ INDI\n1 UID 161C15D03ECE47968211BBB2E9EE7F4FA5A6\n1 BIRT\n2 UID abc\n1 NAME _UID x\n"
        b"0 @I2@ INDI\n1 UID 550e8400-e29b-41d4-a716-446655440000\n0 TRLR\n"
    )
    assert report.renamed == 3
    assert report.no_home_count == 1  # HEAD
    assert [s.value for s in report.not_uuid] == ["161C15D03ECE47968211BBB2E9EE7F4FA5A6", "abc"]


FILES_7 = [p for p in ALL_FILES if GedcomReader(io.BytesIO(p.read_bytes())).gedcom7]


@pytest.mark.parametrize("path", FILES_7, ids=_ids)
def test_migrate_a_7_file_changes_only_uid_lines(path: Path) -> None:
    data = path.read_bytes()
    out = _apply(data, op="migrate")
    with GedcomReader.open(path) as reader:
        codec = reader.codec
    old_lines, new_lines = _lines(data, codec), _lines(out, codec)
    assert len(old_lines) == len(new_lines)
    for old, new in zip(old_lines, new_lines, strict=True):
        if old != new:
            assert old.decode(codec).replace("_UID", "UID", 1) == new.decode(codec)
    if b"_UID" not in data:
        assert out == data


@pytest.mark.parametrize("path", [p for p in ALL_FILES if p not in FILES_7], ids=_ids)
def test_migrate_keeps_every_uid_value_verbatim(path: Path) -> None:
    # U7: every _UID/UID value survives, all its characters unchanged, in the same order
    def values(data: bytes, tags: tuple[str, ...]) -> list[str]:
        reader = read_bytes(data)
        return [s.value for rec in reader for s, _, _ in uid_sites(rec) if s.tag in tags]

    data = path.read_bytes()
    out = _apply(data, op="migrate")
    assert values(out, ("UID", "_UID")) == values(data, ("UID", "_UID"))
    assert audit(read_bytes(out)).tags.get("_UID", 0) == migrate_bytes(data)[0].no_home_count + len(
        migrate_bytes(data)[0].empty
    )


def test_match_pairs_and_conflicts() -> None:
    a = (
        b"0 HEAD\n0 @I1@ INDI\n1 _UID 161C15D03ECE47968211BBB2E9EE7F4FA5A6\n"
        b"0 @I2@ INDI\n1 _UID AYvP5WgA-_-_ASNFZ4mr\n"
        b"0 @I3@ INDI\n1 _UID T1\n"
        b"0 @I4@ INDI\n1 _UID T2\n1 _UID T3\n"
        b"0 @I5@ INDI\n1 _UID DUP\n0 @I6@ INDI\n1 _UID DUP\n0 TRLR\n"
    )
    b = (
        b"0 HEAD\n1 GEDC\n2 VERS 7.0\n0 @X1@ INDI\n1 UID 161c15d0-3ece-4796-8211-bbb2e9ee7f4f\n"
        b"0 @X2@ INDI\n1 UID 018bcfe5-6800-4fbf-8fbf-0123456789ab\n"
        b"0 @F1@ FAM\n1 UID T1\n"
        b"0 @X4@ INDI\n1 UID T2\n0 @X5@ INDI\n1 UID T3\n0 @X9@ INDI\n1 UID only-b\n0 TRLR\n"
    )
    report = match(read_bytes(a), read_bytes(b))
    pairs = {(x.xref, y.xref) for x, y in report.matches}
    assert pairs == {("@I1@", "@X1@"), ("@I2@", "@X2@"), ("@I4@", "@X4@"), ("@I4@", "@X5@")}
    assert report.conflict_counts == {"type": 1, "same-file-a": 1, "one-to-many": 1}
    assert report.only_b == 1
    assert report.only_a == 1  # DUP
    assert not report.ok


def test_match_file_with_its_migration_and_its_add_uids_output() -> None:
    data = (GEDCOM_DIR / "real" / "bach.ged").read_bytes()
    report = match(read_bytes(data), read_bytes(_apply(data, op="migrate")))
    assert report.match_count == 47
    assert report.ok
    report = match(read_bytes(data), read_bytes(_apply(data)))
    assert report.match_count == 47
    assert report.only_b == 1  # the SUBM got one


def test_reports_are_json_ready() -> None:
    import json

    data = (GEDCOM_DIR / "real" / "basic.ged").read_bytes()
    reader = read_bytes(data)
    assert json.loads(json.dumps(audit(reader).to_json()))["records"]["INDI"] == {
        "total": 5,
        "with_uid": 5,
        "without_uid": 0,
    }
    report, records = add_uids(GedcomReader(io.BytesIO(data)))
    list(records)
    assert (
        json.loads(json.dumps(report.to_json()))["added"] == 2 + 1
    )  # FAM and SUBM (the _PLAC_DEFN records are not asked for)


def test_new_paf_texts_are_gedcom_uid_forms_of_uuid4() -> None:
    out = _apply(b"0 HEAD\n" + b"".join(b"0 @I%d@ INDI\n" % i for i in range(5000)) + b"0 TRLR\n")
    added = {m.decode() for m in re.findall(rb"1 _UID (\S+)", out)}
    assert len(added) == 5000
    texts = added | {*GedcomUid.new_paf_strings(5000)}
    assert len(texts) == 10000
    for text in texts:
        uid = GedcomUid.parse(text)
        data = uid.bytes16
        assert data is not None
        assert text == str(GedcomUid.from_bytes(data))
        as_uuid = uid.to_uuid()
        assert as_uuid is not None
        assert as_uuid.version == 4
        assert as_uuid.variant == uuid.RFC_4122


def test_u1_and_bad_checksum_identities_in_audit_and_match() -> None:
    head = b"0 HEAD\n1 GEDC\n2 VERS 5.5.1\n"
    a = (
        head + b"0 @I1@ INDI\n1 _UID 161C15D03ECE47968211BBB2E9EE7F4FA5A6\n"
        b"0 @I2@ INDI\n1 _UID 161C15D03ECE47968211BBB2E9EE7F4FA5A6 (extra)\n"
        b"0 @I3@ INDI\n1 _UID 045D7A870C633045BE9710119FC387903581\n0 TRLR\n"
    )
    report = audit(read_bytes(a))
    assert report.forms == {"valid": 3}
    assert report.duplicate_count == 1  # U1: I2 repeats I1
    assert [(x.line, y.line) for x, y in report.duplicates] == [(5, 7)]
    b = (
        head + b"0 @X1@ INDI\n1 _UID 161C15D03ECE47968211BBB2E9EE7F4FA5A6 from A\n"
        b"0 @X3@ INDI\n1 _UID 045D7A870C633045BE9710119FC387900000\n0 TRLR\n"
    )
    a_unique = (
        head + b"0 @I1@ INDI\n1 _UID 161C15D03ECE47968211BBB2E9EE7F4FA5A6\n"
        b"0 @I3@ INDI\n1 _UID 045D7A870C633045BE9710119FC387903581\n0 TRLR\n"
    )
    result = match(read_bytes(a_unique), read_bytes(b))
    assert result.match_count == 1
    assert [(x.xref, y.xref) for x, y in result.matches] == [("@I1@", "@X1@")]
    assert result.probable_count == 1  # I3 / X3: same data digits, X3's checksum is bad: not merged
    assert [(x.xref, y.xref) for x, y in result.probable] == [("@I3@", "@X3@")]
    assert result.to_json()["probable_count"] == 1
    assert "probable" in match_text(result)


# -- uid_sites: the byte scan against the parsed lines ----------------------------------------------------


def _sites_from_parsed_lines(rec: Record) -> list[tuple[UidSite, int]]:
    """The plain reading of a record's UID sites, from its parsed lines: the model ``uid_sites`` must give.

    A line's parent is the tag of the most recent line of one level less, unless a line of a still lower
    level came after that one; the structure line is that parent's line (the record's for level 1).
    """
    out = []
    parents: list[tuple[str | None, int]] = []
    for line in rec.lines:
        level = line.level
        if level is None:
            continue
        del parents[level:]
        parents.extend([(None, 0)] * (level - len(parents)))
        if level >= 1 and line.tag in ("_UID", "UID"):
            value = rec.dialect.decode(line.payload) if line.payload is not None else ""
            parent, structure = parents[level - 1]
            if level == 1:
                parent, structure = rec.tag, rec.number
            site = UidSite(rec.tag, rec.xref, rec.number, line.number, level, line.tag, parent, value)
            out.append((site, structure))
            assert rec.lines[line.number - rec.number] is line
        parents.append((line.tag, line.number))
    return out


def _assert_same_sites(data: bytes) -> int:
    count = 0
    for rec in read_bytes(data):
        found = list(uid_sites(rec))
        assert [(site, structure) for site, structure, _ in found] == _sites_from_parsed_lines(rec), rec.data
        for site, _, tag_at in found:
            line = rec.lines[site.line - rec.number]
            assert (line.level, line.tag) == (site.level, site.tag)
            assert rec.data.startswith(site.tag.encode(), tag_at)
            assert rec.data.count(b"\n", 0, tag_at) + rec.data.count(b"\r", 0, tag_at) - rec.data.count(
                b"\r\n", 0, tag_at
            ) == site.line - rec.number
        count += len(found)
    return count


def test_uid_sites_agree_with_the_parsed_lines_on_every_file() -> None:
    total = sum(_assert_same_sites(path.read_bytes()) for path in ALL_FILES)
    assert total > 300  # the real files have hundreds of UIDs


SITE_LINES = st.tuples(
    st.integers(0, 4),
    st.sampled_from(["", " ", "\t", "  "]),  # before the level
    st.sampled_from([" ", "  ", "\t"]),  # between the fields
    st.none() | st.sampled_from(["@I1@", "@x y@"]),
    st.sampled_from(["_UID", "UID", "BIRT", "DEAT", "NAME", "_UIDX", "XUID", "uid", "CONT"]),
    st.none() | st.sampled_from(["", " ", "ABC", " 161C15D03ECE47968211BBB2E9EE7F4FA5A6", "x\ty"]),
    st.sampled_from(["\n", "\r\n", "\r"]),
)


@given(lines=st.lists(SITE_LINES | st.sampled_from([("junk",), ("blank",)]), max_size=25))
@settings(max_examples=300)
def test_uid_sites_agree_with_the_parsed_lines_on_generated_records(lines: list[tuple[Any, ...]]) -> None:
    text = "0 HEAD\n"
    for line in lines:
        if line == ("junk",):
            text += "not a line\n"
        elif line == ("blank",):
            text += "\r\n"
        else:
            level, lead, delim, xref, tag, value, eol = line
            xref_part = f"{xref}{delim}" if xref else ""
            value_part = f" {value}" if value is not None else ""
            text += f"{lead}{level}{delim}{xref_part}{tag}{value_part}{eol}"
    _assert_same_sites(text.encode("utf-8"))
    _assert_same_sites(text.encode("utf-16-le"))


def test_a_uid_after_a_level_jump_has_no_parent() -> None:
    data = b"0 HEAD\n0 @I1@ INDI\n1 BIRT\n2 DATE x\n1 DEAT\n3 _UID A\n2 _UID B\n0 TRLR\n"
    rec = list(read_bytes(data))[1]
    sites = [(s.line, s.parent, structure) for s, structure, _ in uid_sites(rec)]
    assert sites == [(6, None, 0), (7, "DEAT", 5)]


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-8"])
def test_migrate_re_encodes_to_utf_8(codec: str) -> None:
    text = "0 HEAD\r\n1 CHAR UNICODE\r\n0 @I1@ INDI\r\n1 NAME José\r\n"
    text += "1 _UID 161C15D03ECE47968211BBB2E9EE7F4FA5A6\r\n1 BIRT\r\n2 _UID X\r\n0 TRLR"
    out = _apply(text.encode(codec), op="migrate")
    expected = text.replace("_UID", "UID").replace("1 CHAR UNICODE", "1 GEDC\r\n2 VERS 7.0") + "\r\n"
    assert out == b"\xef\xbb\xbf" + expected.encode("utf-8")
