# ruff: noqa: S603
"""Bad input, every parser: hypothesis and (where it installs) atheris over every text entry point of
the library, and hypothesis over the HTTP routes.  Library: only :mod:`pidkit.errors` types come out;
server: never a 5xx, and every redirect goes to a bound http(s) target or to the N2T fallback."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pidkit.store import Erc, open_store
from pidkit.web import Settings, create_app
from stress import _report, targets
from stress.conftest import SHORT

EXAMPLES = 300 if SHORT else 2000
ATHERIS_SECONDS = 4 if SHORT else 12
HERE = Path(__file__).resolve().parent

#: Characters that matter to some parser: ARK structure, percent escapes, GEDCOM syntax, Versa
#: Markdown, base64url / base32 alphabets, whitespace, controls, and a few non-ASCII.
SPECIAL = (
    "%/.-@:_~*#[]<>\"'`\\ \t\r\n\x00\x0b\x85\u2028ark:ARK 0123456789abcdefABCDEF{}?&=+,;!$é€𝄞\ufeff\ud800"
)
fuzz_text = st.one_of(
    st.text(alphabet=st.sampled_from(SPECIAL), max_size=300),
    st.text(max_size=300),
    st.builds(
        lambda a, b: "ark:" + a + "/" + b,
        st.text(alphabet="0123456789bcdfghjkmnpqrstvwxzAB-", max_size=8),
        st.text(alphabet=st.sampled_from(SPECIAL + "bcdfghjk"), max_size=120),
    ),
)
gedcom_line = st.builds(
    lambda lvl, xref, tag, val, eol: f"{lvl}{xref}{tag}{val}{eol}".encode("utf-8", "surrogatepass"),
    st.sampled_from(["0 ", "1 ", "2 ", " 1 ", "99 ", "x ", "", "01 "]),
    st.sampled_from(["", "@I1@ ", "@@ ", "@ ", "@I1@", "@#DGREG@ "]),
    st.sampled_from(
        [
            "HEAD",
            "TRLR",
            "INDI",
            "CONC ",
            "CONT ",
            "_UID ",
            "UID ",
            "NAME ",
            "CHAR UTF-8",
            "GEDC",
            "VERS 7.0",
            "",
        ]
    ),
    st.text(max_size=40),
    st.sampled_from(["\n", "\r\n", "\r", "", "\n\n"]),
)
gedcom_file = st.one_of(
    st.binary(max_size=600),
    st.lists(gedcom_line, max_size=30).map(lambda ls: b"0 HEAD\n" + b"".join(ls) + b"0 TRLR\n"),
    st.tuples(
        st.sampled_from([b"", b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"]), st.lists(gedcom_line, max_size=20)
    ).map(lambda t: t[0] + b"".join(t[1])),
)
versa_doc = st.lists(
    st.one_of(
        st.builds(
            lambda d, s: "  " * d + "* " + s,
            st.integers(0, 12),
            st.text(alphabet=st.sampled_from(SPECIAL), max_size=30),
        ),
        st.builds(
            lambda h, s: h + " " + s,
            st.sampled_from(["#", "##", "###", "# @docheader", "<!--"]),
            st.text(max_size=30),
        ),
        st.text(max_size=40),
    ),
    max_size=25,
).map("\n".join)

TEXT_NAMES = sorted(targets.TEXT_TARGETS)
BYTES_NAMES = sorted(targets.BYTES_TARGETS)


@pytest.mark.parametrize("name", TEXT_NAMES)
def test_hypothesis_text_parsers_raise_only_pidkit_errors(name: str, figures: _report.Figures) -> None:
    tried = 0
    fn = targets.TEXT_TARGETS[name]
    strategy = versa_doc | fuzz_text if name == "llid.parse_versa" else fuzz_text

    @settings(
        max_examples=EXAMPLES, deadline=1000, database=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(strategy)
    def check(text: str) -> None:
        nonlocal tried
        tried += 1
        with contextlib.suppress(*targets.ALLOWED):
            fn(text)

    start = time.perf_counter()
    check()
    figures.add(
        "fuzz",
        f"{name} (hypothesis)",
        {"inputs tried": tried, "seconds": time.perf_counter() - start, "outcome": "only pidkit.errors"},
    )


@pytest.mark.parametrize("name", BYTES_NAMES)
def test_hypothesis_gedcom_reader_raises_only_pidkit_errors(name: str, figures: _report.Figures) -> None:
    tried = 0
    fn = targets.BYTES_TARGETS[name]

    @settings(
        max_examples=EXAMPLES, deadline=1000, database=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(gedcom_file)
    def check(data: bytes) -> None:
        nonlocal tried
        tried += 1
        with contextlib.suppress(*targets.ALLOWED):
            fn(data)

    start = time.perf_counter()
    check()
    figures.add(
        "fuzz",
        f"{name} (hypothesis)",
        {"inputs tried": tried, "seconds": time.perf_counter() - start, "outcome": "only pidkit.errors"},
    )


HAVE_ATHERIS = importlib.util.find_spec("atheris") is not None
_DONE = re.compile(rb"Done (\d+) runs in (\d+) second")


@pytest.mark.parametrize("name", TEXT_NAMES + BYTES_NAMES)
def test_atheris_coverage_guided(name: str, figures: _report.Figures, tmp_path: Path) -> None:
    if not HAVE_ATHERIS:
        figures.add("fuzz", f"{name} (atheris)", {"outcome": "atheris not installed: hypothesis only"})
        pytest.skip("atheris did not install here (pip install atheris): hypothesis only")
    proc = subprocess.run(
        [
            sys.executable,
            str(HERE / "atheris_fuzz.py"),
            name,
            f"-max_total_time={ATHERIS_SECONDS}",
            "-max_len=4096",
            "-rss_limit_mb=1024",
            "-timeout=5",
            f"-artifact_prefix={tmp_path}/",
        ],
        capture_output=True,
        timeout=ATHERIS_SECONDS + 120,
        check=False,
        cwd=tmp_path,
    )
    out = proc.stdout + proc.stderr
    crash = list(tmp_path.glob("crash-*")) + list(tmp_path.glob("timeout-*")) + list(tmp_path.glob("oom-*"))
    detail = crash[0].read_bytes()[:200] if crash else b""
    assert proc.returncode == 0 and not crash, (
        f"{name}: atheris found {crash} {detail!r}\n{out[-3000:].decode()}"
    )
    m = _DONE.search(out)
    assert m is not None, out[-2000:].decode()
    figures.add(
        "fuzz",
        f"{name} (atheris)",
        {"inputs tried": int(m.group(1)), "seconds": int(m.group(2)), "outcome": "only pidkit.errors"},
    )


# --- the HTTP routes -----------------------------------------------------------------------------

NAAN = "99999"
BOUND = {"ark:99999/fk4x1": "https://example.org/x1", "ark:99999/fk4coll": "https://example.org/coll/"}


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, str]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('fuzzweb')}/web.db"
    with open_store(url) as store:
        store.add_naan(NAAN, "test", shoulders=["fk4"])
        store.bind("ark:99999/fk4x1", BOUND["ark:99999/fk4x1"], erc=Erc(what="x"))
        store.bind("ark:99999/fk4coll", BOUND["ark:99999/fk4coll"], passthrough=True)
        # after the hand-named fk4 ARKs: a k-template minter makes their check characters count
        store.create_minter("m", naan=NAAN, template="fk4.reedeedk", seed=1)
        store.bind_id("tid", "3jzfcijpj2z2a", "https://example.org/tid")
        key = store.create_api_key(NAAN)[1]
    with TestClient(create_app(url, settings=Settings(max_body=65536)), follow_redirects=False) as client:
        yield client, key


def allowed_location(location: str) -> bool:
    """A redirect may only go to a bound target (or below a passthrough target), to the N2T fallback,
    or to a path on this resolver."""
    if location.startswith("http://testserver/"):  # same origin (e.g. a trailing-slash redirect)
        location = location[len("http://testserver") :]
    if location.startswith(("https://n2t.net/ark:", "/ark:", "/id/")):
        return "\r" not in location and "\n" not in location
    return any(
        location == t or (t.endswith("/") and location.startswith(t))
        for t in [*BOUND.values(), "https://example.org/tid"]
    ) or location.startswith("https://example.org/x1")


def check_response(status: int, headers: dict[str, str]) -> None:
    assert status < 500, status
    location = headers.get("location")
    if location is not None:
        assert allowed_location(location), location


path_text = st.text(alphabet=st.sampled_from(SPECIAL.replace("#", "").replace("?", "")), max_size=80)


@settings(max_examples=EXAMPLES, deadline=2000, database=None, suppress_health_check=list(HealthCheck))
@given(
    route=st.sampled_from(
        [
            "/ark:",
            "/ark:/99999/",
            "/ark:99999/fk4coll",
            "/ark:99999/fk4x1",
            "/id/",
            "/resolve?ark=",
            "/inspect?id=",
            "/api/v1/bindings?ark=",
            "/api/v1/naans/99999/bindings?after=",
            "/",
        ]
    ),
    tail=path_text,
    info=st.sampled_from(["", "?info", "??", "?info&x", "?"]),
    accept=st.sampled_from(
        ["*/*", "application/json", "text/html;q=0", "", "text/plain, application/json;q=0.5"]
    ),
)
def test_http_get_routes_never_5xx(
    http: tuple[TestClient, str], route: str, tail: str, info: str, accept: str
) -> None:
    from urllib.parse import quote

    client, key = http
    path = (
        route
        + quote(tail.encode("utf-8", "surrogatepass"), safe="/:%@.-_~!$&'()*+,;=")
        + (info if "?" not in route else "")
    )
    r = client.get(path, headers={"accept": accept, "authorization": f"Bearer {key}"})
    check_response(r.status_code, dict(r.headers))


json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet=st.sampled_from(SPECIAL), max_size=40),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
    max_leaves=8,
)


@settings(max_examples=EXAMPLES, deadline=2000, database=None, suppress_health_check=list(HealthCheck))
@given(
    method_path=st.sampled_from(
        [
            ("PUT", "/api/v1/bindings"),
            ("POST", "/api/v1/mint"),
            ("POST", "/api/v1/tombstones"),
            ("POST", "/api/v1/import"),
        ]
    ),
    body=st.one_of(
        st.fixed_dictionaries(
            {
                "ark": st.sampled_from(["ark:99999/fk4", "ark:/99999/fk4-", "ark:12345/", ""]).flatmap(
                    lambda p: path_text.map(lambda t: p + t)
                ),
                "target": st.one_of(
                    st.none(), path_text, path_text.map(lambda t: "https://example.org/" + t)
                ),
            },
            optional={
                "status": st.sampled_from(["public", "reserved", "x"]),
                "passthrough": st.booleans(),
                "erc": json_value,
                "reason": path_text,
                "naan": path_text,
                "count": st.integers(-2, 3),
            },
        ),
        json_value,
    ),
    raw=st.one_of(st.none(), st.binary(max_size=200)),
)
def test_http_write_routes_never_5xx(
    http: tuple[TestClient, str], method_path: tuple[str, str], body: object, raw: bytes | None
) -> None:
    client, key = http
    method, path = method_path
    headers = {"authorization": f"Bearer {key}"}
    if raw is not None:
        r = client.request(method, path, content=raw, headers=headers)
    else:
        payload = json.dumps(body).encode()  # ASCII escapes: lone surrogates reach the server escaped
        r = client.request(
            method, path, content=payload, headers={**headers, "content-type": "application/json"}
        )
    check_response(r.status_code, dict(r.headers))
    if r.status_code in (200, 201) and path == "/api/v1/bindings":
        BOUND[r.json()["key"]] = r.json()["target"] or "https://invalid.invalid/"


def test_http_fuzz_figures(figures: _report.Figures) -> None:
    """Records the number of HTTP examples (the two tests above ran that many each)."""
    figures.add(
        "fuzz",
        "HTTP routes (hypothesis, in-process ASGI)",
        {"inputs tried": 2 * EXAMPLES, "outcome": "no 5xx; redirects only to bound http(s) targets / N2T"},
    )
    assert EXAMPLES > 0
