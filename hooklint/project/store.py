"""Module summaries, cached by file content and hooklint's code.

A summary comes in two tiers: the *outline* (imports, classes, bases, methods, which
functions hold hook tokens), read for every module resolution passes through, and
the *full* summary with the hook facts, computed only for a module one of whose
hook-token functions a checked file reaches.  Each is computed once per content: kept in memory for the process (keyed by
path, modification time and size, so a worker that checks many files reads each
imported module once) and, when a cache directory is in use, on disk next to the
result cache (``.hooklint_cache/summaries/``), written by the same atomic writer.
An entry that cannot be read or is not a summary is a miss and is rewritten.

The outline of a file that is checked comes from the parse its lint made
(:func:`remember`), when the text checked is the file's content.  Within one run the
worker processes share what they computed (:func:`sharing`, :func:`take_new`,
:func:`adopt`: :mod:`hooklint.engine.parallel` passes it along with the next chunk of
files), so that a cold run summarises each module about once, not once per worker.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from hooklint.project import summary as _summary

#: Summaries of larger files are not computed (the module stays unknown).
MAX_SUMMARY_SIZE = 4 * 1024 * 1024


@dataclass(frozen=True)
class Summarised:
    path: str
    digest: str  # of the file's bytes: what a dependent result records
    data: dict


_memory: dict[tuple[str, bool], tuple[tuple[int, int], Summarised | None]] = {}
#: What this process computed since the last :func:`take_new` (None: not collected).
_new: list | None = None


def sharing(on: bool) -> None:
    """Collect (``on``) or stop collecting what this process computes, for
    :func:`take_new`."""
    global _new
    _new = [] if on else None


def take_new() -> list:
    """The memory entries computed since the last call (picklable), for the other
    workers of the run; empty when not collecting."""
    global _new
    if not _new:
        return []
    found, _new = _new, []
    return found


def adopt(entries: list) -> None:
    """Entries another worker computed (:func:`take_new`), for the modules this process
    has none of: each is used while its file keeps the modification time and size it
    was computed for (:func:`load` checks)."""
    for key, stamp, found in entries:
        if key not in _memory:
            _memory[key] = (stamp, found)


def _keep(key: tuple[str, bool], stamp: tuple[int, int], found: Summarised | None) -> None:
    _memory[key] = (stamp, found)
    if _new is not None:
        _new.append((key, stamp, found))


def content_digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def file_digest(path: str) -> str | None:
    """The digest of a file's current bytes, None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return content_digest(handle.read())
    except OSError:
        return None


def _key(digest: str, full: bool) -> str:
    from hooklint.cache import code_fingerprint

    kind = "full" if full else "outline"
    return hashlib.sha256(
        f"summary-{_summary.VERSION}-{kind}\0{code_fingerprint()}\0{digest}".encode()
    ).hexdigest()


def load(path: str, cache_dir: str | None, full: bool = False) -> Summarised | None:
    """The summary of the module at ``path`` (``full``: with its hook facts, else the
    outline); None when it cannot be read."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    stamp = (status.st_mtime_ns, status.st_size)
    known = _memory.get((path, full))
    if known is not None and known[0] == stamp:
        return known[1]
    found = _compute(path, status.st_size, cache_dir, full)
    _keep((path, full), stamp, found)
    return found


def known_outline(path: str, raw: bytes) -> dict | None:
    """The outline this process keeps for the module at ``path`` when it was computed
    from these bytes (another file's resolution read the module before it was
    checked), else None."""
    known = _memory.get((path, False))
    if known is None or known[1] is None or known[1].digest != content_digest(raw):
        return None
    return known[1].data


def remember(path: str, text: str, outline: dict) -> None:
    """Keep ``outline``, which a check computed from ``text`` (the lint's own parse), as
    the outline of the module at ``path`` when ``text`` is what the file holds (an
    editor's unsaved buffer is not), so that resolving another file's imports does
    not parse it again."""
    from hooklint.files import SourceError, read_source

    if not path.endswith(".py"):
        return  # a notebook is never imported
    try:
        status = os.stat(path)
    except OSError:
        return
    stamp = (status.st_mtime_ns, status.st_size)
    known = _memory.get((path, False))
    if (known is not None and known[0] == stamp) or status.st_size > MAX_SUMMARY_SIZE:
        return
    try:
        source = read_source(Path(path), MAX_SUMMARY_SIZE)
    except (SourceError, OSError):
        return
    if source.text != text:
        return
    _keep((path, False), stamp, Summarised(path, content_digest(source.raw), outline))


def source_text(path: str) -> tuple[str, str] | None:
    """``(digest, text)`` of the module at ``path``; None when it cannot be read or is
    too large to summarise."""
    from hooklint.files import SourceError, read_source

    try:
        if os.stat(path).st_size > MAX_SUMMARY_SIZE:
            return None
        source = read_source(Path(path), MAX_SUMMARY_SIZE)
    except (SourceError, OSError):
        return None
    return content_digest(source.raw), source.text


def _compute(path: str, size: int, cache_dir: str | None, full: bool) -> Summarised | None:
    from hooklint.files import SourceError, read_source

    if size > MAX_SUMMARY_SIZE:
        return None
    try:
        source = read_source(Path(path), MAX_SUMMARY_SIZE)
    except (SourceError, OSError):
        return None
    digest = content_digest(source.raw)
    entry = _entry(cache_dir, _key(digest, full)) if cache_dir else None
    if entry is not None:
        data = _read(entry)
        if data is not None:
            return Summarised(path, digest, data)
    data = _summary.summarise(source.text, hook_facts=full)
    if entry is not None:
        from hooklint.cache import _prepare, _write_atomically

        try:
            _prepare(
                Path(cache_dir)
            )  # the cache directory and its .gitignore, as the result cache makes them
        except OSError:
            return Summarised(path, digest, data)
        _write_atomically(Path(cache_dir) / "summaries", entry, json.dumps(data))
    return Summarised(path, digest, data)


def _entry(cache_dir: str, key: str) -> Path:
    return Path(cache_dir) / "summaries" / key[:2] / f"{key}.json"


def _read(entry: Path) -> dict | None:
    from hooklint.cache import _read_json

    data = _read_json(entry)
    return data if _summary.is_summary(data) else None
