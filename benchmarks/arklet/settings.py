"""Django settings for running arklet 0.2.3 in the resolver benchmark (``benchmarks/bench_resolver.py``).

arklet itself is installed from PyPI into ``benchmarks/.peers/arklet-venv``; this file only configures it.
It keeps every shipped setting (middleware, apps, DEBUG off) and changes what a production deployment on
this machine would change:

* the database: the local PostgreSQL (127.0.0.1:5432, trust auth, user ``postgres``), database
  ``arklet_bench`` (``ARKLET_POSTGRES_*`` variables, as arklet's own settings read them);
* persistent database connections (``CONN_MAX_AGE``): as shipped, Django opens a new PostgreSQL
  connection for every request, which caps arklet at about 150 requests/s here;
* ``ALLOWED_HOSTS`` includes 127.0.0.1 (arklet's default ``ARKLET_HOST`` already is).

Used as ``DJANGO_SETTINGS_MODULE=settings`` with this folder on ``PYTHONPATH``.
"""

import os

from arklet.entrypoints.settings import *  # type: ignore[import-not-found]  # noqa: F403
from arklet.entrypoints.settings import DATABASES

DATABASES["default"].update(
    {
        "NAME": os.environ.get("ARKLET_POSTGRES_NAME", "arklet_bench"),
        "HOST": os.environ.get("ARKLET_POSTGRES_HOST", "127.0.0.1"),
        "PORT": os.environ.get("ARKLET_POSTGRES_PORT", "5432"),
        "USER": os.environ.get("ARKLET_POSTGRES_USER", "postgres"),
        "PASSWORD": os.environ.get("ARKLET_POSTGRES_PASSWORD", ""),
        # persistent connections: one per gunicorn worker, reused across requests
        "CONN_MAX_AGE": int(os.environ.get("ARKLET_CONN_MAX_AGE", "600")),
        "CONN_HEALTH_CHECKS": False,
    }
)

ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
DEBUG = False
