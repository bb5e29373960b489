"""The ASGI application, assembled: resolver, REST API and HTML pages over one store.

:func:`create_app` builds it from a store URL, an open :class:`~pidkit.store.Store` or a factory;
:func:`app_from_env` is the factory ``uvicorn`` imports in each worker process (configuration from the
environment, :mod:`pidkit.settings`); ``pidkit serve`` passes the import string of :func:`worker_app`, which
also takes what the worker built out of the garbage collector's reach.

This module only assembles; nothing in the package imports it.  The parts live in their own modules:
errors and their statuses (:mod:`~pidkit.web.errors`), store access (:mod:`~pidkit.web.stores`,
:mod:`~pidkit.web.lookups`), content negotiation (:mod:`~pidkit.web.negotiation`), the body limit
(:mod:`~pidkit.web.middleware`), path convertors (:mod:`~pidkit.web.convertors`), the routers
(:mod:`~pidkit.web.resolver`, :mod:`~pidkit.web.api`, :mod:`~pidkit.web.pages`, EZID's API in
:mod:`~pidkit.web.ezid` below ``Settings.ezid_base``) and the resolver's
fast path (:mod:`~pidkit.web.fastpath`).

>>> from fastapi.testclient import TestClient
>>> with TestClient(create_app("sqlite:///:memory:")) as client:
...     client.get("/.well-known/ark").text
'/\\n'
"""

from __future__ import annotations

import gc
from collections.abc import Callable

from fastapi import FastAPI

from .. import __version__
from ..settings import Settings
from ..store import Store, open_store
from .api import router as api_router
from .apidocs import router as apidocs_router
from .asgi import ASGIApp, Message, Receive, Scope, Send
from .assets import router as assets_router
from .auth import router as auth_router
from .batch import LookupBatcher, in_thread
from .directory import router as directory_router
from .errors import UNAVAILABLE, install_error_handlers
from .ezid import ezid_router
from .fastpath import FastPathApp, RedirectCache
from .lookups import RegistryHolder, StoreLookup
from .middleware import BodyLimit
from .oai import router as oai_router
from .office import router as office_router
from .officeadmin import router as officeadmin_router
from .officeimport import router as officeimport_router
from .pages import router as pages_router
from .resolver import router as resolver_router
from .stores import StoreHolder, StoreUnavailableError

__all__ = [
    "ASGIApp",
    "Message",
    "Receive",
    "Scope",
    "Send",
    "StoreHolder",
    "StoreUnavailableError",
    "app_from_env",
    "create_app",
    "worker_app",
]

def create_app(
    store: str | Store | Callable[[], Store] | None = None,
    *,
    settings: Settings | None = None,
) -> FastAPI:
    """The ASGI app.  ``store`` is a store URL, an open :class:`~pidkit.store.Store` (not closed by the
    app) or a zero-argument factory; ``None`` uses ``settings.database_url`` / ``$PIDKIT_DATABASE_URL``.

    >>> create_app("sqlite:///:memory:").title
    'pidkit'
    """
    settings = settings or Settings()
    if isinstance(store, Store):
        opened = store
        holder = StoreHolder(lambda: opened, retry=settings.store_retry, owned=False)
    elif callable(store):
        holder = StoreHolder(store, retry=settings.store_retry)
    else:
        url = store or settings.database_url
        holder = StoreHolder(lambda: open_store(url), retry=settings.store_retry)

    app = FastPathApp(
        title="pidkit",
        version=__version__,
        summary="ARK resolver and naming service",
        description=(
            "Mint ARKs on a shoulder, bind them to targets with ERC metadata, tombstone them, import and "
            "export bindings as JSON Lines.  Every write needs an API key (`pidkit apikey create`) sent as "
            "`Authorization: Bearer <key>`, scoped to a NAAN and optionally a shoulder."
        ),
        docs_url=None,  # Swagger UI and ReDoc load assets from a CDN; the service serves no external assets
        redoc_url=None,
        # Starlette's slash redirect builds an absolute URL from the Host header (a forged Host would
        # choose where it points): a trailing-slash variant is a 404, no redirect is built from Host
        redirect_slashes=False,
    )
    app.add_middleware(BodyLimit, limit=settings.max_body, ezid_base=settings.ezid_base)
    app.state.stores = holder
    app.state.settings = settings
    app.state.lookups = LookupBatcher(in_thread(holder.get, timeout=settings.lookup_timeout),
                                      unavailable=UNAVAILABLE)
    app.state.lookup = StoreLookup(holder, app.state.lookups)
    app.state.registry = RegistryHolder(settings.registry_check)
    app.state.redirects = RedirectCache(settings.resolve_cache)
    app.router.add_event_handler("shutdown", holder.close)
    install_error_handlers(app)
    app.include_router(api_router)
    app.include_router(resolver_router)
    app.include_router(pages_router)
    app.include_router(oai_router)
    app.include_router(directory_router)
    app.include_router(auth_router)  # the back office (issue 14)
    app.include_router(office_router)
    app.include_router(officeadmin_router)
    app.include_router(officeimport_router)
    app.include_router(apidocs_router)  # the API's documentation for people, made from /openapi.json
    app.include_router(assets_router)
    app.include_router(ezid_router(settings.ezid_base))  # EZID's API v2 (issue 15)
    return app


def app_from_env() -> FastAPI:
    """The app configured from the environment (``uvicorn pidkit.web.app:app_from_env --factory``).

    >>> app_from_env().title
    'pidkit'
    """
    return create_app(settings=Settings.from_env())


def worker_app() -> FastAPI:
    """:func:`app_from_env` for a server process that runs only it (``pidkit serve``'s factory): once
    the app is built, one full collection, then every object there is (the modules, the routes, the
    app: some 90,000 tracked by the garbage collector) is moved out of the collector's generations
    (:func:`gc.freeze`).  A full collection while serving then reads only what serving made: 5–10 ms
    instead of 35–50 ms in a worker under load on the 2-core machine of ``docs/performance.md``, where
    such a pause delays every request waiting on the worker.  Nothing is leaked but cycles among the
    objects frozen, which a server keeps for its life anyway.

    >>> import gc
    >>> worker_app().title, gc.get_freeze_count() > 0
    ('pidkit', True)
    >>> gc.unfreeze()  # a test process is no server
    """
    app = app_from_env()
    gc.collect()
    gc.freeze()
    return app
