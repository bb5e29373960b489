"""HTML building blocks: one page layout with inline CSS, and escaping.

No template engine and no external assets: every page is built from small functions that call
:func:`esc` (``html.escape`` with quotes) on **every** value that did not come from this module.  The
CSS is inline, responsive (one column on a phone) and keeps a visible focus ring for keyboard users.

>>> "<script>" in page("t", f"<p>{esc('<script>alert(1)</script>')}</p>")
False
"""

from __future__ import annotations

import html
from typing import Final

from .. import __version__

CSS: Final = """
:root{--fg:#1d2330;--muted:#5b6475;--bg:#fbfbfd;--card:#fff;--line:#d9dde6;--accent:#1d5fd1;
  --bad:#b42318;--ok:#067647}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
  background:var(--bg)}
header,main,footer{max-width:60rem;margin:0 auto;padding:0 1rem}
header{display:flex;flex-wrap:wrap;align-items:baseline;gap:.25rem 1.25rem;padding-top:1rem;
  padding-bottom:.5rem;border-bottom:1px solid var(--line)}
header .brand{font-weight:700;font-size:1.25rem;color:var(--fg);text-decoration:none}
nav a{margin-right:1rem}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible{outline:3px solid var(--accent);
  outline-offset:2px}
h1{font-size:1.6rem;line-height:1.25;margin:1.25rem 0 .5rem;overflow-wrap:anywhere}
h2{font-size:1.2rem;margin:1.5rem 0 .5rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:.5rem;padding:1rem;
  margin:1rem 0}
form.box{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end}
form.box label{flex:1 1 100%;font-weight:600}
form.box input[type=text]{flex:1 1 16rem;min-width:0;font:inherit;padding:.6rem .7rem;
  border:1px solid #9aa3b5;border-radius:.375rem;background:#fff}
button{font:inherit;font-weight:600;padding:.6rem 1.1rem;border:0;border-radius:.375rem;
  background:var(--accent);color:#fff;cursor:pointer}
.hint{color:var(--muted);font-size:.9rem;margin:.25rem 0 0}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.95em;
  overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:.4rem .5rem;border-bottom:1px solid var(--line);
  overflow-wrap:anywhere}
th{width:9rem;color:var(--muted);font-weight:600}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:1rem;font-size:.85rem;
  font-weight:600;border:1px solid currentColor}
.ok{color:var(--ok)}.bad{color:var(--bad)}.muted{color:var(--muted)}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f1f3f7;padding:.75rem;
  border-radius:.375rem}
footer{color:var(--muted);font-size:.85rem;padding-top:2rem;padding-bottom:2rem}
@media (max-width:40rem){th{width:auto;display:block;border-bottom:0;padding-bottom:0}td{
  display:block}tr{display:block;border-bottom:1px solid var(--line)}th,td{border:0}h1{
  font-size:1.35rem}}
"""


def esc(value: object) -> str:
    """HTML-escape ``str(value)``, quotes included (safe in text and in quoted attributes).

    >>> esc('<a href="x">&</a>')
    '&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;'
    """
    return html.escape(str(value), quote=True)


#: The site's main navigation (a page may pass its own: the back office's names the user).
NAV: Final = ('<nav aria-label="main"><a href="/#resolve">Resolve</a><a href="/#inspect">Inspect</a>'
              '<a href="/api/docs">API</a></nav>')


def page(title: str, body: str, *, lang: str = "en", nav: str = NAV, css: str = CSS, head: str = "") -> str:
    """A complete HTML page around ``body`` and ``nav`` (already-escaped HTML); ``title`` is escaped
    here; ``css`` is the page's one inline style sheet; ``head`` more of the ``<head>`` (HTML, e.g. a
    script of this site).

    >>> page("A & B", "<p>x</p>").count("A &amp; B")
    2
    """
    t = esc(title)
    return (
        f'<!DOCTYPE html>\n<html lang="{esc(lang)}">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{t} · pidkit</title>\n<style>{css}</style>\n{head}</head>\n<body>\n"
        f'<header><a class="brand" href="/">pidkit</a>{nav}</header>\n'
        f"<main>\n<h1>{t}</h1>\n{body}\n</main>\n"
        f"<footer>pidkit {esc(__version__)} — ARK resolver and identifier toolkit</footer>\n"
        "</body>\n</html>\n"
    )


def rows(pairs: list[tuple[str, str]]) -> str:
    """A two-column table; the keys and values are escaped here.

    >>> rows([("who", "<b>")])
    '<table><tr><th scope="row">who</th><td>&lt;b&gt;</td></tr></table>'
    """
    cells = "".join(f'<tr><th scope="row">{esc(k)}</th><td>{esc(v)}</td></tr>' for k, v in pairs)
    return f"<table>{cells}</table>"


def form(action: str, name: str, label: str, *, value: str = "", button: str = "Go", hint: str = "",
         anchor: str = "") -> str:
    """A one-field GET form that submits with Enter (a real ``<form>`` with a labelled input).

    >>> 'for="f-q"' in form("/inspect", "q", "Any id")
    True
    """
    fid = f"f-{name}"
    hint_html = f'<p class="hint" id="{fid}-hint">{esc(hint)}</p>' if hint else ""
    described = f' aria-describedby="{fid}-hint"' if hint else ""
    section_id = f' id="{esc(anchor)}"' if anchor else ""
    return (
        f'<section class="card"{section_id}><form class="box" method="get" action="{esc(action)}">'
        f'<label for="{fid}">{esc(label)}</label>'
        f'<input type="text" id="{fid}" name="{esc(name)}" value="{esc(value)}" autocomplete="off" '
        f'autocapitalize="none" spellcheck="false" required{described}>'
        f'<button type="submit">{esc(button)}</button></form>{hint_html}</section>'
    )
