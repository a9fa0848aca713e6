"""Configuration: discovery, inheritance, validation, target-torch inference.

Each file is checked with the settings of its closest configuration file, as ruff
does: walking up from the file's directory, the first directory that holds a
``hooklint.toml`` or ``.hooklint.toml`` (a flat table, which takes precedence in the
same directory, as ``ruff.toml`` does) or a ``pyproject.toml`` with a
``[tool.hooklint]`` table (``--config FILE`` uses one file for every path).
``extend = "../base.toml"`` inherits another file's settings: this file's keys
replace the inherited ones, except that ``extend-select`` and ``extend-exclude`` add
to them (an own ``select`` drops the inherited ``extend-select``); paths in the
settings stay relative to the extending file's directory.

Every key is validated: an unknown key, a value of the wrong type or an unknown rule
code is a :class:`ConfigError` naming the key and the file.  When ``target-torch`` is
not set, the minimum torch is inferred from the ``project.dependencies`` of the same
``pyproject.toml`` (for a ``hooklint.toml``: of a ``pyproject.toml`` beside it)
(``torch>=2.4`` → 2.4), as ruff infers the Python version from ``requires-python``.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from hooklint.excludes import is_excluded  # noqa: F401  (re-exported: where runner and tests find it)

DEFAULT_TARGET_TORCH = (2, 4)


class ConfigError(Exception):
    """A configuration problem, reported as one line and exit code 2."""


@dataclass
class Config:
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    extend_exclude: list[str] = field(default_factory=list)
    target_torch: tuple[int, int] | None = None
    preview: bool = False
    #: Read the project's other modules (base classes, mixins, imported helpers).
    cross_file: bool = True
    registration_wrappers: list[str] = field(default_factory=list)
    #: Bytes; files larger than this are skipped with a diagnostic (None: 4 MiB).
    max_file_size: int | None = None
    #: The file the settings came from, and the directory paths in it are relative to.
    source: Path | None = None
    root: Path = field(default_factory=Path.cwd)

    @property
    def effective_target_torch(self) -> tuple[int, int]:
        return self.target_torch or DEFAULT_TARGET_TORCH


_CODE_LISTS = ("select", "extend-select", "ignore")
_STRING_LISTS = ("exclude", "extend-exclude", "registration-wrappers")
KNOWN_KEYS = frozenset(
    _CODE_LISTS
    + _STRING_LISTS
    + ("per-file-ignores", "target-torch", "preview", "max-file-size", "extend", "cross-file")
)
#: Standalone configuration files (flat tables), before ``pyproject.toml`` in one directory.
STANDALONE_NAMES = (".hooklint.toml", "hooklint.toml")
#: Inherited settings that the extending file's own value adds to rather than replaces.
_ACCUMULATED = ("extend-select", "extend-exclude")


def config_in(directory: Path) -> Path | None:
    """The configuration file ``directory`` holds: a ``hooklint.toml`` (or
    ``.hooklint.toml``), else a ``pyproject.toml`` with a ``[tool.hooklint]`` table."""
    for name in STANDALONE_NAMES:
        candidate = directory / name
        if _exists(candidate, Path.is_file):
            return candidate
    candidate = directory / "pyproject.toml"
    if _exists(candidate, Path.is_file):
        try:
            if "hooklint" in _table(_read_toml(candidate), "tool", candidate):
                return candidate
        except ConfigError:
            return candidate  # report the broken file rather than skip it
    return None


def find_pyproject(start: Path) -> Path | None:
    """The closest configuration file at or above ``start`` (see :func:`config_in`);
    failing that, the nearest ``pyproject.toml`` (for target-torch inference)."""
    start = start.resolve()
    directory = start if _exists(start, Path.is_dir) else start.parent
    nearest = None
    for candidate_dir in (directory, *directory.parents):
        found = config_in(candidate_dir)
        if found is not None:
            return found
        candidate = candidate_dir / "pyproject.toml"
        if nearest is None and _exists(candidate, Path.is_file):
            nearest = candidate
    return nearest


find_config = find_pyproject


class ConfigResolver:
    """Each path's settings: those of its closest configuration file (each file is
    read once; ``adjust`` applies the command line's overrides to each).  One run's:
    each path's answer is kept (a run asks it of every file twice: to discover the
    files and to group them by settings)."""

    def __init__(self, adjust=None) -> None:
        self._adjust = adjust
        self._by_path: dict[str, Config] = {}
        self._by_directory: dict[str, tuple[Path | None, Path | None]] = {}
        self._by_file: dict[Path | None, Config] = {}

    def __call__(self, path: Path) -> Config:
        """The settings for ``path`` (a file or a directory)."""
        key = os.fspath(path)
        config = self._by_path.get(key)
        if config is None:
            directory = os.path.abspath(key)
            if not os.path.isdir(directory):  # False where it cannot be read, as _exists
                directory = os.path.dirname(directory)
            config = self._by_path[key] = self._of_directory(directory)
        return config

    def of_file(self, path: Path) -> Config:
        """The settings for ``path``, a file that discovery found: what ``self(path)``
        gives, its directory's, without asking the file system whether ``path`` is a
        directory (a run asks it of thousands of files; the directory's answer is
        found once)."""
        key = os.fspath(path)
        config = self._by_path.get(key)
        if config is None:
            config = self._by_path[key] = self._of_directory(os.path.dirname(os.path.abspath(key)))
        return config

    def _of_directory(self, directory: str) -> Config:
        """The settings of the files in ``directory`` (absolute)."""
        found, nearest = self._walk(directory)
        return self.load(found or nearest)

    def load(self, source: Path | None) -> Config:
        config = self._by_file.get(source)
        if config is None:
            config = load_config(source)
            if self._adjust is not None:
                self._adjust(config)
            self._by_file[source] = config
        return config

    def _walk(self, directory: str) -> tuple[Path | None, Path | None]:
        """(the closest configuration file, the nearest ``pyproject.toml``) at or above
        ``directory`` (absolute), as :func:`find_pyproject` looks, each directory's
        answer remembered."""
        if directory not in self._by_directory:
            own = Path(directory, "pyproject.toml")
            own = own if _exists(own, Path.is_file) else None
            found = config_in(Path(directory))
            if found is not None:
                answer = (found, own)
            else:
                parent = os.path.dirname(directory)
                above = self._walk(parent) if parent != directory else (None, None)
                answer = (above[0], own or above[1])
            self._by_directory[directory] = answer
        return self._by_directory[directory]


def _exists(path: Path, test) -> bool:
    """``test(path)``, where a directory without search permission (``is_file`` raises
    PermissionError there) counts as holding nothing."""
    try:
        return test(path)
    except OSError:
        return False


def _read_toml(path: Path) -> dict:
    if sys.version_info >= (3, 11):  # imported here: a run without configuration files never parses TOML
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: invalid TOML: not UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
        ) from None
    except (RecursionError, MemoryError):
        raise ConfigError(f"{path}: invalid TOML: too deeply nested to read") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _table(data: dict, key: str, path: Path, name: str | None = None) -> dict:
    """``data[key]`` when it is a table, ``{}`` when absent; else a ConfigError."""
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: [{name or key}] must be a table, got {_short(value)}")
    return value


def _short(value) -> str:
    """``value`` as a message shows it: at most 40 characters."""
    try:
        text = repr(value)
    except RecursionError:
        return f"a deeply nested {type(value).__name__}"
    return text if len(text) <= 40 else text[:37] + "..."


def load_config(path: Path | None) -> Config:
    """Read and validate the settings in ``path`` and the files it extends (no file:
    the defaults)."""
    if path is None:
        return Config()
    config = Config(source=path, root=path.parent.resolve())
    for key, (value, where) in _settings(path, ()).items():
        _apply(config, key, value, where)
    if config.target_torch is None:
        config.target_torch = infer_target_torch(_dependencies(path))
    return config


def _own_table(path: Path) -> tuple[dict, str]:
    """The settings table of one file, and how messages name it."""
    data = _read_toml(path)
    if path.name in STANDALONE_NAMES or (path.name != "pyproject.toml" and "tool" not in data):
        return data, ""
    return _table(_table(data, "tool", path), "hooklint", path, "tool.hooklint"), "[tool.hooklint] "


def _dependencies(path: Path) -> list:
    """``project.dependencies`` of ``path``, or of the ``pyproject.toml`` beside a
    standalone file."""
    if path.name != "pyproject.toml":
        beside = path.parent / "pyproject.toml"
        if not _exists(beside, Path.is_file):
            return []
        path = beside
    return _table(_read_toml(path), "project", path).get("dependencies", [])


def _settings(path: Path, chain: tuple[Path, ...]) -> dict:
    """``{key: (value, where)}`` for ``path``, with what it extends merged in."""
    table, section = _own_table(path)
    resolved = path.resolve()
    if resolved in chain:
        raise ConfigError(
            f"{path}: `extend` makes a cycle: " + " -> ".join(str(p) for p in (*chain, resolved))
        )
    merged: dict = {}
    if "extend" in table:
        base = table["extend"]
        if not isinstance(base, str) or not base.strip():
            raise ConfigError(
                f"{path}: {section}extend: expected the path of a configuration file, got {_short(base)}"
            )
        base_path = Path(os.path.expandvars(os.path.expanduser(base)))
        if not base_path.is_absolute():
            base_path = path.parent / base_path
        if not _exists(base_path, Path.is_file):
            raise ConfigError(f"{path}: {section}extend: no such configuration file: {base_path}")
        merged = _settings(base_path, (*chain, resolved))
        if "select" in table:
            merged.pop("extend-select", None)
    for key, value in table.items():
        if key == "extend":
            continue
        where = f"{path}: {section}{key}"
        if key not in KNOWN_KEYS:
            raise ConfigError(f"{path}: unknown key `{key}`" + (f" in {section.strip()}" if section else ""))
        if key in _ACCUMULATED and key in merged:
            inherited = _string_list(merged[key][0], merged[key][1])
            value = inherited + _string_list(value, where)
        merged[key] = (value, where)
    return merged


def _apply(config: Config, key: str, value, where: str) -> None:
    attribute = key.replace("-", "_")
    if key in _CODE_LISTS or key in _STRING_LISTS:
        setattr(config, attribute, _string_list(value, where))
        if key in _CODE_LISTS:
            _check_codes(getattr(config, attribute), where)
    elif key == "per-file-ignores":
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a table of glob = [codes]")
        ignores = {}
        for pattern, codes in value.items():
            ignores[pattern] = _string_list(codes, f"{where}.{pattern}")
            _check_codes(ignores[pattern], f"{where}.{pattern}")
        config.per_file_ignores = ignores
    elif key == "target-torch":
        config.target_torch = parse_torch_version(value, where)
    elif key == "max-file-size":
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"{where}: expected a positive number of bytes, got {value!r}")
        config.max_file_size = value
    elif key == "preview":
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {_short(value)}")
        config.preview = value
    elif key == "cross-file":
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {_short(value)}")
        config.cross_file = value


def _string_list(value, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of strings, got {_short(value)}")
    return value


def _check_codes(codes: list[str], where: str) -> None:
    from hooklint.selection import (  # the rules' codes: only for a file that names some
        UnknownSelector,
        validate,
    )

    for code in codes:
        try:
            validate([code])
        except UnknownSelector:
            raise ConfigError(f"{where}: unknown rule code `{code}`") from None


def parse_torch_version(value, where: str = "target-torch") -> tuple[int, int]:
    """``"2.4"`` → (2, 4).  Only a string: a TOML float cannot tell 2.10 from 2.1."""
    if isinstance(value, float):
        raise ConfigError(
            f'{where}: expected a string like "2.4" (a TOML number cannot tell 2.10 from 2.1), got the number {value!r}'
        )
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", value) if isinstance(value, str) else None
    if match is None:
        raise ConfigError(f'{where}: expected a torch version like "2.4", got {_short(value)}')
    return int(match.group(1)), int(match.group(2))


_TORCH_REQUIREMENT = re.compile(r"^\s*torch\s*(?:\[[^\]]*\])?\s*(?P<spec>[^;]*)", re.IGNORECASE)
_LOWER_BOUND = re.compile(r"(>=|~=|==|>)\s*(\d+)\.(\d+)")


def infer_target_torch(dependencies) -> tuple[int, int] | None:
    """The lowest torch a ``project.dependencies`` list allows, from its lower bounds."""
    if not isinstance(dependencies, list):
        return None
    bounds = []
    for requirement in dependencies:
        if not isinstance(requirement, str):
            continue
        match = _TORCH_REQUIREMENT.match(requirement)
        if match is None or re.match(r"^\s*torch[\w-]", requirement, re.IGNORECASE):
            continue  # torchvision, torch-geometric... are other packages
        for _, major, minor in _LOWER_BOUND.findall(match.group("spec")):
            bounds.append((int(major), int(minor)))
    return max(bounds) if bounds else None
