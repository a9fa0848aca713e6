"""Result caches: per file content, and per run.

Both live in ``.hooklint_cache/`` (which holds a ``.gitignore`` of ``*``, so it
ignores itself), are written by :func:`hooklint.writer.replace_atomically` into
real directories only (never through a symlink), and treat an entry that cannot be
read, is not JSON, is too deeply nested to decode or does not validate (a field of
the wrong type) as a miss: the file is checked again and the entry rewritten.

* The *content* cache: one JSON file per key of file content, of everything else
  that decides that file's result (the rules that apply to its path after
  per-file-ignores, the rule context, the fix options: see
  :meth:`hooklint.engine.Settings.fingerprint`) and of hooklint's code, holding
  that file's violations.
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
import stat
import sys
from functools import cache
from pathlib import Path

TYPE_CHECKING = False  # `typing` stays unimported on the pre-commit path
if TYPE_CHECKING:  # annotations only: the module imports them where it reads an entry
    from hooklint.violation import Fix, Location, Violation

# hooklint.violation (and dataclasses) are imported where an entry's violations are read:
# a run index of clean files is read and written without them.

DEFAULT_DIR = ".hooklint_cache"


@cache
def code_fingerprint() -> str:
    """hooklint's version and the size and modification time of each of its own
    sources, so that a changed rule (an upgrade, or an edit in a development
    checkout) never reads results another version wrote; and the Python and the
    libcst that parse (a newer one accepts syntax an older one reports as HL000)."""
    from hooklint import __version__

    parts = [__version__, sys.version]
    for package in ("hooklint", "hooklint.fixes"):
        spec = importlib.util.find_spec(package)
        for top in (spec.submodule_search_locations or []) if spec else []:
            for directory, _, names in sorted(os.walk(top)):
                for name in sorted(n for n in names if n.endswith(".py")):
                    status = os.stat(os.path.join(directory, name))
                    parts.append(f"{directory}/{name}:{status.st_size}:{status.st_mtime_ns}")
    parser = importlib.util.find_spec("libcst")
    for top in (parser.submodule_search_locations or []) if parser else []:
        for name in ("__init__.py", "_version.py"):
            try:
                status = os.stat(os.path.join(top, name))
            except OSError:
                continue
            parts.append(f"{top}/{name}:{status.st_size}:{status.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def run_key(request, max_file_size: int) -> str:
    """The run index's key: what a run's results depend on besides the files themselves:
    hooklint's code, the options as given (rule selection is resolved from them), the
    paths, and the working directory (per-file-ignores also match the path as shown,
    relative to it).  ``request``: a :class:`hooklint.runner.CheckRequest` (or what has
    its ``config``, ``paths``, ``select``, ``extend_select`` and ``ignore``)."""
    config = request.config
    inputs = (
        code_fingerprint(),
        request.select if request.select is not None else config.select,
        list(config.extend_select) + request.extend_select,
        list(config.ignore) + request.ignore,
        config.preview,
        sorted((k, list(v)) for k, v in config.per_file_ignores.items()),
        config.exclude,
        config.extend_exclude,
        config.effective_target_torch,
        list(config.registration_wrappers),
        getattr(config, "cross_file", True),
        str(config.root),
        sorted(os.path.abspath(p) for p in request.paths),
        os.getcwd(),
        max_file_size,
    )
    return hashlib.sha256(repr(inputs).encode()).hexdigest()


def key(raw: bytes, fingerprint: str) -> str:
    digest = hashlib.sha256(fingerprint.encode())
    digest.update(b"\0")
    digest.update(raw)
    return digest.hexdigest()


def _entry(directory: str, key: str) -> Path:
    return Path(directory) / key[:2] / f"{key}.json"


def load(directory: str, key: str) -> list[Violation] | None:
    """The entry's violations; None (a miss) when it is absent, unreadable, not JSON,
    too deeply nested to decode, or JSON of another shape."""
    found = load_with_dependencies(directory, key)
    return found[0] if found is not None else None


def load_with_dependencies(directory: str, key: str) -> tuple[list[Violation], dict[str, str]] | None:
    """The entry's violations and the other files they rest on (cross-file evidence:
    path → content digest); a miss too when any of those files changed."""
    data = _read_json(_entry(directory, key))
    if not isinstance(data, dict):
        return None
    dependencies = data.get("dependencies", {})
    if not _unchanged(dependencies):
        return None
    violations = violations_from(data.get("violations"))
    return (violations, dependencies) if violations is not None else None


def _unchanged(dependencies) -> bool:
    from hooklint.project.store import file_digest

    if not isinstance(dependencies, dict):
        return False
    return all(isinstance(d, str) and file_digest(p) == d for p, d in dependencies.items())


def store(
    directory: str, key: str, violations: list[Violation], dependencies: dict[str, str] | None = None
) -> None:
    entry: dict = {"violations": [v.to_dict() for v in violations]}
    if dependencies:
        entry["dependencies"] = dependencies
    _write_atomically(Path(directory), _entry(directory, key), json.dumps(entry))


def _read_json(path: Path):
    """A cache file's JSON, or None: only a regular file is read (a symlink or a FIFO
    planted in the cache is a miss, not a hang), and nothing it holds raises."""
    from hooklint.writer import WriteRefused, read_regular

    try:
        raw, _ = read_regular(path)
        return json.loads(raw)
    except (OSError, WriteRefused, ValueError, RecursionError, MemoryError):
        return None


def violations_from(items) -> list[Violation] | None:
    """Violations from their JSON form, checking every field's type; None if any is wrong."""
    if not isinstance(items, list):
        return None
    violations = []
    for item in items:
        violation = _violation_from(item)
        if violation is None:
            return None
        violations.append(violation)
    return violations


_TEXT_FIELDS = ("code", "name", "message", "path", "source_line")


def _violation_from(data) -> Violation | None:
    from hooklint.violation import Violation

    if not isinstance(data, dict) or not all(isinstance(data.get(f), str) for f in _TEXT_FIELDS):
        return None
    start, end = _location(data.get("start")), _location(data.get("end"))
    withheld = data.get("fix_withheld")
    if start is None or end is None or not (withheld is None or isinstance(withheld, str)):
        return None
    fix = data.get("fix")
    if fix is not None:
        fix = _fix_from(fix)
        if fix is None:
            return None
    related = data.get("related", [])
    if not isinstance(related, list):
        return None
    related = [_place(r) if isinstance(r, dict) and "path" in r else _location(r) for r in related]
    if any(r is None for r in related):
        return None
    cell = data.get("cell")
    if not (cell is None or type(cell) is int and cell >= 1):
        return None
    return Violation(
        data["code"],
        data["name"],
        data["message"],
        data["path"],
        start,
        end,
        fix,
        withheld,
        data["source_line"],
        tuple(related),
        cell,
    )


def _fix_from(data) -> Fix | None:
    from hooklint.violation import SAFE, UNSAFE, Edit, Fix

    if not isinstance(data, dict) or not isinstance(data.get("message"), str):
        return None
    if data.get("applicability") not in (SAFE, UNSAFE) or not isinstance(data.get("edits"), list):
        return None
    edits = []
    for edit in data["edits"]:
        if not isinstance(edit, dict) or not isinstance(edit.get("content"), str):
            return None
        start, end = _location(edit.get("start")), _location(edit.get("end"))
        if start is None or end is None:
            return None
        edits.append(Edit(start, end, edit["content"]))
    return Fix(data["message"], data["applicability"], tuple(edits))


def _location(data) -> Location | None:
    from hooklint.violation import Location

    if not isinstance(data, dict) or set(data) != {"line", "column"}:
        return None
    line, column = data["line"], data["column"]
    if type(line) is not int or type(column) is not int or line < 1 or column < 1:
        return None
    return Location(line, column)


def _place(data) -> Location | None:
    from hooklint.violation import Place

    if not isinstance(data, dict) or not isinstance(data.get("path"), str):
        return None
    location = _location({k: v for k, v in data.items() if k != "path"})
    return Place(location.line, location.column, data["path"]) if location is not None else None


def _write_atomically(directory: Path, path: Path, payload: str) -> None:
    """Write ``payload`` to ``path`` (one level inside the cache ``directory``) with
    :func:`hooklint.writer.replace_atomically`.  Only real directories are written
    into: a cache directory, or a subdirectory of it, that is a symlink (planted in a
    repository, say) is not written to.  A cache that cannot be written only costs speed."""
    from hooklint.writer import WriteRefused, replace_atomically

    try:
        _prepare(directory)
        if not _is_real_directory(directory):
            return
        try:
            path.parent.mkdir()
        except FileExistsError:
            pass
        if _is_real_directory(path.parent):
            replace_atomically(path, payload.encode("utf-8"))
    except (OSError, WriteRefused):
        pass


def _is_real_directory(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _prepare(directory: Path) -> None:
    if not os.path.lexists(directory):
        from hooklint.writer import replace_atomically

        directory.mkdir(parents=True, exist_ok=True)
        replace_atomically(directory / ".gitignore", b"# Created by hooklint\n*\n")


class RunIndex:
    """Each file's ``(mtime_ns, size)`` and violations, for one run key (options and
    paths: see :func:`hooklint.runner.run_key`).  Files not seen in a run are dropped
    when it saves."""

    def __init__(self, directory: str, run_key: str) -> None:
        self.directory = Path(directory)
        self.path = self.directory / "runs" / f"{run_key}.json"
        self.entries: dict[str, list] = {}
        self.seen: dict[str, list] = {}
        data = _read_json(self.path)
        if isinstance(data, dict) and isinstance(data.get("files"), dict):
            self.entries = data["files"]

    def lookup(self, path: str, stamp: tuple[int, int]) -> list[Violation] | None:
        """The violations recorded for ``path`` at this ``stamp``; None (a miss, and the
        file is checked and recorded again) when absent, stale or of another shape."""
        entry = self.entries.get(path)
        if (
            not isinstance(entry, list)
            or len(entry) not in (3, 4)
            or [entry[0], entry[1]] != [stamp[0], stamp[1]]
        ):
            return None
        if len(entry) == 4 and not _stamps_unchanged(entry[3]):
            return None  # a file whose summary this result used has changed
        violations = violations_from(entry[2])
        if violations is not None:
            self.seen[path] = entry
        return violations

    def record(
        self,
        path: str,
        stamp: tuple[int, int],
        violations: list[Violation],
        dependencies: dict[str, str] | None = None,
    ) -> None:
        self.seen[path] = [stamp[0], stamp[1], [v.to_dict() for v in violations]]
        if dependencies:
            self.seen[path].append({p: _stamp(p) for p in dependencies})

    def save(self) -> None:
        try:
            same = self.seen == self.entries
        except RecursionError:  # an index of the wrong shape, nested as deep as json allows
            same = False
        if not same:
            _write_atomically(self.directory, self.path, json.dumps({"files": self.seen}))


def _stamp(path: str) -> list[int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return [status.st_mtime_ns, status.st_size]


def _stamps_unchanged(stamps) -> bool:
    """Each dependency of a run-index entry has the modification time and size it had."""
    return isinstance(stamps, dict) and all(_stamp(p) == s for p, s in stamps.items() if isinstance(p, str))
