"""The public NAAN registry (issue 16): records, validation, matching, target templates, update, CLI.

Expected target URLs are written out here from the registry's own records (their ``target.url`` and
``test_identifier``), never computed with the functions under test.  Fixtures: ``tests/data/registry/``
(provenance in ``tests/data/README.md``).
"""

from __future__ import annotations

import copy
import functools
import gzip
import hashlib
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pidkit import registry
from pidkit.ark import Ark
from pidkit.registry import Registry, RegistryError
from pidkit.registry.updating import update

DATA = Path(__file__).parent / "data" / "registry"
SMALL = DATA / "small.json"
#: SHA-256 of the source naan_records.json (2024-11-07), as recorded in src/pidkit/registry/data/README.md.
SNAPSHOT_SHA256 = "a4b0242e8f5d93860f0ee73667fbc3bbc56574d142628569a3e4925ccc3886ed"


@functools.cache
def snapshot_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(gzip.decompress(registry.SNAPSHOT.read_bytes()))
    return doc


@functools.cache
def snapshot() -> Registry:
    return registry.load(registry.SNAPSHOT)


def small() -> Registry:
    return registry.load(SMALL)


def small_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(SMALL.read_text(encoding="utf-8"))
    return doc


# --- the shipped snapshot -------------------------------------------------------------------------------


def test_snapshot_is_the_2024_registry_byte_for_byte() -> None:
    raw = gzip.decompress(registry.SNAPSHOT.read_bytes())
    assert hashlib.sha256(raw).hexdigest() == SNAPSHOT_SHA256
    reg = snapshot()
    assert (len(reg.naans()), len(reg) - len(reg.naans()), reg.date) == (1432, 368, "2024-11-07")
    assert (registry.SNAPSHOT.parent / "LICENSE-naan_reg_public").read_text().startswith("MIT License")


def test_every_record_keeps_every_field() -> None:
    source = snapshot_doc()["data"]
    records = list(snapshot())
    assert [r.to_json() for r in records] == source
    bnf = snapshot().naan("12148")
    assert bnf is not None
    assert (bnf.who.name, bnf.who.name_native, bnf.who.acronym) == (
        "National Library of France", "Bibliothèque nationale de France", "BNF",
    )  # fmt: skip
    assert (bnf.na_policy.orgtype, bnf.na_policy.policy, bnf.na_policy.tenure) == ("NP", "NR, OP, CC", "2005")
    assert bnf.na_policy.policy_url == "http://ark.bnf.fr/ark:/12148/bpt6k2102478.policy"
    assert (bnf.where, bnf.when, bnf.purpose, bnf.service_provider) == (
        "http://ark.bnf.fr", "2005-07-17T00:00:00+00:00", "unspecified", None,
    )  # fmt: skip
    tkt = snapshot().shoulder("19156", "tkt42")
    assert tkt is not None and (tkt.naan, tkt.shoulder, tkt.rtype) == ("19156", "tkt42", "PublicNAANShoulder")


def test_unknown_fields_are_kept() -> None:
    doc = small_doc()
    doc["data"][0]["contact_page"] = {"url": "https://example.org/"}
    reg = registry.parse(json.dumps(doc).encode())
    assert reg.naan("12148").to_json()["contact_page"] == {"url": "https://example.org/"}  # type: ignore[union-attr]


# --- every test_identifier resolves to the URL its template gives ---------------------------------------

#: The registry's records with a test_identifier: (test_identifier, target.url of the record, the URL).
TEST_IDENTIFIERS = [
    ("ark:/b7280/d1988w", "https://doi.org/10.7280/${value}", "https://doi.org/10.7280/d1988w"),
    ("ark:/b6071/m3z07d", "https://doi.org/10.6071/${value}", "https://doi.org/10.6071/m3z07d"),
    ("ark:/b6078/d1mw2k", "https://doi.org/10.6078/${value}", "https://doi.org/10.6078/d1mw2k"),
    ("ark:/b5060/d8bc75", "https://doi.org/10.5060/${value}", "https://doi.org/10.5060/d8bc75"),
    ("ark:/b7272/q6ms3qnx", "https://doi.org/10.7272/${value}", "https://doi.org/10.7272/q6ms3qnx"),
    ("ark:/b7291/d1wc74", "https://doi.org/10.7291/${value}", "https://doi.org/10.7291/d1wc74"),
]


def test_the_table_lists_every_test_identifier_of_the_registry() -> None:
    found = {
        (r["test_identifier"], r["target"]["url"]) for r in snapshot_doc()["data"] if r["test_identifier"]
    }
    assert found == {(t, url) for t, url, _ in TEST_IDENTIFIERS}


@pytest.mark.parametrize(("test_identifier", "template", "expected"), TEST_IDENTIFIERS, ids=lambda x: str(x))
def test_test_identifier_resolves(test_identifier: str, template: str, expected: str) -> None:
    m = snapshot().resolve(test_identifier)
    assert m is not None
    assert m.record.test_identifier == test_identifier and m.record.target.url == template
    assert (m.target, m.http_code) == (expected, 302)


# --- matching: the most specific record -----------------------------------------------------------------


def test_every_shoulder_beats_its_naan() -> None:
    reg = snapshot()
    shoulders = [r for r in reg if r.is_shoulder]
    assert len(shoulders) == 368
    for r in shoulders:
        assert reg.naan(r.naan) is not None, r.what
        arks = [
            f"ark:{r.naan}/{r.shoulder}",
            f"ark:/{r.naan}/{r.shoulder}x9q",
            f"ark:{r.naan}/{r.shoulder}7.v1",
        ]
        if "." not in r.shoulder:  # see test_shoulder_with_a_dot
            arks.append(f"ark:{r.naan}/{r.shoulder}7/c1")
        for ark in arks:
            hit = reg.match(ark)
            assert hit is r, (ark, hit)
            m = reg.resolve(ark)
            assert m is not None and m.record is r


def plain_match(reg: Registry, ark: str) -> registry.Record | None:
    """The matching rule written as a scan of every record (to check the indexed one against)."""
    norm = Ark.parse(ark).normalize()
    value = norm.normalized.partition("/")[2]
    shoulders = [r for r in reg if r.is_shoulder and r.naan == norm.naan and value.startswith(r.shoulder)]
    if shoulders:
        return max(shoulders, key=lambda r: len(r.shoulder))
    return next((r for r in reg if not r.is_shoulder and r.naan == norm.naan), None)


_SHOULDERED = [*sorted({r.naan for r in snapshot() if r.is_shoulder}), "12148", "00000"]


@settings(max_examples=300, deadline=None)
@given(
    naan=st.sampled_from(_SHOULDERED),
    head=st.sampled_from([*sorted({r.shoulder for r in snapshot() if r.is_shoulder}), "", "b", "fk"]),
    tail=st.text("bcdfghjkmnpqrstvwxz0123456789./-", max_size=8),
)
def test_indexed_match_equals_a_plain_scan(naan: str, head: str, tail: str) -> None:
    ark = f"ark:{naan}/{head}{tail}"
    try:
        Ark.parse(ark)
        parses = True
    except ValueError:
        parses = False
    assume(parses)  # a tail of only '/', '.' and '-' leaves no Name (a few in a thousand)
    for reg in (snapshot(), small()):
        assert reg.match(ark) is plain_match(reg, ark), ark


def test_shoulder_with_a_dot() -> None:
    # 81986/s6.caida is the one registered shoulder with a '.' (a variant separator, §2.5.2).  Matching is
    # on the normalized form, where §3.2 step 9 moves a variant after the components: s6.caida7/c1 is
    # s6/c1.caida7 and falls back to the NAAN record, whose target template is the shoulder's.
    reg = snapshot()
    assert reg.match("ark:81986/s6.caida7").what == "81986/s6.caida"  # type: ignore[union-attr]
    assert reg.match("ark:81986/s6.caida7/c1") is reg.naan("81986")
    shoulder, naan = reg.shoulder("81986", "s6.caida"), reg.naan("81986")
    assert shoulder is not None and naan is not None and shoulder.target == naan.target


def test_an_ark_outside_every_shoulder_gets_its_naan_record() -> None:
    reg = snapshot()
    assert reg.match("ark:99999/x5") is reg.naan("99999")
    assert reg.match("ark:99999/fk") is reg.naan("99999")  # shorter than the shoulder fk4
    assert reg.match("ark:99999/FK4x5") is reg.naan("99999")  # Names are case-sensitive


@pytest.mark.parametrize(
    ("ark", "what"),
    [
        ("ark:99999/fk4x5", "99999/fk4"),  # both fk and fk4 start it: the longest wins
        ("ark:99999/fk4", "99999/fk4"),
        ("ark:99999/fkx5", "99999/fk"),
        ("ark:99999/fk", "99999/fk"),
        ("ark:99999/f4", "99999"),
        ("ark:/99999/fk-4-x5", "99999/fk4"),  # hyphens are not significant (§3.2 step 6)
    ],
)
def test_longest_shoulder_wins(ark: str, what: str) -> None:
    hit = small().match(ark)
    assert hit is not None and hit.what == what


def test_unregistered_naan() -> None:
    assert snapshot().match("ark:00000/x5") is None
    assert snapshot().resolve("ark:00000/x5") is None
    assert snapshot().naan("00000") is None
    assert registry.naan_line("00000", snapshot()) == "NAAN 00000: not in the public NAAN registry"


def test_b_naans_parse_and_match() -> None:
    # b-NAANs are betanumeric NAANs (draft-kunze-ark-40 §2.3): Ark.parse accepts them, in any case
    # (§3.2 step 4 lowercases the NAAN)
    ark = Ark.parse("ark:/B6071/m3z07d")
    assert ark.normalize().naan == "b6071"
    hit = snapshot().match(ark)
    assert hit is not None and hit.what == "b6071"


class _NoScan(tuple):  # type: ignore[type-arg]
    def __iter__(self) -> Iterator[Any]:
        raise AssertionError("the records were scanned")


def test_lookups_are_dictionary_accesses() -> None:
    reg = registry.load(SMALL)
    reg._records = _NoScan(reg._records)  # any scan of the records now fails
    arks = ("ark:99999/fk4x", "ark:99999/fkx", "ark:99999/x", "ark:/B6071/q")
    assert [reg.match(a).what for a in arks] == ["99999/fk4", "99999/fk", "99999", "b6071"]  # type: ignore[union-attr]
    with pytest.raises(AssertionError, match="scanned"):
        reg.search("x")  # search does scan: the guard works
    m = reg.resolve("ark:19156/tkt42abc")
    assert m is not None and m.record.what == "19156/tkt42"
    assert reg.naan("12148") is not None and reg.shoulder("99999", "fk4") is not None
    # One probe per distinct shoulder length of the NAAN (at most 4 in the registry), then the NAAN.
    assert max(len(v) for v in snapshot()._lengths.values()) == 4


# --- target templates: each variable ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ark", "target", "code"),
    [
        # ${content} (12148: http://ark.bnf.fr/ark:/${content})
        ("ark:/12148/btv1b8449691v/f29", "http://ark.bnf.fr/ark:/12148/btv1b8449691v/f29", 302),
        (
            "https://gallica.bnf.fr/ark:/12148/btv1b-8449691v?info",
            "http://ark.bnf.fr/ark:/12148/btv1b8449691v",
            302,
        ),
        # ${value} (b6071: https://doi.org/10.6071/${value})
        ("ark:b6071/m3z07d", "https://doi.org/10.6071/m3z07d", 302),
        # ${pid} (63274: https://zentralgut.ch/resolver?field=MD_PI_ARK&identifier=${pid})
        (
            "ark:/63274/zgch1abc",
            "https://zentralgut.ch/resolver?field=MD_PI_ARK&identifier=ark:63274/zgch1abc",
            302,
        ),
        # ${suffix} (19156/tkt42: https://vocab.participatory-archives.ch/vocab.participatory-archives.ch/brunner${suffix})
        (
            "ark:19156/tkt42abc",
            "https://vocab.participatory-archives.ch/vocab.participatory-archives.ch/brunnerabc",
            302,
        ),
        (
            "ark:19156/tkt42",
            "https://vocab.participatory-archives.ch/vocab.participatory-archives.ch/brunner",
            302,
        ),
        # 19156's own record, outside the shoulder: https://legacy-n2t.n2t.net/ark:/${content}
        ("ark:19156/x5", "https://legacy-n2t.n2t.net/ark:/19156/x5", 302),
        # the one record with another code
        # (99166/w6: http://socialarchive.iath.virginia.edu/ark:/${content}, 303)
        ("ark:99166/w6zz1", "http://socialarchive.iath.virginia.edu/ark:/99166/w6zz1", 303),
    ],
)
def test_template_variables(ark: str, target: str, code: int) -> None:
    for reg in (snapshot(), small()):  # the fixture's records are copies of the registry's
        m = reg.resolve(ark)
        assert m is not None and (m.target, m.http_code) == (target, code)


def test_fixture_shoulder_template_and_code() -> None:
    # the invented fixture shoulder 99999/fk: https://fk.example.org/${suffix}, 307
    m = small().resolve("ark:99999/fkq2")
    assert m is not None and (m.target, m.http_code, m.record.what) == (
        "https://fk.example.org/q2",
        307,
        "99999/fk",
    )


def test_template_values_of_a_shoulder_match() -> None:
    values = registry.template_values(Ark.parse("ark:/99999/fk4-x5/c1"), "fk4")
    assert values == {
        "pid": "ark:99999/fk4x5/c1",
        "content": "99999/fk4x5/c1",
        "value": "fk4x5/c1",
        "suffix": "x5/c1",
    }


def test_every_template_of_the_registry_uses_known_variables() -> None:
    seen = set()
    for r in snapshot():
        assert registry.check_template(r.target.url) is None, r.what
        for v in registry.VARIABLES:
            if "${" + v + "}" in r.target.url:
                seen.add(v)
    assert seen == set(registry.VARIABLES)


# --- ERC and organization ------------------------------------------------------------------------------


def test_erc_of_a_naan_and_of_a_shoulder() -> None:
    e = registry.erc(snapshot().naan("12148"))  # type: ignore[arg-type]
    assert e == {
        "erc": {
            "who": "National Library of France = Bibliothèque nationale de France (BNF)",
            "what": "NAAN 12148",
            "when": "2005-07-17",
            "where": "http://ark.bnf.fr",
        },
        "erc-support": {
            "who": "National Library of France = Bibliothèque nationale de France (BNF)",
            "what": "NR, OP, CC (organization type NP)",
            "when": "2005",
            "where": "http://ark.bnf.fr/ark:/12148/bpt6k2102478.policy",
        },
    }
    s = registry.erc(snapshot().shoulder("99999", "fk4"))  # type: ignore[arg-type]
    assert s["erc"] == {
        "who": "ARK Test (EZTESTTMP)",
        "what": "shoulder 99999/fk4",
        "when": "2011-06-22",
        "where": "https://n2t.net",
    }
    assert s["erc-support"]["where"] == ""


def test_organization_line() -> None:
    assert registry.naan_line("12148", snapshot()) == "NAAN 12148: Bibliothèque nationale de France (BNF)"
    assert registry.naan_line("13030", snapshot()) == "NAAN 13030: California Digital Library (CDLIB)"


def test_search() -> None:
    reg = snapshot()
    assert [r.what for r in reg.search("BIBLIOTHÈQUE NATIONALE DE FRANCE")] == ["12148"]
    assert "12148" in [r.what for r in reg.search("bnf")]
    assert [r.what for r in reg.search("tkt42")] == ["19156/tkt42"]
    assert len(reg.search("")) == 1800


# --- validation: a malformed record refuses the whole registry -------------------------------------------


def _set(obj: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for key in parents:
        obj = obj[key]
    if value is _DELETE:
        del obj[last]
    else:
        obj[last] = value


_DELETE = object()


@pytest.mark.parametrize(
    ("index", "path", "value", "message"),
    [
        (0, "who.name", _DELETE, "data[0] (what '12148'): who.name: missing"),
        (0, "who.name", "", "data[0] (what '12148'): who.name: empty"),
        (0, "who", "BNF", "data[0] (what '12148'): who.name: expected an object, got the string 'BNF'"),
        (
            0,
            "target.http_code",
            "302",
            "data[0] (what '12148'): target.http_code: expected one of [301, 302, 303, "
            "307, 308], got the string '302'",
        ),
        (0, "target.http_code", 200, "target.http_code: expected one of"),
        (
            0,
            "target.url",
            "http://ark.bnf.fr/${naan}",
            "data[0] (what '12148'): target.url: unknown template variable '${naan}'",
        ),
        (0, "target.url", "ftp://ark.bnf.fr/${content}", "target.url: expected an http:// or https:// URL"),
        (0, "target.url", "http://ark.bnf.fr/$", "target.url: invalid template"),
        (0, "what", "1214A", "data[0] (what '1214A'): what: NAAN must be betanumeric"),
        (0, "what", 12148, "data[0]: what: expected a string, got the number 12148"),
        (0, "when", "17 July 2005", "data[0] (what '12148'): when: expected an ISO 8601 date-time"),
        (0, "rtype", "NAAN", "data[0] (what '12148'): rtype: expected 'PublicNAAN' or 'PublicNAANShoulder'"),
        (0, "purpose", _DELETE, "data[0] (what '12148'): purpose: missing"),
        (0, "na_policy.policy_url", 5, "na_policy.policy_url: expected a string or null, got the number 5"),
        (
            1,
            "test_identifier",
            "ark:/b6078/d1mw2k",
            "data[1] (what 'b6071'): test_identifier: 'ark:/b6078/d1mw2k' is not under NAAN 'b6071'",
        ),
        (1, "test_identifier", "doi:10.6071/m3z07d", "data[1] (what 'b6071'): test_identifier: not an ARK"),
        (
            4,
            "what",
            "19156/tkt4",
            "data[4] (what '19156/tkt4'): what: expected '19156/tkt42' (naan/shoulder)",
        ),
        (
            4,
            "shoulder",
            "tk-t42",
            "data[4] (what '19156/tkt42'): shoulder: 'tk-t42' is not in normalized form",
        ),
        (4, "shoulder", "tkt 42", "shoulder: 'tkt 42' cannot start an ARK Name"),
        (4, "naan", "19 56", "data[4] (what '19156/tkt42'): naan: NAAN must be betanumeric"),
    ],
    ids=lambda x: x if isinstance(x, str) else None,
)
def test_malformed_record_refuses_the_registry(index: int, path: str, value: Any, message: str) -> None:
    doc = small_doc()
    _set(doc["data"][index], path, value)
    with pytest.raises(RegistryError) as info:
        registry.parse(json.dumps(doc).encode(), "new.json")
    assert message in str(info.value)
    assert str(info.value).endswith("in 'new.json'")


def test_a_good_registry_is_accepted() -> None:
    reg = small()
    assert len(reg) == 10 and reg.date == "2024-11-07"


def test_duplicate_record_refused() -> None:
    doc = small_doc()
    doc["data"].append(copy.deepcopy(doc["data"][0]))
    with pytest.raises(RegistryError, match=r"data\[10\] \(what '12148'\): what: duplicate of data\[0\]"):
        registry.parse(json.dumps(doc).encode(), "x")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"data": [}', "not JSON: Expecting value (column 11) in 'x' on line 1"),
        (b"[]", 'expected an object with a "data" array of records'),
        (b'{"data": [1]}', "data[0]: expected an object, got the number 1"),
        (b'{"metadata": [], "data": []}', '"metadata" must be an object'),
        (b"\x1f\x8b\x08\x00junk", "not a valid gzip file"),
        (b'{"data": "\xff"}', "not UTF-8 text"),
    ],
)
def test_unusable_registry_file(data: bytes, message: str) -> None:
    with pytest.raises(RegistryError) as info:
        registry.parse(data, "x")
    assert message in str(info.value)


def test_gzip_registry_is_read() -> None:
    reg = registry.parse(gzip.compress(SMALL.read_bytes()), "small.json.gz")
    assert len(reg) == 10


# --- where the registry in use lives ---------------------------------------------------------------------


def test_default_reads_pidkit_registry_else_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "reg.json"
    monkeypatch.setenv("PIDKIT_REGISTRY", str(target))
    assert registry.default().source == str(registry.SNAPSHOT)  # not there yet: the snapshot
    target.write_bytes(SMALL.read_bytes())
    assert len(registry.default()) == 10 and registry.default().source == str(target)
    m = registry.resolve("ark:99999/fkq2")
    assert m is not None and m.target == "https://fk.example.org/q2"


def test_per_user_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PIDKIT_REGISTRY", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", "/srv/data")
    assert str(registry.active_path()) == "/srv/data/pidkit/naan_records.json"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", "/home/u")
    assert str(registry.active_path()) == "/home/u/.local/share/pidkit/naan_records.json"


def test_update_writes_only_a_valid_registry(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "reg.json"
    new = update(SMALL, target)
    assert len(new) == 10 and target.read_bytes() == SMALL.read_bytes()
    bad = tmp_path / "bad.json"
    doc = small_doc()
    doc["data"][3]["target"]["http_code"] = 200
    bad.write_text(json.dumps(doc))
    with pytest.raises(RegistryError, match=r"data\[3\] \(what '19156'\): target.http_code"):
        update(bad, target)
    assert target.read_bytes() == SMALL.read_bytes()
    assert sorted(p.name for p in target.parent.iterdir()) == ["reg.json"]  # no temp file left


# --- the CLI, through the real entry point ---------------------------------------------------------------


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pidkit", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
        env=env,
    )


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a CLI run whose registry in use is tmp_path/registry.json (absent at first)."""
    env = dict(os.environ)
    env["PIDKIT_REGISTRY"] = str(tmp_path / "registry.json")
    return env


def test_cli_show_naan(cli_env: dict[str, str]) -> None:
    r = run("registry", "show", "12148", env=cli_env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (
        "what: 12148\n"
        "kind: NAAN\n"
        "who: National Library of France\n"
        "who (native): Bibliothèque nationale de France\n"
        "acronym: BNF\n"
        "where: http://ark.bnf.fr\n"
        "when: 2005-07-17T00:00:00+00:00\n"
        "target: http://ark.bnf.fr/ark:/${content}\n"
        "http code: 302\n"
        "orgtype: NP\n"
        "policy: NR, OP, CC\n"
        "tenure: 2005\n"
        "policy url: http://ark.bnf.fr/ark:/12148/bpt6k2102478.policy\n"
        "test identifier: -\n"
        "service provider: -\n"
        "purpose: unspecified\n"
        "shoulders: -\n"
    )


def test_cli_show_shoulder_ark_and_json(cli_env: dict[str, str]) -> None:
    r = run("registry", "show", "19156/tkt42", env=cli_env)
    assert r.returncode == 0, r.stderr
    assert (
        "target: https://vocab.participatory-archives.ch/vocab.participatory-archives.ch/brunner${suffix}\n"
        in r.stdout
    )
    assert "kind: shoulder\n" in r.stdout and "purpose" not in r.stdout
    r = run("registry", "show", "19156", env=cli_env)
    assert r.stdout.endswith("shoulders: tkt42\n")
    r = run("registry", "show", "https://n2t.net/ark:/99999/fk4x5", env=cli_env)
    assert r.stdout.startswith("what: 99999/fk4\n")
    r = run("registry", "show", "b6071", "--json", env=cli_env)
    assert json.loads(r.stdout) == next(x for x in snapshot_doc()["data"] if x["what"] == "b6071")


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["show", "00000"], "pidkit: error: NAAN '00000' is not in the registry\n"),
        (["show", "12148/zz9"], "pidkit: error: shoulder '12148/zz9' is not in the registry\n"),
        (["show", "ark:00000/x5"], "pidkit: error: the NAAN of 'ark:00000/x5' is not in the registry\n"),
        (
            ["show", "ark:12148/a b"],
            "pidkit: error: character ' ' not allowed in an ARK (%-encode it) in "
            "'ark:12148/a b' at position 12\n",
        ),
        (
            ["list", "--search", "no such organisation"],
            "pidkit: error: no registry record matches 'no such organisation'\n",
        ),
    ],
)
def test_cli_errors(cli_env: dict[str, str], args: list[str], line: str) -> None:
    r = run("registry", *args, env=cli_env)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", line)


def test_cli_usage_error(cli_env: dict[str, str]) -> None:
    r = run("registry", env=cli_env)
    assert r.returncode == 2 and "usage:" in r.stderr


def test_cli_list_search(cli_env: dict[str, str]) -> None:
    r = run("registry", "list", "--search", "national library of f", env=cli_env)
    assert (r.returncode, r.stdout) == (0, "12148\tBNF\tNational Library of France\n")
    r = run("registry", "list", "--search", "ezagents", "--json", env=cli_env)
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert lines and all(x["who"]["acronym"] == "EZAGENTS" for x in lines)
    assert [x["what"] for x in lines] == sorted(x["what"] for x in lines)
    r = run("registry", "list", env=cli_env)
    assert len(r.stdout.splitlines()) == 1800


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An http.server on 127.0.0.1 (loopback only) serving tmp_path/www; yields (base URL, directory)."""
    www = tmp_path / "www"
    www.mkdir()
    handler = functools.partial(_Quiet, directory=str(www))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", www
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_cli_update_from_a_file(cli_env: dict[str, str]) -> None:
    target = Path(cli_env["PIDKIT_REGISTRY"])
    r = run("registry", "update", str(SMALL), env=cli_env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (
        f"registry updated: 6 NAANs, 4 shoulders (dated 2024-11-07) from {SMALL} -> {target}\n"
    )
    assert target.read_bytes() == SMALL.read_bytes()
    r = run("registry", "show", "99999/fk", env=cli_env)  # the new registry is the one in use
    assert r.returncode == 0 and "who: pidkit test: shorter shoulder\n" in r.stdout


def test_cli_update_from_a_url(cli_env: dict[str, str], served: tuple[str, Path]) -> None:
    base, www = served
    (www / "naan_records.json.gz").write_bytes(gzip.compress(SMALL.read_bytes()))
    target = Path(cli_env["PIDKIT_REGISTRY"])
    r = run("registry", "update", f"{base}/naan_records.json.gz", env=cli_env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("registry updated: 6 NAANs, 4 shoulders")
    assert registry.load(target).naan("63274") is not None
    r = run("registry", "update", f"{base}/missing.json", env=cli_env)
    assert (r.returncode, r.stderr) == (
        1, f"pidkit: error: cannot fetch the registry: HTTP 404 File not found in '{base}/missing.json'\n",
    )  # fmt: skip


def test_cli_update_is_atomic_and_errors_are_one_line(
    cli_env: dict[str, str], served: tuple[str, Path], tmp_path: Path
) -> None:
    base, www = served
    target = Path(cli_env["PIDKIT_REGISTRY"])
    assert run("registry", "update", str(SMALL), env=cli_env).returncode == 0
    before = target.read_bytes()
    doc = small_doc()
    del doc["data"][8]["who"]["name"]
    (www / "bad.json").write_text(json.dumps(doc))
    (tmp_path / "notjson.json").write_text('{"data": [\n  {"what": "12148",}\n]}')
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/naan_records.json"
    cases = [
        (
            f"{base}/bad.json",
            f"pidkit: error: data[8] (what '99166'): who.name: missing in '{base}/bad.json'\n",
        ),
        (
            str(tmp_path / "nope.json"),
            "pidkit: error: cannot read the registry: No such file or directory in "
            f"'{tmp_path / 'nope.json'}'\n",
        ),
        (
            str(tmp_path / "notjson.json"),
            "pidkit: error: not JSON: Expecting property name enclosed in double "
            f"quotes (column 20) in '{tmp_path / 'notjson.json'}' on line 2\n",
        ),
        (dead, f"pidkit: error: cannot fetch the registry: Connection refused in '{dead}'\n"),
    ]
    for source, line in cases:
        r = run("registry", "update", source, env=cli_env)
        assert (r.returncode, r.stdout, r.stderr) == (1, "", line)
        assert target.read_bytes() == before
    assert sorted(
        p.name for p in target.parent.iterdir() if p.name.startswith((".registry", "registry"))
    ) == ["registry.json"]


# --- inspect names the organization behind any ARK --------------------------------------------------------


def test_inspect_names_the_organization(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pidkit import inspect

    monkeypatch.setenv("PIDKIT_REGISTRY", str(tmp_path / "absent.json"))  # the shipped snapshot
    reading = inspect("https://gallica.bnf.fr/ark:/12148/btv1b8449691v").best
    assert reading is not None and reading.scheme == "ark"
    assert "NAAN 12148: Bibliothèque nationale de France (BNF)" in reading.notes
    reading = inspect("ark:/00000/x5").best
    assert reading is not None and reading.valid
    assert "NAAN 00000: not in the public NAAN registry" in reading.notes


def test_inspect_with_an_unreadable_registry_still_reads_the_ark(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from pidkit import inspect

    broken = tmp_path / "broken.json"
    broken.write_text("{")
    monkeypatch.setenv("PIDKIT_REGISTRY", str(broken))
    reading = inspect("ark:/12148/btv1b8449691v").best
    assert reading is not None and reading.scheme == "ark" and reading.valid
    assert any(n.startswith("NAAN 12148: the NAAN registry cannot be read (not JSON") for n in reading.notes)


def test_cli_inspect_shows_the_organization(cli_env: dict[str, str]) -> None:
    r = run("inspect", "ark:/12148/btv1b8449691v", "ark:/00000/x5", env=cli_env)
    assert r.returncode == 0, r.stderr
    assert "      note: NAAN 12148: Bibliothèque nationale de France (BNF)\n" in r.stdout
    assert "      note: NAAN 00000: not in the public NAAN registry\n" in r.stdout
