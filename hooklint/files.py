"""From paths on the command line to Python sources: walking, excludes, ``.gitignore``,
reading and decoding.

Directories yield ``*.py``, ``*.pyi`` and ``*.ipynb`` files (notebooks: see
:mod:`hooklint.notebook`), skipping default excludes (VCS folders,
virtualenvs, build outputs, caches, ``site-packages``), configured excludes and what
``.gitignore`` files ignore.  A file named explicitly is always checked.
"""

from __future__ import annotations

import codecs
import fnmatch
import io
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from hooklint.excludes import DEFAULT_EXCLUDES, DEFAULT_MAX_FILE_SIZE  # noqa: F401  (re-exported)

PYTHON_SUFFIXES = (".py", ".pyi")
#: What a directory walk yields: Python files and Jupyter notebooks, as ruff does.
SOURCE_SUFFIXES = PYTHON_SUFFIXES + (".ipynb",)
#: A notebook's file may be this many times ``max-file-size`` (its outputs, images
#: included, are not code); its code cells together may be ``max-file-size``.
NOTEBOOK_SIZE_FACTOR = 16


class SourceError(Exception):
    """A file that cannot be checked; the message is the one-line diagnostic."""


@dataclass(frozen=True)
class SourceFile:
    """A decoded file, with what is needed to write it back unchanged in form."""

    path: Path
    raw: bytes
    text: str
    encoding: str
    bom: bool
    #: For a notebook, its :class:`hooklint.notebook.Notebook` (``text`` is then the
    #: joined code of its code cells).
    notebook: object = field(default=None, compare=False)

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


def read_source(path: Path, max_size: int | None = None) -> SourceFile:
    """Read and decode a Python file as CPython would (PEP 263 cookie, BOM).

    Only regular files are read (a FIFO or a device would block or never end), and
    none larger than ``max_size`` bytes.  A notebook (``.ipynb``) is read as such."""
    notebook = path.suffix == ".ipynb"
    code_limit = max_size
    if notebook and max_size is not None:
        max_size *= NOTEBOOK_SIZE_FACTOR
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise SourceError("no such file") from None
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise SourceError("is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise SourceError(f"not a regular file ({_kind(info.st_mode)}); only regular files are read")
    if max_size is not None and info.st_size > max_size:
        raise SourceError(_too_big(info.st_size, max_size))
    try:
        # O_NONBLOCK: should the path have become a FIFO since the stat, opening it
        # does not wait for a writer.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with open(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise SourceError("not a regular file; only regular files are read")
            raw = handle.read() if max_size is None else handle.read(max_size + 1)
    except FileNotFoundError:
        raise SourceError("no such file") from None
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    if max_size is not None and len(raw) > max_size:
        raise SourceError(_too_big(len(raw), max_size))
    if notebook:
        source = decode_file(path, raw)
        if code_limit is not None and len(source.text) > code_limit:
            raise SourceError(
                f"too large to check (its code cells hold {len(source.text)} characters, over `max-file-size` = {code_limit}); skipped"
            )
        return source
    return decode_source(path, raw)


def decode_file(path: Path, raw: bytes) -> SourceFile:
    """:func:`decode_source`, or for a notebook its code cells (:mod:`hooklint.notebook`)."""
    if path.suffix == ".ipynb":
        from hooklint.notebook import read_notebook

        return read_notebook(path, raw)
    return decode_source(path, raw)


def _too_big(size: int, limit: int) -> str:
    return f"too large to check ({size} bytes, over `max-file-size` = {limit}); skipped"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a plain file"


def decode_source(path: Path, raw: bytes) -> SourceFile:
    if b"\x00" in raw:
        raise SourceError("binary file (contains NUL bytes), not Python source")
    bom = raw.startswith(codecs.BOM_UTF8)
    if b"coding" not in raw[: raw.find(b"\n", raw.find(b"\n") + 1) + 1 or len(raw)]:
        # No encoding cookie on the first two lines: UTF-8, as tokenize.detect_encoding
        # says when they decode (tokenize is imported only for a cookie or a bad byte).
        try:
            return SourceFile(
                path,
                raw,
                raw[len(codecs.BOM_UTF8) :].decode("utf-8") if bom else raw.decode("utf-8"),
                "utf-8",
                bom,
            )
        except UnicodeDecodeError:
            pass  # detect_encoding and the decoding below say which byte, as before
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        raise SourceError(f"bad encoding declaration: {exc.msg}") from None
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    body = raw[len(codecs.BOM_UTF8) :] if bom else raw
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        raise SourceError(
            f"cannot decode as {encoding}: byte 0x{raw[exc.start]:02x} at offset {exc.start}"
        ) from None
    except LookupError:
        raise SourceError(f"unknown encoding {encoding!r}") from None
    return SourceFile(path, raw, text, encoding, bom)


class _GitIgnore:
    """The subset of gitignore semantics that matters for source trees: globs,
    ``**``, anchored patterns (containing ``/``), directory-only patterns (trailing
    ``/``) and negation (``!``)."""

    def __init__(self, base: Path, lines: list[str]) -> None:
        self.base = base
        self.prefix = os.path.join(str(base), "")
        self.patterns: list[tuple[re.Pattern, bool, bool]] = []
        for line in lines:
            line = line.rstrip("\n").rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.strip("/") if dir_only else line
            anchored = "/" in line.rstrip("/")
            line = line.lstrip("/")
            regex = _glob_to_regex(line)
            if not anchored:
                regex = r"(?:.*/)?" + regex
            self.patterns.append((re.compile(regex + r"\Z"), negate, dir_only))

    def ignores(self, path: str, is_dir: bool) -> bool | None:
        """The verdict on an absolute path (a string), or None when no pattern speaks."""
        relative = _below(path, self.prefix)
        if relative is None:
            return None
        verdict = None
        for regex, negate, dir_only in self.patterns:
            if dir_only and not is_dir:
                continue
            if regex.match(relative):
                verdict = not negate
        return verdict


def _below(path: str, prefix: str) -> str | None:
    """``path`` relative to the directory ``prefix`` (which ends in a separator), with
    ``/`` separators; None when it is not below it."""
    return _posix(path[len(prefix) :]) if path.startswith(prefix) else None


def _posix(path: str) -> str:
    return path.replace(os.sep, "/") if os.sep != "/" else path


def _glob_to_regex(pattern: str) -> str:
    parts = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            parts.append(r"(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            parts.append(r".*")
            i += 2
        elif pattern[i] == "*":
            parts.append(r"[^/]*")
            i += 1
        elif pattern[i] == "?":
            parts.append(r"[^/]")
            i += 1
        else:
            parts.append(re.escape(pattern[i]))
            i += 1
    return "".join(parts)


def _load_gitignore(directory: Path) -> _GitIgnore | None:
    candidate = directory / ".gitignore"
    try:
        return _GitIgnore(directory, candidate.read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return None


def _exclude_matcher(patterns) -> re.Pattern:
    """One regex for all exclude globs (``fnmatch`` per pattern and entry is slow)."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns) or r"(?!)")


def discover(paths: list[Path], excludes: list[str], root: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Files to check, sorted, and (path, problem) for paths that cannot be walked
    (a missing path, an unreadable directory, a name the system refuses)."""
    found: set[str] = set()
    problems: list[tuple[Path, str]] = []
    all_excludes = tuple(DEFAULT_EXCLUDES) + tuple(excludes)
    for path in paths:
        try:
            info = os.stat(path)
        except FileNotFoundError:
            if os.path.islink(path):
                found.add(os.path.abspath(path))  # a dangling link: reading it says so
            else:
                problems.append((path, "no such file or directory"))
            continue
        except OSError as exc:  # ENAMETOOLONG, EACCES on a parent directory, ELOOP...
            problems.append((path, f"cannot read: {exc.strerror or exc}"))
            continue
        if stat.S_ISDIR(info.st_mode):
            found.update(_walk(path, all_excludes, root, problems))
        else:
            found.add(os.path.abspath(path))  # named explicitly: always checked
    return [Path(p) for p in sorted(found)], problems


def _walk(top: Path, exclude_globs: tuple[str, ...], root: Path, problems: list[tuple[Path, str]]):
    """Absolute paths (strings: a walk over thousands of entries should not build a
    Path for each) of the Python files under ``top``; a directory that cannot be
    listed is added to ``problems`` (and not silently skipped)."""
    ignores: list[_GitIgnore] = []
    top_path = os.path.abspath(top)
    for parent in reversed([Path(top_path), *Path(top_path).parents]):
        loaded = _load_gitignore(parent)
        if loaded is not None:
            ignores.append(loaded)
    excludes = _exclude_matcher(exclude_globs)
    root_prefix = os.path.join(os.path.abspath(root), "")
    stack = [(top_path, ignores)]
    while stack:
        directory, inherited = stack.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            problems.append(
                (Path(display_path(Path(directory))), f"cannot read directory: {exc.strerror or exc}")
            )
            continue
        local = None
        if directory != top_path and any(e.name == ".gitignore" for e in entries):
            local = _load_gitignore(Path(directory))
        active = inherited + [local] if local is not None else inherited
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if not is_dir and not name.endswith(SOURCE_SUFFIXES):
                continue
            path = entry.path
            if excludes.match(name) is not None:
                continue
            relative = _below(path, root_prefix) or _posix(path)
            if excludes.match(relative) is not None or (active and _git_ignored(active, path, is_dir)):
                continue
            if is_dir:
                stack.append((path, active))
            else:
                try:
                    regular = entry.is_file()  # not a socket, a FIFO or a dangling link
                except OSError:
                    regular = False
                if regular:
                    yield path


def _git_ignored(ignores: list[_GitIgnore], path: str, is_dir: bool) -> bool:
    verdict = False
    for ignore in ignores:
        result = ignore.ignores(path, is_dir)
        if result is not None:
            verdict = result
    return verdict


def display_path(path: Path, cwd: Path | None = None) -> str:
    """A path as reports show it: relative to the working directory when below it."""
    prefix = os.path.join(os.path.abspath(cwd) if cwd is not None else os.getcwd(), "")
    return _below(os.path.abspath(path), prefix) or _posix(os.fspath(path))
