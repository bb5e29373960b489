"""``pidkit`` commands: ark (being written)."""

from __future__ import annotations

from ._common import Subparsers


def register(sub: Subparsers) -> None:
    """Add this module's commands to ``sub``."""
