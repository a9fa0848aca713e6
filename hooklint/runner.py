"""A ``hooklint check`` run: settings from config and options, files, engine, writes.

Kept apart from :mod:`hooklint.cli` so that tests and other tools can run a check
without click.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from hooklint.cache import RunIndex
from hooklint.config import Config, is_excluded
from hooklint.engine import (
    FileResult,
    Settings,
    TooDeeplyNested,
    check_paths,
    check_source,
    compile_only,
    in_cells,
    write_fixed,
)
from hooklint.files import (
    DEFAULT_MAX_FILE_SIZE,
    NOTEBOOK_SIZE_FACTOR,
    SourceError,
    decode_file,
    discover,
    display_path,
)
from hooklint.rules.base import RuleContext
from hooklint.selection import SelectedCodes, UnknownSelector
from hooklint.violation import Violation


@dataclass
class CheckRequest:
    paths: list[Path]
    config: Config
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    stdin_filename: str | None = None
    cache_dir: Path | None = None
    jobs: int = 1
    #: Bytes; None: ``max-file-size`` from the configuration (default 4 MiB).
    max_file_size: int | None = None
    #: Each path's settings (the closest configuration file's, :class:`hooklint.config.ConfigResolver`);
    #: None: ``config`` for every path.
    configs: Callable[[Path], Config] | None = None
    #: Apply the excludes to files named on the command line too (``--force-exclude``).
    force_exclude: bool = False


@dataclass
class CheckOutcome:
    results: list[FileResult]
    problems: list[str]
    remaining: list[Violation]
    fixed: int
    #: With ``-`` and ``--fix``: the fixed source, as bytes in the input's encoding.
    stdout_source: bytes | None = None
    internal_error: bool = False

    def summary(self, unsafe: bool, diff: bool) -> str:
        found = len(self.remaining) + self.fixed
        if found == 0:
            if self.internal_error:
                return "No violations found, but not every file could be checked or written (see above)."
            return "All checks passed!"
        noun = "error" if found == 1 else "errors"
        if diff:
            fixes = "error" if self.fixed == 1 else "errors"
            return f"Would fix {self.fixed} {fixes} ({len(self.remaining)} remaining)."
        text = f"Found {found} {noun}"
        if self.fixed:
            text += f" ({self.fixed} fixed, {len(self.remaining)} remaining)"
        text += "."
        fixable = sum(1 for v in self.remaining if v.is_fixable(unsafe))
        hidden = sum(1 for v in self.remaining if v.fix is not None and not v.is_fixable(unsafe))
        if fixable:
            text += f"\n[*] {fixable} fixable with the `--fix` option."
        if hidden:
            text += f"\n{hidden} more fixable with `--unsafe-fixes`."
        return text


def build_settings(request: CheckRequest) -> Settings:
    config = request.config
    select = request.select if request.select is not None else config.select
    try:
        codes = SelectedCodes(  # resolved (rules imported) only for a file with a token
            select,
            list(config.extend_select) + request.extend_select,
            list(config.ignore) + request.ignore,
            preview=config.preview,
        )
    except UnknownSelector as exc:
        raise ValueError(f"unknown rule code `{exc.args[0]}`") from None
    context = RuleContext(
        target_torch=config.effective_target_torch,
        registration_wrappers=tuple(config.registration_wrappers),
        cross_file=getattr(config, "cross_file", True),
    )
    return Settings(
        rule_codes=codes,
        context=context,
        fix=request.fix,
        unsafe_fixes=request.unsafe_fixes,
        diff=request.diff,
        per_file_ignores=tuple((k, tuple(v)) for k, v in config.per_file_ignores.items()),
        root=str(config.root),
        cache_dir=str(request.cache_dir) if request.cache_dir is not None else None,
        max_file_size=max_file_size(request),
    )


def max_file_size(request: CheckRequest) -> int:
    if request.max_file_size is not None:
        return request.max_file_size
    configured = getattr(request.config, "max_file_size", None)
    return configured if configured is not None else DEFAULT_MAX_FILE_SIZE


def run_key(request: CheckRequest) -> str:
    """The run index's key for ``request`` (:func:`hooklint.cache.run_key`)."""
    from hooklint.cache import run_key as key

    return key(request, max_file_size(request))


def run_check(request: CheckRequest) -> CheckOutcome:
    if [str(p) for p in request.paths] == ["-"]:
        return _check_stdin(request, build_settings(request))
    files, missing = _discover(request)
    problems = [f"{path}: {problem}" for path, problem in missing]
    named = {os.path.abspath(p) for p in request.paths}
    results = _grouped_results(request, files, [str(f) in named for f in files])
    fixed = 0
    unwritten = False
    for path, result in zip(files, results):
        problems += result.fix_failures
        if result.error:
            problems.append(f"{result.path}: {result.error}")
        if request.fix and not request.diff and result.fixed_text is not None:
            problem = write_fixed(path, result)
            if problem:
                problems.append(f"{result.path}: {problem}")
                unwritten = True
                continue
        fixed += result.fixed
    remaining = sorted((v for r in results for v in r.violations), key=lambda v: v.sort_key)
    return CheckOutcome(
        results,
        problems,
        remaining,
        fixed,
        internal_error=bool(missing) or unwritten or any(r.error for r in results),
    )


def _excludes(config: Config) -> list[str]:
    return (list(config.exclude) if config.exclude else []) + list(config.extend_exclude)


def _discover(request: CheckRequest) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The files to check: each path walked with its own settings' excludes; with
    per-path settings, a file found below a directory with other settings is held to
    those too, and with ``force_exclude`` a file named on the command line is too."""
    if request.configs is None and not request.force_exclude:
        return discover(request.paths, _excludes(request.config), request.config.root)
    configs = request.configs or (lambda _: request.config)
    of_file = getattr(configs, "of_file", configs)  # a ConfigResolver answers per directory
    found: set[Path] = set()
    missing: list[tuple[Path, str]] = []
    for path in request.paths:
        config = configs(path)
        files, problems = discover([path], _excludes(config), config.root)
        missing += problems
        named = os.path.abspath(path)
        for file in files:
            own = of_file(file)
            explicit = str(file) == named
            if (own is not config or (explicit and request.force_exclude)) and is_excluded(
                file, _excludes(own), own.root
            ):
                continue
            found.add(file)
    return sorted(found), missing


def _grouped_results(request: CheckRequest, files: list[Path], explicit: list[bool]) -> list[FileResult]:
    """Each file's result, checked with its own settings (files that share settings
    are checked together)."""
    if request.configs is None:
        return _results(request, files, explicit)
    groups: dict[int, tuple[Config, list[int]]] = {}
    of_file = getattr(request.configs, "of_file", request.configs)
    for position, path in enumerate(files):
        config = of_file(path)
        groups.setdefault(id(config), (config, []))[1].append(position)
    results: list[FileResult | None] = [None] * len(files)
    for config, positions in groups.values():
        sub = replace(request, config=config, configs=None)
        for position, result in zip(
            positions, _results(sub, [files[i] for i in positions], [explicit[i] for i in positions])
        ):
            results[position] = result
    return results  # type: ignore[return-value]


def _results(request: CheckRequest, files: list[Path], explicit: list[bool]) -> list[FileResult]:
    """Each file's result: from the run index when the file is unchanged since the
    last run with the same key, else from the engine (rules are loaded only then)."""
    use_index = request.cache_dir is not None and not (request.fix or request.diff)
    if not use_index:
        return check_paths(files, build_settings(request), request.jobs, explicit)
    index = RunIndex(str(request.cache_dir), run_key(request))
    results: list[FileResult | None] = [None] * len(files)
    stamps: dict[int, tuple[int, int]] = {}
    for position, path in enumerate(files):
        try:
            stat = os.stat(path)
        except OSError:
            continue
        if stat.st_size > max_file_size(request):
            continue  # the engine says why it is skipped
        stamps[position] = (stat.st_mtime_ns, stat.st_size)
        violations = index.lookup(str(path), stamps[position])
        if violations is not None:
            shown = display_path(path)
            results[position] = FileResult(shown, [replace(v, path=shown) for v in violations])
    misses = [i for i, result in enumerate(results) if result is None]
    if misses:
        checked = check_paths(
            [files[i] for i in misses], build_settings(request), request.jobs, [explicit[i] for i in misses]
        )
        for position, result in zip(misses, checked):
            results[position] = result
            if position in stamps and result.error is None:
                index.record(str(files[position]), stamps[position], result.violations, result.dependencies)
    index.save()
    return results  # type: ignore[return-value]


def _check_stdin(request: CheckRequest, settings: Settings) -> CheckOutcome:
    name = request.stdin_filename or "-"
    limit = settings.max_file_size
    if limit is not None and name.endswith(".ipynb"):  # as for a notebook file (hooklint.files)
        limit *= NOTEBOOK_SIZE_FACTOR
    try:
        stream = sys.stdin.buffer  # no sys.stdin at all when it is closed (`<&-`)
        raw = stream.read() if limit is None else stream.read(limit + 1)
    except (AttributeError, OSError, ValueError) as exc:
        problem = getattr(exc, "strerror", None) or "standard input is closed"
        return CheckOutcome(
            [], [f"{name}: cannot read standard input: {problem}"], [], 0, internal_error=True
        )
    if limit is not None and len(raw) > limit:
        message = f"too large to check (over `max-file-size` = {limit} bytes); skipped"
        return CheckOutcome([], [f"{name}: {message}"], [], 0, internal_error=True)
    try:
        source = decode_file(Path(name), raw)
    except SourceError as exc:
        return CheckOutcome([], [f"{name}: {exc}"], [], 0, internal_error=True)
    try:
        compiled = compile_only(source.text, name, settings)
        result = (
            in_cells(source, FileResult(name, compiled))
            if compiled is not None
            else check_source(source, name, settings)
        )
    except RecursionError as exc:
        message = str(exc) if isinstance(exc, TooDeeplyNested) else "too deeply nested to analyse"
        fixed_stdout = source.raw if request.fix and not request.diff else None
        return CheckOutcome([], [f"{name}: {message}"], [], 0, fixed_stdout, internal_error=True)
    problems = list(result.fix_failures)
    stdout_source = None
    if request.fix and not request.diff:  # in the input's own encoding and BOM
        stdout_source = source.encode(result.fixed_text) if result.fixed_text is not None else source.raw
    return CheckOutcome(
        [result], problems, sorted(result.violations, key=lambda v: v.sort_key), result.fixed, stdout_source
    )
