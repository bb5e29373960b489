"""The public NAAN registry: every registered NAAN and shoulder, its organization, policy and target
template — to resolve any ARK in the world offline, as N2T does (docs/registry.md).

The snapshot shipped with pidkit is the California Digital Library's public NAAN registry of
2024-11-07 (CDLUC3/naan_reg_public, MIT licence: ``data/LICENSE-naan_reg_public``); ``pidkit registry
update FILE|URL`` replaces it (:func:`pidkit.registry.updating.update`, :func:`active_path`).

In one line each, for the resolver:

>>> from pidkit import registry
>>> m = registry.resolve("ark:/b6071/m3z07d")
>>> m.target, m.http_code, m.record.what
('https://doi.org/10.6071/m3z07d', 302, 'b6071')
>>> registry.erc(registry.default().naan("12148"))["erc"]["when"]
'2005-07-17'
>>> registry.resolve("ark:/00000/x5") is None
True
"""

from __future__ import annotations

from ..ark import Ark
from .loading import ENV_VAR, SNAPSHOT, active_path, default, describe_naan, load, parse, read_source
from .records import NAAN_RTYPE, SHOULDER_RTYPE, Policy, Record, RegistryError, Target, Who, parse_record
from .registry import Registry, RegistryMatch, erc, naan_line, organization
from .templates import VARIABLES, check_template, expand, template_values

__all__ = [
    "ENV_VAR",
    "NAAN_RTYPE",
    "SHOULDER_RTYPE",
    "SNAPSHOT",
    "VARIABLES",
    "Policy",
    "Record",
    "Registry",
    "RegistryError",
    "RegistryMatch",
    "Target",
    "Who",
    "active_path",
    "check_template",
    "default",
    "describe_naan",
    "erc",
    "expand",
    "load",
    "naan_line",
    "organization",
    "parse",
    "parse_record",
    "read_source",
    "resolve",
    "template_values",
]


def resolve(ark: Ark | str) -> RegistryMatch | None:
    """Where the registry in use (:func:`default`) sends ``ark``: the most specific record (a shoulder
    beats its NAAN), the target URL and the HTTP code; ``None`` when its NAAN is not registered.

    >>> resolve("ark:/99999/fk4x5").record.what
    '99999/fk4'
    """
    return default().resolve(ark)
