"""Configuration of the web service, read from the environment (DESIGN.md: configuration by environment).

=============================  ==============================================  =====================
variable                       meaning                                         default
=============================  ==============================================  =====================
``PIDKIT_DATABASE_URL``        the store (``sqlite:///…`` or ``postgresql://…``)  ``sqlite:///pidkit.db``
``PIDKIT_MAX_BODY``            largest request body accepted, in bytes          8 MiB
``PIDKIT_FALLBACK_RESOLVER``   where ARKs of unknown NAANs are sent             ``https://n2t.net/``
``PIDKIT_STORE_RETRY``         seconds between attempts to open a failed store  2
``PIDKIT_LOOKUP_TIMEOUT``      seconds a batch of ARK lookups may take (then    5
                               503; PostgreSQL, :mod:`pidkit.web.batch`)
=============================  ==============================================  =====================

>>> s = Settings.from_env({"PIDKIT_MAX_BODY": "1024"})
>>> s.max_body, s.fallback_resolver
(1024, 'https://n2t.net/')
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ..errors import PidkitError

#: Default body limit: generous for a JSON Lines import of tens of thousands of bindings.
DEFAULT_MAX_BODY: Final = 8 * 1024 * 1024
#: draft-kunze-ark-40 §3.3 ("Resolver Chains and Roles"): a resolver that knows nothing about a NAAN
#: should redirect the request to N2T.net.
DEFAULT_FALLBACK: Final = "https://n2t.net/"
#: draft-kunze-ark-40 §5 (IANA Considerations): the ARK service path, returned by /.well-known/ark.
SERVICE_PATH: Final = "/"


@dataclass(frozen=True, slots=True)
class Settings:
    """Settings of one app instance.  ``database_url`` ``None`` means ``$PIDKIT_DATABASE_URL`` or the
    embedded SQLite default (:func:`pidkit.store.default_url`).

    >>> Settings(max_body=10).max_body
    10
    """

    database_url: str | None = None
    max_body: int = DEFAULT_MAX_BODY
    fallback_resolver: str = DEFAULT_FALLBACK
    store_retry: float = 2.0
    lookup_timeout: float = 5.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``env`` (default ``os.environ``); a bad value raises
        :class:`~pidkit.errors.PidkitError` naming the variable.

        >>> Settings.from_env({"PIDKIT_MAX_BODY": "lots"})
        Traceback (most recent call last):
        ...
        pidkit.errors.PidkitError: PIDKIT_MAX_BODY must be a positive integer in 'lots'
        """
        env = os.environ if env is None else env
        fallback = env.get("PIDKIT_FALLBACK_RESOLVER") or DEFAULT_FALLBACK
        if not fallback.startswith(("https://", "http://")):
            raise PidkitError("PIDKIT_FALLBACK_RESOLVER must be an http(s) URL", text=fallback)
        return cls(
            database_url=env.get("PIDKIT_DATABASE_URL") or None,
            max_body=_positive_int(env, "PIDKIT_MAX_BODY", DEFAULT_MAX_BODY),
            fallback_resolver=fallback if fallback.endswith("/") else fallback + "/",
            store_retry=float(_positive_int(env, "PIDKIT_STORE_RETRY", 2)),
            lookup_timeout=float(_positive_int(env, "PIDKIT_LOOKUP_TIMEOUT", 5)),
        )


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    text = env.get(name)
    if not text:
        return default
    if not text.isdigit() or int(text) < 1:
        raise PidkitError(f"{name} must be a positive integer", text=text)
    return int(text)
