"""The ``hooklint`` command line: parses options, calls the engine, picks a reporter.

Exit codes (as ruff): 0 nothing left to report, 1 violations remain (after fixes),
2 usage, configuration or internal error.
"""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path

import click

from hooklint import __version__
from hooklint.config import ConfigError, find_pyproject, load_config, parse_torch_version

FORMATS = ("full", "concise", "json", "sarif", "github")


def _codes(values: tuple[str, ...]) -> list[str] | None:
    if not values:
        return None
    return [c.strip() for value in values for c in value.split(",") if c.strip()]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hooklint")
def main() -> None:
    """hooklint: find, fix and prevent PyTorch hook misuse."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (comma-separated; ALL).")
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to enable on top of the selection.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable.")
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="Also offer and apply unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as unified diffs; write nothing.")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="full", show_default=True)
@click.option("--output-file", type=click.Path(path_type=Path), help="Write the report here instead of stdout.")
@click.option("--stdin-filename", help="The file name to report for source read from stdin (`-`).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when violations remain.")
@click.option("--statistics", is_flag=True, help="Print counts per rule instead of each violation.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("--cache-dir", type=click.Path(path_type=Path), help="Where to keep the cache (default .hooklint_cache).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes (default: CPU count).")
@click.option("--target-torch", help="Oldest torch the code supports, e.g. 2.4 (default: inferred).")
@click.option("--preview", is_flag=True, default=None, help="Enable preview rules.")
@click.option("--config", "config_file", type=click.Path(path_type=Path), help="Use this pyproject.toml.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the violations, no summary.")
def check(paths, select, extend_select, ignore, fix, unsafe_fixes, diff, output_format, output_file,
          stdin_filename, exit_zero, statistics, no_cache, cache_dir, jobs, target_torch, preview,
          config_file, quiet) -> None:
    """Check PATHS (default: .) for hook misuse."""
    from hooklint.runner import CheckRequest, run_check

    paths = list(paths) or [Path(".")]
    try:
        if config_file is not None:
            if not config_file.is_file():
                raise ConfigError(f"{config_file}: no such configuration file")
            config = load_config(config_file)
        else:
            anchor = paths[0] if str(paths[0]) != "-" else Path(stdin_filename or ".")
            config = load_config(find_pyproject(anchor if anchor.exists() else Path.cwd()))
        if target_torch is not None:
            config.target_torch = parse_torch_version(target_torch, "--target-torch")
        if preview:
            config.preview = True
        request = CheckRequest(
            paths=paths,
            config=config,
            select=_codes(select),
            extend_select=_codes(extend_select) or [],
            ignore=_codes(ignore) or [],
            fix=fix,
            unsafe_fixes=unsafe_fixes,
            diff=diff,
            stdin_filename=stdin_filename,
            cache_dir=None if no_cache else (cache_dir or config.root / ".hooklint_cache"),
            jobs=jobs or os.cpu_count() or 1,
        )
        outcome = run_check(request)
    except ConfigError as exc:
        _fail(str(exc))
    except ValueError as exc:  # unknown selector on the command line
        _fail(str(exc))

    for problem in outcome.problems:
        click.echo(f"hooklint: {problem}", err=True)
    if outcome.stdout_source is not None:
        click.echo(outcome.stdout_source, nl=False)
    if diff:
        click.echo(_diffs(outcome.results), nl=False)
    report = "" if diff else _report(outcome, output_format, statistics, unsafe_fixes, output_file)
    if output_file is not None:
        try:
            output_file.write_text(report, encoding="utf-8")
        except OSError as exc:
            _fail(f"cannot write {output_file}: {exc.strerror or exc}")
    elif outcome.stdout_source is None:
        click.echo(report, nl=False)
    elif report:
        click.echo(report, nl=False, err=True)
    if not quiet and output_format in ("full", "concise"):
        click.echo(outcome.summary(unsafe_fixes, diff), err=outcome.stdout_source is not None or output_file is not None)
    if outcome.internal_error:
        sys.exit(2)
    pending = outcome.remaining or (diff and outcome.fixed)
    sys.exit(0 if exit_zero or not pending else 1)


def _report(outcome, output_format, statistics, unsafe, output_file) -> str:
    from hooklint.report import REPORTERS

    if statistics:
        counts: dict[tuple[str, str], int] = {}
        for v in outcome.remaining:
            counts[(v.code, v.name)] = counts.get((v.code, v.name), 0) + 1
        return "".join(f"{n:>5}  {code}  {name}\n" for (code, name), n in sorted(counts.items()))
    colour = output_file is None and output_format in ("full", "concise") and _use_colour()
    style = click.style if colour else (lambda text, **_: text)
    return REPORTERS[output_format](outcome.remaining, unsafe=unsafe, style=style)


def _use_colour() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _diffs(results) -> str:
    from hooklint.lexical import split_lines

    chunks = []
    for result in results:
        if result.fixed_text is not None:
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
@click.option("--format", "output_format", type=click.Choice(("text", "json", "markdown")), default="text", show_default=True)
def rules_command(output_format: str) -> None:
    """List every rule: code, name, default, fix availability and safety."""
    import json

    from hooklint.rules import all_rules

    rows = [
        {
            "code": r.code,
            "name": r.name,
            "default": "on" if r.default_on and not r.preview else "off",
            "tier": "preview" if r.preview else "stable",
            "fix": r.fix_applicability or "none",
            "summary": r.summary(),
        }
        for r in all_rules()
    ]
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    if output_format == "markdown":
        click.echo(rules_markdown(rows), nl=False)
        return
    click.echo(f"{'code':<6} {'name':<36} {'default':<8} {'tier':<8} {'fix':<7} summary")
    for row in rows:
        click.echo(f"{row['code']:<6} {row['name']:<36} {row['default']:<8} {row['tier']:<8} {row['fix']:<7} {row['summary']}")


def rules_markdown(rows: list[dict]) -> str:
    """The README's rules table."""
    lines = ["| code | name | default | tier | fix | what it finds |", "|---|---|---|---|---|---|"]
    for row in rows:
        summary = row["summary"].replace("|", "\\|")
        lines.append(f"| {row['code']} | `{row['name']}` | {row['default']} | {row['tier']} | {row['fix']} | {summary} |")
    return "\n".join(lines) + "\n"


@main.command()
@click.argument("rule")
def explain(rule: str) -> None:
    """Show a rule's documentation (by code, e.g. HL001, or by name)."""
    from hooklint.rules import find_rule

    found = find_rule(rule)
    if found is None:
        _fail(f"unknown rule `{rule}` (see `hooklint rules`)")
    header = f"{found.code} {found.name}"
    tier = "preview" if found.preview else ("on by default" if found.default_on else "off by default")
    fix = f"fix: {found.fix_applicability}" if found.fix_applicability else "no fix"
    click.echo(f"# {header}\n\n({tier}; {fix})\n\n{found.documentation()}")
    examples = found.INVALID[:1]
    for example in examples:
        click.echo("\n## Flagged (from the rule's tests)\n```python" + example.code.rstrip() + "\n```")
