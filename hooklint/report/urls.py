"""Where a rule's documentation lives on the web: the section of ``docs/rules.md`` that
holds it, in the repository at the tag of this version (SARIF ``helpUri``, JSON
``url``, ``hooklint rules --format json``).

``REPOSITORY`` is the one place that names the repository.
"""

from __future__ import annotations

from hooklint import __version__

REPOSITORY = "https://github.com/hooklint/hooklint"
DOCS_PAGE = "docs/rules.md"


def rule_url(code: str) -> str:
    """The documentation of rule ``code``: ``docs/rules.md#hl001`` at tag ``v<version>``."""
    return f"{REPOSITORY}/blob/v{__version__}/{DOCS_PAGE}#{code.lower()}"
