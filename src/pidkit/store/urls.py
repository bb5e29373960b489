"""Store URLs: the default one, the file path of a SQLite URL, and the one redaction of secrets.

>>> sqlite_path(DEFAULT_URL)
'pidkit.db'
"""

from __future__ import annotations

import os
import re
import urllib.parse
from typing import Final

from ..errors import StoreError

__all__ = ["DEFAULT_URL", "POSTGRES_PREFIXES", "default_url", "redact_url", "sqlite_path"]

#: The embedded default store: a SQLite file in the working directory.
DEFAULT_URL: Final = "sqlite:///pidkit.db"

SQLITE_PREFIX: Final = "sqlite:///"
POSTGRES_PREFIXES: Final = ("postgresql://", "postgres://")

#: libpq connection parameters that carry a secret (libpq "Parameter Key Words").
_SECRET_PARAMS: Final = re.compile(r"(?i)\b(password|passfile|sslpassword)(\s*=\s*)([^&\s]*)")


def redact_url(url: str) -> str:
    """``url`` safe to print: the password of the user part and the values of the ``password``,
    ``passfile`` and ``sslpassword`` parameters replaced by ``***`` (the one redaction, used by the
    store's errors and ``pidkit serve``).

    >>> redact_url("postgresql://u:s3cret@h:5432/db?sslmode=require&password=x&PassFile=/p")
    'postgresql://u:***@h:5432/db?sslmode=require&password=***&PassFile=***'
    >>> redact_url("postgresq://u:s3cret@h/db"), redact_url("sqlite:///x.db")
    ('postgresq://u:***@h/db', 'sqlite:///x.db')
    """
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if "@" in parts.netloc:
        userinfo, _, host = parts.netloc.rpartition("@")
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":***"
        url = urllib.parse.urlunsplit(parts._replace(netloc=f"{userinfo}@{host}"))
    return _SECRET_PARAMS.sub(r"\1\2***", url)


def default_url() -> str:
    """``$PIDKIT_DATABASE_URL`` if set, else :data:`DEFAULT_URL`.

    >>> import os
    >>> default_url() == os.environ.get("PIDKIT_DATABASE_URL", DEFAULT_URL)
    True
    """
    return os.environ.get("PIDKIT_DATABASE_URL") or DEFAULT_URL


def sqlite_path(url: str) -> str:
    """The file path (or ``:memory:``) of a ``sqlite:///`` URL.

    >>> sqlite_path("sqlite:///pidkit.db"), sqlite_path("sqlite:////var/lib/p.db")
    ('pidkit.db', '/var/lib/p.db')
    """
    if not url.startswith(SQLITE_PREFIX) or len(url) == len(SQLITE_PREFIX):
        raise StoreError(
            "a SQLite URL is sqlite:///relative.db, sqlite:////abs/path.db or sqlite:///:memory:",
            text=redact_url(url),
        )
    return url[len(SQLITE_PREFIX) :]
