"""``[tool.hooklint]`` in ``pyproject.toml``: discovery, validation, target-torch inference.

The nearest ``pyproject.toml`` with a ``[tool.hooklint]`` table, walking up from the
first path, is used (``--config FILE`` overrides).  Every key is validated: an unknown
key, a value of the wrong type or an unknown rule code is a :class:`ConfigError`
naming the key and the file.  When ``target-torch`` is not set, the minimum torch is
inferred from the same file's ``project.dependencies`` (``torch>=2.4`` → 2.4), as ruff
infers the Python version from ``requires-python``.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from hooklint.selection import UnknownSelector, validate

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
KNOWN_KEYS = frozenset(_CODE_LISTS + _STRING_LISTS + ("per-file-ignores", "target-torch", "preview", "max-file-size", "cross-file"))


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` with ``[tool.hooklint]`` at or above ``start``;
    failing that, the nearest ``pyproject.toml`` (for target-torch inference)."""
    start = start.resolve()
    directory = start if _exists(start, Path.is_dir) else start.parent
    nearest = None
    for candidate_dir in (directory, *directory.parents):
        candidate = candidate_dir / "pyproject.toml"
        if _exists(candidate, Path.is_file):
            nearest = nearest or candidate
            try:
                if "hooklint" in _table(_read_toml(candidate), "tool", candidate):
                    return candidate
            except ConfigError:
                return candidate  # report the broken file rather than skip it
    return nearest


def _exists(path: Path, test) -> bool:
    """``test(path)``, where a directory without search permission (``is_file`` raises
    PermissionError there) counts as holding nothing."""
    try:
        return test(path)
    except OSError:
        return False


def _read_toml(path: Path) -> dict:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None
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
    """Read and validate the settings in ``path`` (no file: the defaults)."""
    if path is None:
        return Config()
    data = _read_toml(path)
    table = _table(_table(data, "tool", path), "hooklint", path, "tool.hooklint")
    project = _table(data, "project", path)
    config = Config(source=path, root=path.parent.resolve())
    for key, value in table.items():
        _apply(config, key, value, path)
    if config.target_torch is None:
        config.target_torch = infer_target_torch(project.get("dependencies", []))
    return config


def _apply(config: Config, key: str, value, path: Path) -> None:
    where = f"{path}: [tool.hooklint] {key}"
    if key not in KNOWN_KEYS:
        raise ConfigError(f"{path}: unknown key `{key}` in [tool.hooklint]")
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
    for code in codes:
        try:
            validate([code])
        except UnknownSelector:
            raise ConfigError(f"{where}: unknown rule code `{code}`") from None


def parse_torch_version(value, where: str = "target-torch") -> tuple[int, int]:
    """``"2.4"`` → (2, 4).  Only a string: a TOML float cannot tell 2.10 from 2.1."""
    if isinstance(value, float):
        raise ConfigError(
            f"{where}: expected a string like \"2.4\" (a TOML number cannot tell 2.10 from 2.1), got the number {value!r}"
        )
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", value) if isinstance(value, str) else None
    if match is None:
        raise ConfigError(f"{where}: expected a torch version like \"2.4\", got {_short(value)}")
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
