"""The REST API's documentation for people, at ``/api/docs``: the application's own OpenAPI document
(``/openapi.json``, still served) rendered server-side as HTML — operations grouped by tag, each with its
parameters, request body and responses, then every schema with its properties.  pidkit's own style
sheet, no script, no external asset (FastAPI's Swagger UI and ReDoc load theirs from a CDN: they are
switched off in :func:`pidkit.web.app.create_app`).

>>> doc = {"info": {"title": "t", "version": "1"}, "paths": {"/x": {"get": {"tags": ["a"],
...        "summary": "<X>", "responses": {"200": {"description": "ok"}}}}}}
>>> "&lt;X&gt;" in render(doc) and 'id="get-x"' in render(doc)
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import Response

from .sessions import html
from .templates import CSS, esc, page

__all__ = ["DOCS_CSS", "render", "router"]

router = APIRouter(include_in_schema=False)

#: The documentation page's additions to the site's style sheet.
DOCS_EXTRA: Final = """
.op h3{font-size:1.05rem;margin:.25rem 0}.verb{display:inline-block;min-width:4.5rem;font-weight:700;
  font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.get{color:#067647}.post{color:#1d5fd1}.put,.patch{color:#8a4b00}.delete{color:#b42318}
nav.toc ul{columns:16rem;padding-left:1.1rem}
table.grid th{width:auto}
"""
#: The whole inline style sheet of the page (allowed by its hash in the CSP).
DOCS_CSS: Final = CSS + DOCS_EXTRA
_METHODS: Final = ("get", "put", "post", "patch", "delete", "head", "options")


def _anchor(*parts: str) -> str:
    """An ``id`` from a method and a path.

    >>> _anchor("get", "/api/v1/bindings/{ark}")
    'get-api-v1-bindings-ark'
    """
    return re.sub(r"[^A-Za-z0-9]+", "-", " ".join(parts)).strip("-").lower()


def _type(schema: Mapping[str, Any] | None) -> str:
    """A schema's type in words, with links to named schemas (HTML, escaped here).

    >>> _type({"type": "array", "items": {"$ref": "#/components/schemas/Out"}})
    'array of <a href="#schema-out">Out</a>'
    >>> _type({"anyOf": [{"type": "string"}, {"type": "null"}]})
    'string or null'
    """
    if not schema:
        return "any"
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return f'<a href="#schema-{esc(_anchor(name))}">{esc(name)}</a>'
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return " or ".join(_type(s) for s in schema[key])
    kind = schema.get("type", "object" if "properties" in schema else "any")
    if kind == "array":
        return f"array of {_type(schema.get('items'))}"
    text = esc(kind)
    if "enum" in schema:
        text += ": " + ", ".join(f"<code>{esc(v)}</code>" for v in schema["enum"])
    if "format" in schema:
        text += f" ({esc(schema['format'])})"
    if "pattern" in schema:
        text += f", pattern <code>{esc(schema['pattern'])}</code>"
    return text


def _table(heads: list[str], rows: list[list[str]]) -> str:
    th = "".join(f'<th scope="col">{esc(h)}</th>' for h in heads)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="grid"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def _text(value: object) -> str:
    """A description as paragraphs (escaped; blank lines split them)."""
    parts = [p.strip() for p in str(value or "").split("\n\n") if p.strip()]
    return "".join(f"<p>{esc(p)}</p>" for p in parts)


def _content(content: Mapping[str, Any] | None) -> str:
    if not content:
        return ""
    return "; ".join(f"<code>{esc(media)}</code>: {_type(body.get('schema'))}"
                     for media, body in content.items())  # fmt: skip


def _operation(method: str, path: str, op: Mapping[str, Any]) -> str:
    params = [[f"<code>{esc(p.get('name', ''))}</code>", esc(p.get("in", "")),
               "yes" if p.get("required") else "no", _type(p.get("schema")), esc(p.get("description", ""))]
              for p in op.get("parameters", [])]  # fmt: skip
    out = [f'<section class="card op" id="{esc(_anchor(method, path))}">'
           f'<h3><span class="verb {esc(method)}">{esc(method.upper())}</span> <code>{esc(path)}</code></h3>']
    if op.get("summary"):
        out.append(f"<p><strong>{esc(op['summary'])}</strong></p>")
    out.append(_text(op.get("description")))
    if params:
        out.append("<h4>Parameters</h4>" + _table(["Name", "In", "Required", "Type", "Description"], params))
    body = op.get("requestBody")
    if body:
        required = "required" if body.get("required") else "optional"
        out.append(f"<h4>Request body ({required})</h4>{_text(body.get('description'))}"
                   f"<p>{_content(body.get('content'))}</p>")
    responses = [[f"<code>{esc(code)}</code>", esc(r.get("description", "")), _content(r.get("content"))]
                 for code, r in op.get("responses", {}).items()]  # fmt: skip
    if responses:
        out.append("<h4>Responses</h4>" + _table(["Status", "Meaning", "Body"], responses))
    security = op.get("security")
    if security:
        names = ", ".join(esc(name) for s in security for name in s)
        out.append(f'<p class="muted">Needs: {names} (<code>Authorization: Bearer &lt;key&gt;</code>).</p>')
    out.append("</section>")
    return "".join(out)


def _schema(name: str, schema: Mapping[str, Any]) -> str:
    required = set(schema.get("required", ()))
    rows = [[f"<code>{esc(prop)}</code>", _type(sub), "yes" if prop in required else "no",
             esc(sub.get("description", sub.get("title", "")))]
            for prop, sub in schema.get("properties", {}).items()]  # fmt: skip
    heads = ["Property", "Type", "Required", "Description"]
    table = _table(heads, rows) if rows else f"<p>{_type(schema)}</p>"
    return (f'<section class="card" id="schema-{esc(_anchor(name))}"><h3>{esc(name)}</h3>'
            f"{_text(schema.get('description'))}{table}</section>")


def render(doc: Mapping[str, Any]) -> str:
    """The HTML body documenting the OpenAPI document ``doc`` (every value escaped)."""
    info = doc.get("info", {})
    groups: dict[str, list[tuple[str, str, Mapping[str, Any]]]] = {}
    for path, item in doc.get("paths", {}).items():
        for method in _METHODS:
            if method in item:
                op = item[method]
                for tag in op.get("tags") or ["other"]:
                    groups.setdefault(str(tag), []).append((method, path, op))
    toc = "".join(
        f"<li>{esc(tag)}<ul>" + "".join(
            f'<li><a href="#{esc(_anchor(m, p))}"><span class="verb {esc(m)}">{esc(m.upper())}</span> '
            f"<code>{esc(p)}</code></a></li>" for m, p, _ in ops) + "</ul></li>"
        for tag, ops in groups.items()
    )  # fmt: skip
    head = (f'<section class="card"><p>{esc(info.get("summary", ""))} — version '
            f'<code>{esc(info.get("version", ""))}</code>, '
            f'OpenAPI <code>{esc(doc.get("openapi", ""))}</code>. '
            'The machine-readable document: <a href="/openapi.json">/openapi.json</a>.</p>'
            f"{_text(info.get('description'))}</section>"
            f'<nav class="toc card" aria-label="operations"><h2>Operations</h2><ul>{toc}</ul></nav>')
    sections = "".join(f"<h2>{esc(tag)}</h2>" + "".join(_operation(m, p, op) for m, p, op in ops)
                       for tag, ops in groups.items())  # fmt: skip
    schemas = doc.get("components", {}).get("schemas", {})
    schema_html = "".join(_schema(n, s) for n, s in schemas.items())
    schema_html = f"<h2>Schemas</h2>{schema_html}" if schemas else ""
    return head + sections + schema_html


@router.get("/api/docs")
def api_docs(request: Request) -> Response:
    """The API documentation page, made from the app's OpenAPI document."""
    doc = request.app.openapi()
    title = f"{doc.get('info', {}).get('title', 'pidkit')} API"
    return html(page(title, render(doc), css=DOCS_CSS), DOCS_CSS)
