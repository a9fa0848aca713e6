"""What a run leaves out: the default excludes, the exclude globs' test for a path,
and the size limit.

Light on purpose (``os`` only; ``fnmatch`` for a glob that needs it): the console
script's pre-commit path (:mod:`hooklint.entry`) applies ``--force-exclude`` with it.
"""

from __future__ import annotations

import os

DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".bzr",
    ".venv",
    "venv",
    ".env",
    "env",
    ".tox",
    ".nox",
    ".eggs",
    "*.egg-info",
    "build",
    "dist",
    "__pycache__",
    "site-packages",
    "node_modules",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".hooklint_cache",
    "_build",
    "buck-out",
    ".ipynb_checkpoints",
    "__pypackages__",
)
#: Files larger than this are not read (``max-file-size``): libcst needs about 2 GB per
#: MB of source, and a generated file that big is rarely hand-written hook code.
DEFAULT_MAX_FILE_SIZE = 4 * 1024 * 1024

_MAGIC = frozenset("*?[")


def _matches(text: str, pattern: str) -> bool:
    """``fnmatch.fnmatchcase(text, pattern)``, without importing ``fnmatch`` (and ``re``)
    for a pattern without wildcards or one whose only wildcard is a leading ``*``
    (``*.egg-info``: ``*`` matches any characters, ``/`` included)."""
    if _MAGIC.isdisjoint(pattern):
        return text == pattern
    if pattern[0] == "*" and _MAGIC.isdisjoint(pattern[1:]):
        return text.endswith(pattern[1:])
    import fnmatch

    return fnmatch.fnmatchcase(text, pattern)


def is_excluded(path, excludes, root) -> bool:
    """Whether ``path`` (absolute) or a directory above it, up to ``root``, matches the
    default excludes or one of ``excludes``, by name or by its path relative to
    ``root`` (as the directory walk applies them)."""
    patterns = (*DEFAULT_EXCLUDES, *excludes)
    absolute = os.path.abspath(path)
    prefix = os.path.join(os.path.abspath(root), "")
    relative = absolute[len(prefix) :] if absolute.startswith(prefix) else absolute
    parts = [p for p in relative.replace(os.sep, "/").split("/") if p]
    for depth in range(1, len(parts) + 1):
        name, below = parts[depth - 1], "/".join(parts[:depth])
        if not absolute.startswith(prefix):
            below = "/" + below
        if any(_matches(name, p) or _matches(below, p) for p in patterns):
            return True
    return False
