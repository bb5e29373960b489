"""Target templates: the four variables a registry record's ``target.url`` may use, as N2T fills them.

N2T's resolver (CDLUC3/resolver, package ``rslv``: ``lib_rslv.split_identifier_string``,
``PidDefinitionCatalog.parse`` and ``routers.resolver.pid_format``) splits an identifier
``scheme:content`` with ``content = prefix/value``; finds the definition whose ``value`` is the
longest one starting the identifier's ``value``; takes ``suffix`` as what follows
``prefix/definition-value``; removes hyphens from ``content``, ``value`` and ``suffix`` for ARKs; and
fills the target with Python's ``string.Template`` (``${name}``; ``$$`` is a literal ``$``).
For an ARK matched against the NAAN registry that is:

* ``${pid}``: the whole ARK, ``ark:NAAN/Name…`` (``ark:99999/fk4x5``);
* ``${content}``: the ARK without its label, ``NAAN/Name…`` (``99999/fk4x5``);
* ``${value}``: what follows ``NAAN/``, the Name and its qualifiers (``fk4x5``);
* ``${suffix}``: what follows ``NAAN/shoulder`` of the matched shoulder record (``x5`` under shoulder
  ``fk4``); for a NAAN record, the same as ``${value}``.

pidkit fills them from the ARK's draft-kunze-ark-40 §3.2 normalized form (its identity: hyphens
removed, like N2T, and the new ``ark:`` label).  The web resolver does not pass the request's query
string on (as pidkit's N2T forwarding never did; ``docs/registry.md``).

>>> from pidkit.ark import Ark
>>> expand("https://doi.org/10.6071/${value}", template_values(Ark.parse("ark:/b6071/m3z07d")))
'https://doi.org/10.6071/m3z07d'
"""

from __future__ import annotations

import string
from typing import Final

from ..ark import Ark

__all__ = ["VARIABLES", "check_template", "expand", "template_values"]

#: The variables a target template may use (see the module docstring).
VARIABLES: Final = ("content", "value", "pid", "suffix")
_LABEL: Final = "ark:"


def check_template(url: str) -> str | None:
    """What is wrong with a target template, or ``None``: it must be an ``http://`` or ``https://`` URL,
    a valid ``string.Template`` (a lone ``$`` must be written ``$$``) using only :data:`VARIABLES`.

    >>> check_template("https://zentralgut.ch/resolver?field=MD_PI_ARK&identifier=${pid}") is None
    True
    >>> check_template("https://example.org/${naan}")
    "unknown template variable '${naan}' (known: ${content}, ${value}, ${pid}, ${suffix})"
    """
    if not url.startswith(("http://", "https://")):
        return f"expected an http:// or https:// URL, got {url!r}"
    template = string.Template(url)
    if not template.is_valid():
        return f"invalid template {url!r} (write a literal '$' as '$$')"
    for name in template.get_identifiers():
        if name not in VARIABLES:
            known = ", ".join(f"${{{v}}}" for v in VARIABLES)
            return f"unknown template variable '${{{name}}}' (known: {known})"
    return None


def template_values(ark: Ark, shoulder: str = "") -> dict[str, str]:
    """The template variables for ``ark`` matched by a record with ``shoulder`` (``""`` for a NAAN
    record), from the ARK's normalized form.  The caller has checked that the shoulder starts the value.

    >>> v = template_values(Ark.parse("https://n2t.net/ark:/19156/tkt42-abc"), "tkt42")
    >>> v["pid"], v["content"], v["value"], v["suffix"]
    ('ark:19156/tkt42abc', '19156/tkt42abc', 'tkt42abc', 'abc')
    """
    pid = ark.normalized
    content = pid[len(_LABEL) :]
    value = content.partition("/")[2]
    return {"pid": pid, "content": content, "value": value, "suffix": value[len(shoulder) :]}


def expand(url: str, values: dict[str, str]) -> str:
    """Fill the target template ``url`` with ``values`` (as ``string.Template`` does: ``${name}``).

    >>> expand("https://vocab.example/brunner${suffix}", {"suffix": "abc"})
    'https://vocab.example/brunnerabc'
    """
    return string.Template(url).substitute(values)
