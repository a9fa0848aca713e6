"""Result caches: per file content, and per run.

Both live in ``.hooklint_cache/`` (which holds a ``.gitignore`` of ``*``, so it
ignores itself), are written atomically (temporary file, then ``os.replace``), and
ignore an entry that cannot be read or decoded.

* The *content* cache: one JSON file per key of file content, configuration and
  hooklint's code, holding that file's violations.
* The *run index* (:class:`RunIndex`): for one set of options and paths, each file's
  modification time and size with its violations, as ruff keeps its cache.  A warm
  run stats the files, finds them unchanged, and answers without reading a file or
  loading a rule (the rules import libcst, which alone costs more than the rest).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from functools import lru_cache
from pathlib import Path

from hooklint.violation import Violation

DEFAULT_DIR = ".hooklint_cache"


@lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """hooklint's version and the size and modification time of each of its own
    sources, so that a changed rule (an upgrade, or an edit in a development
    checkout) never reads results another version wrote."""
    from hooklint import __version__

    parts = [__version__]
    for package in ("hooklint", "hooklint.fixes"):
        spec = importlib.util.find_spec(package)
        for top in (spec.submodule_search_locations or []) if spec else []:
            for directory, _, names in sorted(os.walk(top)):
                for name in sorted(n for n in names if n.endswith(".py")):
                    stat = os.stat(os.path.join(directory, name))
                    parts.append(f"{directory}/{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


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
    payload = json.dumps({"violations": [v.to_dict() for v in violations]})
    _write_atomically(Path(directory), _entry(directory, key), payload)


def _write_atomically(directory: Path, path: Path, payload: str) -> None:
    """Write ``payload`` to ``path`` (inside the cache ``directory``) through a
    temporary file and ``os.replace``; a cache that cannot be written only costs speed."""
    import tempfile

    try:
        _prepare(directory)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(payload)
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


def _prepare(directory: Path) -> None:
    if not directory.is_dir():
        directory.mkdir(parents=True, exist_ok=True)
        (directory / ".gitignore").write_text("# Created by hooklint\n*\n", encoding="utf-8")


class RunIndex:
    """Each file's ``(mtime_ns, size)`` and violations, for one run key (options and
    paths: see :func:`hooklint.runner.run_key`).  Files not seen in a run are dropped
    when it saves."""

    def __init__(self, directory: str, run_key: str) -> None:
        self.directory = Path(directory)
        self.path = self.directory / "runs" / f"{run_key}.json"
        self.entries: dict[str, list] = {}
        self.seen: dict[str, list] = {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(data.get("files"), dict):
                self.entries = data["files"]
        except (OSError, ValueError, AttributeError):
            pass

    def lookup(self, path: str, stamp: tuple[int, int]) -> list[Violation] | None:
        entry = self.entries.get(path)
        try:
            if entry is None or entry[0] != stamp[0] or entry[1] != stamp[1]:
                return None
            violations = [Violation.from_dict(item) for item in entry[2]]
        except (IndexError, KeyError, TypeError, ValueError):
            return None
        self.seen[path] = entry
        return violations

    def record(self, path: str, stamp: tuple[int, int], violations: list[Violation]) -> None:
        self.seen[path] = [stamp[0], stamp[1], [v.to_dict() for v in violations]]

    def save(self) -> None:
        if self.seen != self.entries:
            _write_atomically(self.directory, self.path, json.dumps({"files": self.seen}))
