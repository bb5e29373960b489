"""The web service: ARK resolver, ``?info``, REST API with API keys, HTML pages (``pidkit serve``).

>>> from pidkit.web import create_app
>>> create_app("sqlite:///:memory:").openapi()["info"]["title"]
'pidkit'
"""

from __future__ import annotations

from ..settings import Settings
from .app import create_app

__all__ = ["Settings", "create_app"]
