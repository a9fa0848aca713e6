"""A result cache keyed by file content, configuration and hooklint version.

Entries live in ``.hooklint_cache/`` (which holds a ``.gitignore`` of ``*``, so it
ignores itself), one JSON file per key, written atomically (temporary file, then
``os.replace``).  An entry that cannot be read or decoded is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from hooklint.violation import Violation

DEFAULT_DIR = ".hooklint_cache"


def key(raw: bytes, fingerprint: str) -> str:
    digest = hashlib.sha256(fingerprint.encode())
    digest.update(b"\0")
    digest.update(raw)
    return digest.hexdigest()


def _entry(directory: str, key: str) -> Path:
    return Path(directory) / key[:2] / f"{key}.json"


def load(directory: str, key: str) -> list[Violation] | None:
    try:
        data = json.loads(_entry(directory, key).read_text(encoding="utf-8"))
        return [Violation.from_dict(item) for item in data["violations"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(directory: str, key: str, violations: list[Violation]) -> None:
    entry = _entry(directory, key)
    try:
        _prepare(Path(directory))
        entry.parent.mkdir(parents=True, exist_ok=True)
        payload = json.dumps({"violations": [v.to_dict() for v in violations]})
        handle, temporary = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(payload)
        os.replace(temporary, entry)
    except OSError:
        pass  # a cache that cannot be written only costs speed


def _prepare(directory: Path) -> None:
    if not directory.is_dir():
        directory.mkdir(parents=True, exist_ok=True)
        (directory / ".gitignore").write_text("# Created by hooklint\n*\n", encoding="utf-8")
