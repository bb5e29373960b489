"""The demo data of ``pidkit serve --demo`` (``make demo``): NAAN 99999 (the shared "test ids" NAAN,
draft-kunze-ark-40 §2.3), shoulder ``fk4``, a minter and a few bindings with ERC metadata — one
public, one with suffix passthrough, one tombstoned — plus a XarkId and a TID for ``/id/…``, and the
demo API key and the demo's back-office user.  Store work, below both the CLI and the web.

Seeding is idempotent: the NAAN, the minter and the bindings are created once; later runs only
report what is there.

>>> from pidkit.store import open_store
>>> with open_store("sqlite:///:memory:") as store:
...     first = seed_demo(store)
...     again = seed_demo(store)
>>> [d.role for d in first] == [d.role for d in again] == ["public", "passthrough", "tombstoned"]
True
>>> first == again
True
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Final

from ..errors import NotFoundError
from .base import Store
from .records import Erc

DEMO_NAAN: Final = "99999"
DEMO_SHOULDER: Final = "fk4"
DEMO_MINTER: Final = "demo-fk4"
#: NOID template: shoulder fk4, random order, 7 characters and a check character.
DEMO_TEMPLATE: Final = "fk4.reedeedk"
#: A fixed seed, so every fresh demo mints the same ARKs.
DEMO_SEED: Final = 20_240_501
DEMO_KEY_LABEL: Final = "demo"
#: The demo's back-office user (NAAN 99999; a new password each time the demo starts).
DEMO_USER: Final = "demo"
#: Ids of other kinds bound in the demo (the XarkId and TID examples of their seeds).
DEMO_XARKID: Final = "AYvP5WgA-_-_ASNFZ4mr"
DEMO_TID: Final = "3jzfcijpj2z2a"

_SUPPORT: Final = Erc(
    who="pidkit demo",
    what="Not Guaranteed: demo data on the shared test NAAN 99999",
    when="2024",
    where="https://arks.org/about/testing-arks/",
)
_ROLES: Final = ("public", "passthrough", "tombstoned")


@dataclass(frozen=True, slots=True)
class DemoArk:
    """One demo ARK, its role and its target (``None`` once tombstoned)."""

    ark: str
    role: str
    target: str | None


def seed_demo(store: Store) -> list[DemoArk]:
    """Create the demo NAAN, minter and bindings if missing; return the demo ARKs."""
    try:
        store.get_naan(DEMO_NAAN)
    except NotFoundError:
        store.add_naan(DEMO_NAAN, "pidkit demo (test ids)", shoulders=[DEMO_SHOULDER])
    try:
        store.get_minter(DEMO_MINTER)
    except NotFoundError:
        store.create_minter(DEMO_MINTER, naan=DEMO_NAAN, template=DEMO_TEMPLATE, seed=DEMO_SEED)
        public, passthrough, gone = store.mint(DEMO_MINTER, 3)
        store.bind(public, "https://example.org/demo/rhythm", support=_SUPPORT, erc=Erc(
            who="Austin, Larry", what="A Study of Rhythm in Bach's Orgelbüchlein", when="1952"))
        store.bind(passthrough, "https://example.org/demo/collection/", passthrough=True, support=_SUPPORT,
                   erc=Erc(who="pidkit demo", what="A collection: any suffix passes through", when="2024"))
        store.bind(gone, "https://example.org/demo/withdrawn", support=_SUPPORT,
                   erc=Erc(who="pidkit demo", what="An object that was withdrawn", when="2024"))
        store.tombstone(gone, "withdrawn to demonstrate a tombstone")
        store.bind_id("xarkid", DEMO_XARKID, "https://example.org/demo/xarkid",
                      erc=Erc(what="A record identified by a XarkId"))
        store.bind_id("tid", DEMO_TID, "https://example.org/demo/tid",
                      erc=Erc(what="A record identified by a TID"))
    out: list[DemoArk] = []
    for b in store.list_bindings(DEMO_NAAN, shoulder=DEMO_SHOULDER, limit=100):
        role = "tombstoned" if b.is_tombstoned else "passthrough" if b.passthrough else "public"
        out.append(DemoArk(b.key, role, None if b.is_tombstoned else b.target))
    return sorted(out, key=lambda d: (_ROLES.index(d.role), d.ark))


def new_demo_key(store: Store) -> str:
    """Revoke earlier demo API keys and create a fresh one for NAAN 99999; return its secret (shown once).

    >>> from pidkit.store import open_store
    >>> with open_store("sqlite:///:memory:") as store:
    ...     a, b = new_demo_key(store), new_demo_key(store)
    ...     store.verify_api_key(a) is None, store.verify_api_key(b) is not None
    (True, True)
    """
    for key in store.list_api_keys():
        if key.label == DEMO_KEY_LABEL and not key.revoked:
            store.revoke_api_key(key.key_id)
    return store.create_api_key(DEMO_NAAN, label=DEMO_KEY_LABEL)[1]


def new_demo_user(store: Store) -> tuple[str, str]:
    """Create the demo user (NAAN 99999) or give it a new password; return its name and password (shown
    once, like the demo key: a demo left running keeps no guessable sign-in).

    >>> from pidkit.store import open_store
    >>> with open_store("sqlite:///:memory:") as store:
    ...     name, first = new_demo_user(store)
    ...     _, second = new_demo_user(store)
    ...     name, first != second, store.sign_in(name, second, address="doc")[0].naan
    ('demo', True, '99999')
    """
    password = "-".join(secrets.token_hex(3) for _ in range(4))
    try:
        store.get_user(DEMO_USER)
    except NotFoundError:
        store.add_user(DEMO_USER, password, naan=DEMO_NAAN)
    else:
        store.set_password(DEMO_USER, password)
    return DEMO_USER, password
