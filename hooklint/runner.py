"""A ``hooklint check`` run: settings from config and options, files, engine, writes.

Kept apart from :mod:`hooklint.cli` so that tests and other tools can run a check
without click.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from hooklint.config import Config, DEFAULT_TARGET_TORCH
from hooklint.engine import FileResult, Settings, check_paths, check_source, write_fixed
from hooklint.files import SourceError, decode_source, discover
from hooklint.rules.base import RuleContext
from hooklint.selection import UnknownSelector, resolve_rules
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


@dataclass
class CheckOutcome:
    results: list[FileResult]
    problems: list[str]
    remaining: list[Violation]
    fixed: int
    stdout_source: str | None = None
    internal_error: bool = False

    def summary(self, unsafe: bool, diff: bool) -> str:
        found = len(self.remaining) + self.fixed
        if found == 0:
            if self.internal_error:
                return "No violations found, but not every file could be checked or written (see above)."
            return "All checks passed!"
        noun = "error" if found == 1 else "errors"
        if diff:
            return f"Would fix {self.fixed} {noun} ({len(self.remaining)} remaining)."
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
        rules = resolve_rules(
            select,
            list(config.extend_select) + request.extend_select,
            list(config.ignore) + request.ignore,
            preview=config.preview,
        )
    except UnknownSelector as exc:
        raise ValueError(f"unknown rule code `{exc.args[0]}`") from None
    context = RuleContext(
        target_torch=config.target_torch or DEFAULT_TARGET_TORCH,
        registration_wrappers=tuple(config.registration_wrappers),
    )
    return Settings(
        rule_codes=tuple(r.code for r in rules),
        context=context,
        fix=request.fix,
        unsafe_fixes=request.unsafe_fixes,
        diff=request.diff,
        per_file_ignores=tuple((k, tuple(v)) for k, v in config.per_file_ignores.items()),
        root=str(config.root),
        cache_dir=str(request.cache_dir) if request.cache_dir is not None else None,
    )


def run_check(request: CheckRequest) -> CheckOutcome:
    settings = build_settings(request)
    if [str(p) for p in request.paths] == ["-"]:
        return _check_stdin(request, settings)
    config = request.config
    excludes = list(config.exclude) if config.exclude else []
    excludes += config.extend_exclude
    files, missing = discover(request.paths, excludes, config.root)
    problems = [f"{path}: {problem}" for path, problem in missing]
    results = check_paths(files, settings, request.jobs)
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
    return CheckOutcome(results, problems, remaining, fixed, internal_error=bool(missing) or unwritten or any(r.error for r in results))


def _check_stdin(request: CheckRequest, settings: Settings) -> CheckOutcome:
    name = request.stdin_filename or "-"
    raw = sys.stdin.buffer.read()
    try:
        source = decode_source(Path(name), raw)
    except SourceError as exc:
        return CheckOutcome([], [f"{name}: {exc}"], [], 0, internal_error=True)
    result = check_source(source, name, settings)
    problems = list(result.fix_failures)
    stdout_source = None
    if request.fix and not request.diff:
        stdout_source = result.fixed_text if result.fixed_text is not None else source.text
    return CheckOutcome([result], problems, sorted(result.violations, key=lambda v: v.sort_key), result.fixed, stdout_source)
