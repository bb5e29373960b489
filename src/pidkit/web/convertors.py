"""Path convertors, one per id type (starlette's ``{name:convertor}``), registered on import.

>>> import re
>>> bool(re.fullmatch(ArkPathConvertor.regex, "ARK:/1/x/y")), bool(re.fullmatch(PidConvertor.regex, "a/b"))
(True, False)
"""

from __future__ import annotations

from typing import Final

from starlette.convertors import Convertor, register_url_convertor

__all__ = ["ARK_PATH", "PID", "ArkPathConvertor", "PidConvertor"]

#: The convertor names routes use (``/{ark:arkpath}``, ``/id/{value:pid}``): registered below, on import.
ARK_PATH: Final = "arkpath"
PID: Final = "pid"


class ArkPathConvertor(Convertor[str]):
    """Matches a path that is an ARK: the label ``ark:`` in any case (§3.2 step 3) and the rest."""

    regex = "[aA][rR][kK]:.*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


class PidConvertor(Convertor[str]):
    """Matches one path segment naming a non-ARK id (XarkId, TID, UUID, GEDCOM UID, Library.Link id)."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor(ARK_PATH, ArkPathConvertor())
register_url_convertor(PID, PidConvertor())
