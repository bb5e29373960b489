"""MkDocs hooks of the documentation site (``mkdocs.yml``: ``hooks:``).

The pages mark some examples for ``tests/test_docs.py`` in the fence's info string, after the language
(```` ```console postgres ```` runs against PostgreSQL).  Python-Markdown's fences take a language only, so
the site drops those words before rendering; the test harness reads the pages as they are.

>>> strip_test_markers("```console postgres\\n$ pidkit --version\\n```\\n")
'```console\\n$ pidkit --version\\n```\\n'
>>> strip_test_markers("```python\\n>>> 1\\n1\\n```\\n")
'```python\\n>>> 1\\n1\\n```\\n'
"""

from __future__ import annotations

import re
from typing import Any, Final

#: Words ``tests/test_docs.py`` reads after a fence's language (see its module docstring).
TEST_MARKERS: Final = ("postgres",)
_MARKED_FENCE: Final = re.compile(
    r"^(```[A-Za-z0-9_+-]+)[ \t]+(?:" + "|".join(TEST_MARKERS) + r")[ \t]*$", re.MULTILINE
)


def strip_test_markers(markdown: str) -> str:
    """The page's Markdown with the test markers removed from its fences' info strings."""
    return _MARKED_FENCE.sub(r"\1", markdown)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs ``on_page_markdown`` event: fences with test markers become plain fences."""
    return strip_test_markers(markdown)
