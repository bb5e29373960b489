"""The REST API against its own OpenAPI document with schemathesis (property-based, over the ASGI app):
generated requests — with a valid API key and without — never get a 500, and responses match the
documented schemas.  The number of examples per operation is bounded so the suite stays fast."""

from __future__ import annotations

import json
from typing import Any

import hypothesis
import schemathesis
from schemathesis.checks import not_a_server_error, response_schema_conformance

from _webutil import seed
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
    case.validate_response(response, checks=[not_a_server_error, response_schema_conformance])


@schema.parametrize()
@_SETTINGS
def test_api_without_a_key_never_500(case: schemathesis.Case[Any]) -> None:
    response = case.call()
    case.validate_response(response, checks=[not_a_server_error])
