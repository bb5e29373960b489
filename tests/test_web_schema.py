"""The REST API against its own OpenAPI document with schemathesis (property-based, over the ASGI app):
generated requests — schema-valid and schema-violating, with a valid API key and without, and the
coverage phase's edge cases (missing body, unsupported methods, missing ``Authorization``) — never get
a 500, and every check schemathesis has holds: responses match the documented schemas, statuses and
headers, schema-violating requests are refused, a 405 names every allowed method, an operation that
requires a key refuses a request without one.  Not checked: that every schema-valid request is
accepted — a documented pattern cannot say everything the ARK parser checks (check characters, the
characters §2.3 allows), nor what makes a JSON Lines body valid.  The number of examples per operation
is bounded so the suite stays fast.  Below: one direct test per disagreement schemathesis found
(issue 11)."""

from __future__ import annotations

import json
import re
import string
from typing import Any

import hypothesis
import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import strategies as st
from schemathesis.checks import positive_data_acceptance

from _webutil import seed
from pidkit.ark import Ark
from pidkit.ark.chars import HYPHEN_LIKE, NAAN_ANY_CASE_PATTERN, NAME_CHARS, check_naan
from pidkit.codecs import BETANUMERIC
from pidkit.errors import ArkError
from pidkit.store import open_store
from pidkit.web import Settings, create_app


@schemathesis.serializer("application/x-ndjson")
def _ndjson(ctx: object, value: object) -> bytes:
    """The import body is documented as a string of JSON Lines: send generated strings as UTF-8."""
    return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else json.dumps(value).encode()


_STORE = open_store("sqlite:///:memory:")
_SEEDED = seed(_STORE)
APP = create_app(_STORE, settings=Settings(max_body=64 * 1024))
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)
schema.config.generation.update(modes=list(schemathesis.GenerationMode))  # positive and negative
schema.config.phases.coverage.enabled = True
# A body over the limit is refused before it is read (413, documented for every operation): a rejection of
# negative data like 400/422 (schemathesis' default list lacks it; a generated PUT body reached it once the
# binding gained its extra metadata, issue 13).
_REJECTION = schema.config.checks.negative_data_rejection
_REJECTION.expected_statuses = [*_REJECTION.expected_statuses, "413"]
OPENAPI = APP.openapi()

_SETTINGS = hypothesis.settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(hypothesis.HealthCheck),
    database=None,
)


@schema.parametrize()
@_SETTINGS
def test_api_with_a_key_never_500(case: schemathesis.Case[Any]) -> None:
    response = case.call(headers={"Authorization": f"Bearer {_SEEDED.key}"})
    case.validate_response(response, excluded_checks=[positive_data_acceptance])


def test_import_is_fuzzed() -> None:
    """The NDJSON serializer lets schemathesis send generated import bodies (not skip the operation)."""
    sent: list[object] = []

    @_SETTINGS
    @hypothesis.given(case=schema["/api/v1/import"]["POST"].as_strategy())
    def run(case: schemathesis.Case[Any]) -> None:
        response = case.call(headers={"Authorization": f"Bearer {_SEEDED.key}"})
        assert response.status_code < 500
        sent.append(response.request.body)

    run()
    assert any(sent)


@schema.parametrize()
@_SETTINGS
def test_api_without_a_key_never_500(case: schemathesis.Case[Any]) -> None:
    response = case.call()
    case.validate_response(response, excluded_checks=[positive_data_acceptance])


# --- what schemathesis found, one test each ------------------------------------------------------------

def test_reading_a_binding_needs_no_key_and_the_document_says_so() -> None:
    security = OPENAPI["paths"]["/api/v1/bindings"]["get"]["security"]
    assert {} in security  # optional: no requirement is one of the alternatives
    assert OPENAPI["paths"]["/api/v1/bindings"]["put"]["security"] == [{"HTTPBearer": []}]
    with TestClient(APP) as client:
        assert client.get("/api/v1/bindings", params={"ark": "ark:99999/fk4x1"}).status_code == 200


def test_only_the_endpoints_that_answer_409_document_it_with_its_meaning_there() -> None:
    """409 is the minter's exhaustion for a mint, and a tombstone or a published binding reserved again
    for a write of a binding; no other endpoint answers it (a tombstone is idempotent, a rejected import
    is 422), so no other lists it."""
    documented = {
        (method.upper(), path): op["responses"]["409"]["description"]
        for path, item in OPENAPI["paths"].items() for method, op in item.items()
        if isinstance(op, dict) and "409" in op.get("responses", {})
    }  # fmt: skip
    assert documented == {
        ("POST", "/api/v1/mint"): "conflict: the minter is exhausted",
        ("PUT", "/api/v1/bindings"): "conflict: the ARK is tombstoned, or the write would make a published "
                                     "binding reserved again",
        ("PATCH", "/api/v1/bindings"): "conflict: the ARK is tombstoned, or the write would make a published "
                                       "binding reserved again",
    }  # fmt: skip


def test_empty_import_body_is_refused() -> None:
    body = OPENAPI["paths"]["/api/v1/import"]["post"]["requestBody"]
    assert body["required"] is True
    with TestClient(APP) as client:
        r = client.post("/api/v1/import", content=b"", headers={"Authorization": f"Bearer {_SEEDED.key}",
                                                               "content-type": "application/x-ndjson"})
    assert r.status_code == 400
    assert r.json()["error"]["field"] == "body" and "empty" in r.json()["error"]["message"]


def test_allow_names_every_method_of_the_path() -> None:
    with TestClient(APP) as client:
        for method in ("OPTIONS", "DELETE"):  # PATCH is served since issue 13
            r = client.request(method, "/api/v1/bindings")
            assert (r.status_code, r.headers["allow"]) == (405, "GET, PATCH, PUT")
        assert client.request("DELETE", "/api/v1/history").headers["allow"] == "GET"
        assert client.post("/api/v1/export").headers["allow"] == "GET"


def _ark_schemas() -> list[dict[str, Any]]:
    get = OPENAPI["paths"]["/api/v1/bindings"]["get"]["parameters"]
    components = OPENAPI["components"]["schemas"]
    return [p["schema"] for p in get if p["name"] == "ark"] + [
        components[name]["properties"]["ark"] for name in ("BindingIn", "TombstoneIn")]


def test_ark_parameters_have_a_pattern() -> None:
    patterns = {s.get("pattern") for s in _ark_schemas()}
    assert len(patterns) == 1 and None not in patterns
    naan = OPENAPI["paths"]["/api/v1/naans/{naan}/bindings"]["get"]["parameters"][0]["schema"]
    assert "pattern" in naan and "pattern" in OPENAPI["components"]["schemas"]["MintIn"]["properties"]["naan"]


# ARK-shaped texts, mostly ones the parser accepts (so the property below is tested, not filtered away):
# an optional NMA (with a scheme or without), the label old or new in any case, a NAAN, a Name with
# qualifiers and %-escapes, an inflection — and now and then a character the parser refuses (NAANs with
# hyphens and hyphen-like characters too).
_NAME_TOKENS = [*sorted(NAME_CHARS), "-", "/", ".", "%2F", "%e9", *HYPHEN_LIKE, "%", "#", " ", "é"]
_HOST_CHARS = string.ascii_lowercase + string.digits
# A host as the regex ([Hh][Tt][Tt][Pp][Ss]?://)?[a-z0-9]+(\.[a-z0-9-]+)*(:[0-9]{1,5})?/ describes it, built
# from its parts (st.from_regex of it made this test's examples several times slower to draw).
_scheme = st.sampled_from(["http", "https"]).flatmap(
    lambda name: st.lists(st.booleans(), min_size=len(name), max_size=len(name)).map(
        lambda upper: "".join(c.upper() if up else c for c, up in zip(name, upper, strict=True)) + "://"))
_host = st.builds(
    "{}{}{}{}/".format,
    st.just("") | _scheme,
    st.text(_HOST_CHARS, min_size=1, max_size=8),
    st.lists(st.text(_HOST_CHARS + "-", min_size=1, max_size=6), max_size=3).map(
        lambda labels: "".join(f".{label}" for label in labels)),
    st.just("") | st.text(string.digits, min_size=1, max_size=5).map(":{}".format),
)
_ark_like = st.builds(
    "{}{}{}/{}{}".format,
    st.sampled_from(["", "https://n2t.net/", "HTTP://e.org:8080/", "n2t.net/", "https://e.org/p/q/"])
    | _host,
    st.sampled_from(["ark:", "ark:/", "ARK:", "aRk:/"]),
    st.text(BETANUMERIC + BETANUMERIC[10:].upper() + "l-" + HYPHEN_LIKE, min_size=1, max_size=6),
    st.lists(st.sampled_from(_NAME_TOKENS), min_size=1, max_size=10).map("".join),
    st.sampled_from(["", "?", "??", "?info", "?a=b", "?a b"]),
)


@hypothesis.settings(max_examples=3000, deadline=None, database=None)
@hypothesis.given(_ark_like)
@hypothesis.example("ark:12345/x6np1wh8k")
@hypothesis.example("https://n2t.net/ark:/13030/tf5p30086k/c3.pdf?info")
def test_the_ark_pattern_is_true(text: str) -> None:
    """Every ARK the parser accepts matches the documented pattern (so the document never calls a
    valid ARK invalid)."""
    try:
        Ark.parse(text)
        parses = True
    except ArkError:
        parses = False
    hypothesis.assume(parses)
    assert re.search(_ark_schemas()[0]["pattern"], text), text


def test_a_hyphen_in_the_naan_is_inside_the_ark_pattern() -> None:
    """The parser accepts hyphens and hyphen-like characters in a NAAN (§3.1, §3.2 step 6), and so does
    the documented pattern."""
    for text in ("ark:1-2345/x6", "ark:\u201012345/x6", "ARK:/1\u20152345-/x6"):
        assert str(Ark.parse(text).normalize()) == "ark:12345/x6"
        assert re.search(_ark_schemas()[0]["pattern"], text), text


def _naan_patterns() -> set[str]:
    naan = OPENAPI["paths"]["/api/v1/naans/{naan}/bindings"]["get"]["parameters"][0]["schema"]
    return {naan["pattern"], OPENAPI["components"]["schemas"]["MintIn"]["properties"]["naan"]["pattern"]}


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _naan_by_the_rule(text: str) -> bool:
    """The NAAN rule (``check_naan``) on ``text`` in any case: §3.2 step 4 lowercases the (ASCII) NAAN."""
    try:
        check_naan(text.translate(_ASCII_LOWER))
    except ArkError:
        return False
    return True


@pytest.mark.parametrize(
    ("text", "ok"),
    [("12345", True), ("b2345", True), ("B2345", True), ("x", True), ("", False), ("l2345", False),
     ("L2345", False), ("1234-5", False), ("12 45", False), ("12345\n", False), ("\u212a", False),
     ("12345/x", False), ("a", False), ("٣", False)],
)  # fmt: skip
def test_the_naan_pattern_vectors(text: str, ok: bool) -> None:
    (pattern,) = _naan_patterns()
    assert pattern == f"^{NAAN_ANY_CASE_PATTERN}$"
    assert (re.fullmatch(pattern, text) is not None, _naan_by_the_rule(text)) == (ok, ok)


@hypothesis.settings(max_examples=1000, deadline=None, database=None)
@hypothesis.given(st.text(BETANUMERIC + "BCDXZLlAaeiou-\u2010 \n/\u212a\u0663é") | st.text(max_size=4))
def test_the_naan_pattern_is_the_naan_rule(text: str) -> None:
    """The documented NAAN pattern (the OpenAPI document's, a full match as ECMA-262's ``^…$`` is) accepts
    exactly what the NAAN rule accepts."""
    (pattern,) = _naan_patterns()
    assert (re.fullmatch(pattern, text) is not None) == _naan_by_the_rule(text), text
