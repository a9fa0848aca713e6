"""Where a rule's documentation lives on the web: its page, ``docs/rules/HLxxx.md``
(generated from the rule class by :mod:`hooklint.report.rule_docs`), in the repository
at the tag of this version (SARIF ``helpUri``, JSON ``url``, ``hooklint rules --format
json``, the editor's hover).

``REPOSITORY`` is the one place that names the repository.
"""

from __future__ import annotations

from hooklint import __version__

REPOSITORY = "https://github.com/hooklint/hooklint"
#: The folder of the rule pages, from the repository root.
DOCS_DIR = "docs/rules"


def rule_page(code: str) -> str:
    """The path of rule ``code``'s page from the repository root: ``docs/rules/HL001.md``."""
    return f"{DOCS_DIR}/{code.upper()}.md"


def rule_url(code: str) -> str:
    """The documentation of rule ``code``: ``docs/rules/HL001.md`` at tag ``v<version>``."""
    return f"{REPOSITORY}/blob/v{__version__}/{rule_page(code)}"
