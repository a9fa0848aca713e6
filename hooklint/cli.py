"""The ``hooklint`` command line: parses options, calls the engine, picks a reporter.

Exit codes (as ruff): 0 nothing left to report, 1 violations remain (after fixes),
2 usage, configuration or internal error (a crash is one line on stderr; with
``HOOKLINT_DEBUG=1`` the traceback follows), 130 interrupted (SIGINT), 143 terminated
(SIGTERM).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from hooklint import __version__
from hooklint.config import ConfigError, ConfigResolver, load_config, parse_torch_version
from hooklint.entry import guarded

FORMATS = ("full", "concise", "json", "json-lines", "sarif", "github", "gitlab", "junit")
HUMAN_FORMATS = ("full", "concise")


def _codes(values: tuple[str, ...]) -> list[str] | None:
    if not values:
        return None
    return [c.strip() for value in values for c in value.split(",") if c.strip()]


class _Main(click.Group):
    """The command group, with hooklint's exit codes for what click does not map
    (:func:`hooklint.entry.guarded`: an internal error is exit 2 with one line, never
    1, which means findings; an interrupt 130; SIGTERM 143, worker processes stopped
    on the way out)."""

    def main(self, *args, **kwargs):
        guarded(lambda: self._main(*args, **kwargs))

    def _main(self, *args, **kwargs) -> bool:
        kwargs.pop("standalone_mode", None)
        try:
            super().main(*args, standalone_mode=False, **kwargs)
        except click.exceptions.Exit as exc:
            raise SystemExit(exc.exit_code) from None
        except click.ClickException as exc:
            exc.show()
            raise SystemExit(exc.exit_code) from None
        except click.exceptions.Abort:
            raise KeyboardInterrupt from None
        return True


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hooklint")
def main() -> None:
    """hooklint: find, fix and prevent PyTorch hook misuse."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (comma-separated; ALL).")
@click.option(
    "--extend-select", multiple=True, help="Rule codes or prefixes to enable on top of the selection."
)
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable.")
@click.option(
    "--extend-ignore",
    multiple=True,
    help="Rule codes or prefixes to disable on top of the configured ones (as --ignore).",
)
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="Also offer and apply unsafe fixes.")
@click.option(
    "--fix-only", is_flag=True, help="Apply fixes; do not report or exit 1 for what remains (implies --fix)."
)
@click.option(
    "--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when a fix was applied, even if nothing remains."
)
@click.option("--show-fixes", is_flag=True, help="List the fixes applied, per file and rule.")
@click.option("--diff", is_flag=True, help="Print the fixes as unified diffs; write nothing.")
@click.option(
    "--add-noqa", is_flag=True, help="Write `# noqa: CODE` on each violation's line (a baseline); exit 0."
)
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="full", show_default=True)
@click.option(
    "--output-file", type=click.Path(path_type=Path), help="Write the report here instead of stdout."
)
@click.option("--stdin-filename", help="The file name to report for source read from stdin (`-`).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when violations remain.")
@click.option("--statistics", is_flag=True, help="Print counts per rule instead of each violation.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option(
    "--cache-dir", type=click.Path(path_type=Path), help="Where to keep the cache (default .hooklint_cache)."
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    help="Worker processes (default and most: the CPU count; never more than the files).",
)
@click.option(
    "--max-file-size",
    type=click.IntRange(min=1),
    help="Skip files larger than this many bytes (default 4194304; config `max-file-size`).",
)
@click.option("--target-torch", help="Oldest torch the code supports, e.g. 2.4 (default: inferred).")
@click.option("--preview", is_flag=True, default=None, help="Enable preview rules.")
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    help="Use this configuration file for every path (default: each file's closest).",
)
@click.option(
    "--force-exclude",
    is_flag=True,
    help="Apply the excludes to files named on the command line too (for pre-commit).",
)
@click.option(
    "--color",
    "color",
    type=click.Choice(("auto", "always", "never")),
    default="auto",
    show_default=True,
    help="Colour the human formats (auto: on a terminal, unless NO_COLOR; FORCE_COLOR forces it).",
)
@click.option("--no-cross-file", is_flag=True, help="Analyse each file alone (config `cross-file = false`).")
@click.option("--quiet", "-q", is_flag=True, help="Print only the violations, no summary.")
def check(
    paths,
    select,
    extend_select,
    ignore,
    extend_ignore,
    fix,
    unsafe_fixes,
    fix_only,
    exit_non_zero_on_fix,
    show_fixes,
    diff,
    add_noqa,
    output_format,
    output_file,
    stdin_filename,
    exit_zero,
    statistics,
    no_cache,
    cache_dir,
    jobs,
    max_file_size,
    target_torch,
    preview,
    no_cross_file,
    config_file,
    force_exclude,
    color,
    quiet,
) -> None:
    """Check PATHS (default: .) for hook misuse."""
    from hooklint.runner import CheckRequest, run_check

    paths = list(paths) or [Path(".")]
    fix = fix or fix_only
    if add_noqa and (fix or diff):
        _fail("--add-noqa cannot be combined with --fix, --fix-only or --diff")
    if add_noqa and [str(p) for p in paths] == ["-"]:
        _fail("--add-noqa edits files; it cannot read standard input")
    try:
        torch_override = (
            parse_torch_version(target_torch, "--target-torch") if target_torch is not None else None
        )

        def adjust(config) -> None:  # the command line's settings win over every file's
            if torch_override is not None:
                config.target_torch = torch_override
            if preview:
                config.preview = True
            if no_cross_file:
                config.cross_file = False

        configs = None
        if config_file is not None:
            if not config_file.is_file():
                raise ConfigError(f"{config_file}: no such configuration file")
            config = load_config(config_file)
            adjust(config)
        else:
            configs = ConfigResolver(adjust)
            anchor = paths[0] if str(paths[0]) != "-" else Path(stdin_filename or ".")
            config = configs(anchor if _exists(anchor) else Path.cwd())
        request = CheckRequest(
            paths=paths,
            config=config,
            select=_codes(select),
            extend_select=_codes(extend_select) or [],
            ignore=(_codes(ignore) or []) + (_codes(extend_ignore) or []),
            fix=fix,
            unsafe_fixes=unsafe_fixes,
            diff=diff,
            stdin_filename=stdin_filename,
            cache_dir=None if no_cache else (cache_dir or config.root / ".hooklint_cache"),
            jobs=jobs or os.cpu_count() or 1,
            max_file_size=max_file_size,
            configs=configs,
            force_exclude=force_exclude,
        )
        outcome = run_check(request)
    except ConfigError as exc:
        _fail(str(exc))
    except ValueError as exc:  # unknown selector on the command line
        _fail(str(exc))

    for problem in outcome.problems:
        click.echo(f"hooklint: {problem}", err=True)
    if add_noqa:
        _add_noqa(outcome, quiet)
        return
    colour = _use_colour(color, output_file is None and output_format in HUMAN_FORMATS)
    if outcome.stdout_source is not None:
        click.echo(outcome.stdout_source, nl=False)
    if diff:
        click.echo(_diffs(outcome.results), nl=False)
    if fix_only:
        report = ""
    else:
        report = "" if diff else _report(outcome, output_format, statistics, unsafe_fixes, colour)
    if output_file is not None:
        try:
            output_file.write_text(report, encoding="utf-8")
        except OSError as exc:
            _fail(f"cannot write {output_file}: {exc.strerror or exc}")
    elif outcome.stdout_source is None:
        click.echo(report, nl=False, color=colour)
    elif report:
        click.echo(report, nl=False, err=True, color=colour)
    to_stderr = outcome.stdout_source is not None or output_file is not None
    if show_fixes and fix and not diff and not quiet:
        click.echo(
            _fix_summary(outcome.results), nl=False, err=to_stderr or output_format not in HUMAN_FORMATS
        )
    if not quiet and output_format in HUMAN_FORMATS:
        if fix_only:
            if outcome.fixed:
                click.echo(f"Fixed {outcome.fixed} error{'s' if outcome.fixed != 1 else ''}.", err=to_stderr)
        else:
            click.echo(outcome.summary(unsafe_fixes, diff), err=to_stderr)
    if outcome.internal_error:
        sys.exit(2)
    pending = (outcome.remaining and not fix_only) or (diff and outcome.fixed)
    if exit_non_zero_on_fix and outcome.fixed:
        sys.exit(1)
    sys.exit(0 if exit_zero or not pending else 1)


def _add_noqa(outcome, quiet: bool) -> None:
    """Write ``# noqa`` directives for what the run found (``--add-noqa``); exit 0, or
    2 when a file could not be read, checked or written."""
    from hooklint.files import SourceError, read_source
    from hooklint.noqa import add_noqa
    from hooklint.writer import write_fixed_source

    by_path: dict[str, list] = {}
    for violation in outcome.remaining:
        by_path.setdefault(violation.path, []).append(violation)
    added = 0
    failed = outcome.internal_error
    for shown, violations in by_path.items():
        path = Path(shown)
        if path.suffix == ".ipynb":
            click.echo(f"hooklint: {shown}: --add-noqa does not edit notebooks; skipped", err=True)
            continue
        try:
            source = read_source(path)
        except SourceError as exc:
            click.echo(f"hooklint: {shown}: {exc}", err=True)
            failed = True
            continue
        text, changed, problems = add_noqa(source.text, violations)
        for line, why in problems:
            click.echo(f"hooklint: {shown}:{line}: {why}", err=True)
        if not changed:
            continue
        problem = write_fixed_source(path, source.text, text)
        if problem:
            click.echo(f"hooklint: {shown}: {problem}", err=True)
            failed = True
            continue
        added += changed
    if not quiet:
        click.echo(f"Added {added} noqa directive{'s' if added != 1 else ''}.", err=True)
    sys.exit(2 if failed else 0)


def _fix_summary(results) -> str:
    """``--show-fixes``: the fixes applied, per file and rule (as ruff lists them)."""
    per_file = [(r.path, r.fixed_codes) for r in results if getattr(r, "fixed_codes", None)]
    total = sum(len(codes) for _, codes in per_file)
    if not total:
        return ""
    names = _rule_names()
    lines = [f"Fixed {total} error{'s' if total != 1 else ''}:"]
    for path, codes in sorted(per_file):
        lines.append(f"- {path}:")
        counts: dict[str, int] = {}
        for code in codes:
            counts[code] = counts.get(code, 0) + 1
        for code, count in sorted(counts.items()):
            lines.append(f"    {count} \u00d7 {code} ({names.get(code, '')})")
    return "\n".join(lines) + "\n\n"


def _rule_names() -> dict[str, str]:
    from hooklint.rules import all_rules

    return {rule.code: rule.name for rule in all_rules()}


def _exists(path: Path) -> bool:
    """Whether ``path`` can be stat-ed (a 300-character name, or one below an
    unreadable directory, is reported by the run, not here)."""
    try:
        os.stat(path)
    except (OSError, ValueError):
        return False
    return True


def _report(outcome, output_format, statistics, unsafe, colour: bool) -> str:
    from hooklint.report import REPORTERS

    if statistics:
        counts: dict[tuple[str, str], int] = {}
        for v in outcome.remaining:
            counts[(v.code, v.name)] = counts.get((v.code, v.name), 0) + 1
        return "".join(f"{n:>5}  {code}  {name}\n" for (code, name), n in sorted(counts.items()))
    style = click.style if colour else (lambda text, **_: text)
    sources = _sources(outcome.remaining) if output_format == "full" else None
    return REPORTERS[output_format](
        outcome.remaining, unsafe=unsafe, style=style, sources=sources, root=Path.cwd()
    )


def _sources(violations) -> dict[str, list[str]]:
    """The lines of each file with findings, for the full format's context (read again,
    as the engine decoded them; a file that cannot be read gets no context)."""
    from hooklint.files import SourceError, read_source
    from hooklint.lexical import split_lines

    sources: dict[str, list[str]] = {}
    for path in dict.fromkeys(v.path for v in violations):
        if path == "-" or path.endswith(".ipynb"):
            continue
        try:
            sources[path] = split_lines(read_source(Path(path)).text)
        except (SourceError, OSError, ValueError):
            continue
    return sources


def _use_colour(choice: str, human: bool) -> bool:
    """``--color``: ``always`` and ``never`` as given; ``auto``: for a human format,
    never when ``NO_COLOR`` is set, always when ``FORCE_COLOR`` is, else on a terminal
    (https://no-color.org, https://force-color.org; NO_COLOR wins over FORCE_COLOR, as
    in ruff 0.17)."""
    if choice != "auto":
        return choice == "always" and human
    if not human or os.environ.get("NO_COLOR"):
        return False
    return bool(os.environ.get("FORCE_COLOR")) or sys.stdout.isatty()


def _diffs(results) -> str:
    import difflib

    from hooklint.lexical import split_lines

    chunks = []
    for result in results:
        if result.fixed_text is not None and result.path.endswith(".ipynb"):
            from hooklint.notebook import diff

            chunks.extend(diff(result.path, result.original, result.fixed_text))
        elif result.fixed_text is not None:
            chunks.extend(
                difflib.unified_diff(
                    split_lines(result.original, keepends=True),
                    split_lines(result.fixed_text, keepends=True),
                    fromfile=result.path,
                    tofile=result.path,
                )
            )
    return "".join(chunks)


def _fail(message: str) -> None:
    click.echo(f"hooklint: error: {message}", err=True)
    sys.exit(2)


@main.command("rules")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(("text", "json", "markdown")),
    default="text",
    show_default=True,
)
def rules_command(output_format: str) -> None:
    """List every rule: code, name, default, fix availability and safety (JSON: with
    each rule's full documentation and its URL)."""
    import json

    from hooklint.report.rule_docs import fix_column, readme_table, rule_row
    from hooklint.report.urls import rule_url
    from hooklint.rules import all_rules

    rows = [rule_row(r) for r in all_rules()]
    if output_format == "json":
        for row, rule in zip(rows, all_rules()):
            row["url"] = rule_url(rule.code)
            row["explanation"] = rule.documentation()
        click.echo(json.dumps(rows, indent=2))
        return
    if output_format == "markdown":
        click.echo(readme_table(rows), nl=False)
        return
    click.echo(f"{'code':<6} {'name':<36} {'default':<8} {'tier':<8} {'fix':<7} summary")
    for row in rows:
        click.echo(
            f"{row['code']:<6} {row['name']:<36} {row['default']:<8} {row['tier']:<8} {fix_column(row):<7} {row['summary']}"
        )


@main.command()
@click.argument("rule")
def explain(rule: str) -> None:
    """Show a rule's documentation (by code, e.g. HL001, or by name)."""
    _explain(rule)


@main.command("rule")
@click.argument("rule")
def rule_command(rule: str) -> None:
    """Show a rule's documentation (as `explain`, the name ruff uses)."""
    _explain(rule)


def _explain(rule: str) -> None:
    from hooklint.report.rule_docs import fix_label
    from hooklint.report.urls import rule_url
    from hooklint.rules import find_rule

    found = find_rule(rule)
    if found is None:
        from hooklint.runtime_codes import explanation, find_runtime_code

        runtime_code = find_runtime_code(rule)
        if runtime_code is not None:
            click.echo(explanation(runtime_code))
            return
        _fail(f"unknown rule `{rule}` (see `hooklint rules`)")
    header = f"{found.code} {found.name}"
    tier = "preview" if found.preview else ("on by default" if found.default_on else "off by default")
    fix = f"fix: {fix_label(found)}" if found.fix_applicability else "no fix"
    click.echo(f"# {header}\n\n({tier}; {fix}; {rule_url(found.code)})\n\n{found.documentation()}")
    examples = found.INVALID[:1]
    for example in examples:
        click.echo("\n## Flagged (from the rule's tests)\n```python" + example.code.rstrip() + "\n```")


@main.command()
def server() -> None:
    """Run the language server (LSP over stdio) for editors; needs `hooklint[lsp]`."""
    from hooklint.server import PyglsMissing, serve

    try:
        serve()
    except PyglsMissing as exc:
        _fail(str(exc))
