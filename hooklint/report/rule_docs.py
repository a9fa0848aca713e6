"""The rules' documentation pages, generated from the rule classes.

Each rule's page, ``docs/rules/HLxxx.md``, is its class: the first docstring line as
the summary, its tier, default and fix from the class attributes, links to the rule's
file, its tests and the bundled examples, the rest of the docstring (ruff's sections,
its measured precision, options and known problems), and its ``VALID``/``INVALID``
examples, which are the tests ``tests/test_rule_examples.py`` runs.  ``docs/rules.md``
is the index.  These pages are what SARIF's ``helpUri``, JSON's ``url`` and the
editor's hover link to (:mod:`hooklint.report.urls`).  Regenerate them after editing
a rule (``tests/test_rule_docs.py`` fails until they match)::

    python -m hooklint.report.rule_docs docs

The same rows make ``hooklint rules`` and the README's rules table
(``hooklint rules --format markdown``).
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from hooklint.report.urls import DOCS_DIR, rule_page

#: The repository checkout this module lives in (pages link to its files).
ROOT = Path(__file__).resolve().parents[2]
REGENERATE = "python -m hooklint.report.rule_docs docs"
_GENERATED = (
    f"<!-- Generated from {{source}} by `{REGENERATE}`; "
    "edit the rule's docstring and examples, not this page. -->"
)


def tier(rule) -> str:
    return "preview" if rule.preview else "stable"


def default(rule) -> str:
    """``on`` for a rule a plain run uses, else ``off``."""
    return "on" if rule.default_on and not rule.preview else "off"


def fix_label(rule) -> str:
    """``safe``, ``unsafe``, ``safe, some unsafe`` or ``none``."""
    some = rule.fix_applicability == "safe" and rule.some_fixes_unsafe
    return (rule.fix_applicability or "none") + (", some unsafe" if some else "")


def rule_row(rule) -> dict:
    """One rule as ``hooklint rules`` lists it."""
    return {
        "code": rule.code,
        "name": rule.name,
        "default": default(rule),
        "tier": tier(rule),
        "fix": rule.fix_applicability or "none",
        "some_fixes_unsafe": bool(rule.fix_applicability == "safe" and rule.some_fixes_unsafe),
        "summary": rule.summary(),
    }


def fix_column(row: dict) -> str:
    return row["fix"] + (", some unsafe" if row.get("some_fixes_unsafe") else "")


def readme_table(rows: list[dict]) -> str:
    """The README's rules table (``hooklint rules --format markdown``)."""
    lines = ["| code | name | default | tier | fix | what it finds |", "|---|---|---|---|---|---|"]
    for row in rows:
        summary = _cell(row["summary"])
        lines.append(
            f"| {row['code']} | `{row['name']}` | {row['default']} | {row['tier']} | {fix_column(row)} | {summary} |"
        )
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _tier_text(rule) -> str:
    if rule.preview:
        return "preview: runs with `--preview` (or `preview = true`)"
    if default(rule) == "on":
        return "stable, on by default"
    return f"stable, off by default: select it (`--extend-select {rule.code}`)"


def _fix_text(rule) -> str:
    label = fix_label(rule)
    if label == "safe":
        return "safe (`--fix`)"
    if label == "unsafe":
        return "unsafe (`--fix --unsafe-fixes`)"
    if label == "safe, some unsafe":
        return "safe (`--fix`); some of its fixes are unsafe (`--unsafe-fixes`)"
    return "none"


def _link(path: Path) -> str:
    """A link from a rule page (in ``DOCS_DIR``) to ``path``, a file of the checkout."""
    relative = path.relative_to(ROOT).as_posix()
    up = "../" * len(Path(DOCS_DIR).parts)
    return f"[{relative}]({up}{relative})"


def _source(rule) -> Path:
    import inspect

    return Path(inspect.getsourcefile(rule)).resolve()


def _examples(rule) -> list[Path]:
    folder = ROOT / "examples"
    return sorted(p for p in folder.glob(f"{rule.code.lower()}_*") if p.suffix in (".py", ".ipynb"))


def _is_clean(path: Path) -> bool:
    return path.stem.endswith(("_clean", "_fixed"))


def _options(options: dict) -> str:
    """An example's settings, as the configuration spells them."""
    parts = []
    for key, value in options.items():
        if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, int) for v in value):
            value = f'"{value[0]}.{value[1]}"'
        elif isinstance(value, (tuple, list)):
            value = "[" + ", ".join(f'"{v}"' for v in value) + "]"
        elif isinstance(value, bool):
            value = "true" if value else "false"
        parts.append(f"`{key.replace('_', '-')} = {value}`")
    return ", ".join(parts)


def _code_block(code: str) -> list[str]:
    return ["```python", textwrap.dedent(code).strip("\n"), "```"]


def _example_sections(rule) -> list[str]:
    if not rule.VALID and not rule.INVALID:
        return []
    lines = [
        "## Examples from the tests",
        "",
        "`tests/test_rule_examples.py` runs each of these: the rule reports every example under",
        "*Reported* (at the line given), and its fix, unsafe fixes included, turns it into the",
        "code shown as *Fixed*; it reports nothing in the examples under *Not reported*.",
    ]
    if rule.INVALID:
        lines += ["", "### Reported", ""]
        for index, example in enumerate(rule.INVALID, 1):
            said = [f"at line {example.line}"] if example.line is not None else []
            said += [f"with {_options(example.options)}"] if example.options else []
            text = ", ".join(said)
            lines += [f"{index}. {text[:1].upper()}{text[1:]}:" if said else f"{index}.", ""]
            lines += _indent(_code_block(example.code))
            if example.expected is None:
                lines += ["", "   No fix is offered."]
            else:
                lines += ["", "   *Fixed*:", ""] + _indent(_code_block(example.expected))
            lines.append("")
        lines.pop()
    if rule.VALID:
        lines += ["", "### Not reported", ""]
        for index, example in enumerate(rule.VALID, 1):
            lines += [f"{index}. With {_options(example.options)}:" if example.options else f"{index}.", ""]
            lines += _indent(_code_block(example.code))
            lines.append("")
        lines.pop()
    return lines


def _indent(lines: list[str]) -> list[str]:
    return [("   " + line) if line else "" for line in "\n".join(lines).split("\n")]


def page(rule) -> str:
    """The documentation page of ``rule`` (``docs/rules/HLxxx.md``)."""
    import inspect

    source = _source(rule)
    documentation = inspect.getdoc(rule) or rule.name
    summary, _, body = documentation.partition("\n")
    lines = [
        _GENERATED.format(source=f"`{source.relative_to(ROOT).as_posix()}`"),
        "",
        f"# {rule.code} `{rule.name}`",
        "",
        summary.strip(),
        "",
        f"- **Tier**: {_tier_text(rule)}",
        f"- **Fix**: {_fix_text(rule)}",
        f"- **Rule**: {_link(source)} (`hooklint explain {rule.code}` prints this documentation)",
    ]
    tests = [ROOT / "tests" / "test_rule_examples.py"] if rule.VALID or rule.INVALID else []
    behaviour = ROOT / "tests" / "rules" / f"test_{source.stem}.py"
    if behaviour.is_file():
        tests.append(behaviour)
    if tests:
        lines.append(f"- **Tests**: {', '.join(_link(t) for t in tests)}")
    examples = _examples(rule)
    if examples:
        described = [f"{_link(p)} ({'clean' if _is_clean(p) else 'reported'})" for p in examples]
        lines.append(f"- **Bundled examples**: {', '.join(described)}")
    lines += ["", body.strip("\n")]
    examples_section = _example_sections(rule)
    if examples_section:
        lines += ["", *examples_section]
    return "\n".join(lines).rstrip("\n") + "\n"


INDEX_INTRO = """\
# Rules

Every rule hooklint has, in code order. Each code links to the rule's page, generated
from the rule's class: what it does, why it is bad, an example, what to use instead, the
fix's safety, its precision measured on real code, and the examples its tests run. The
same page is what SARIF's `helpUri`, JSON's `url` and the editor's hover link to, and
`hooklint explain CODE` prints its text. Rule codes are published and never renumbered.

- **stable** rules run by default (except those marked off, which need `--select` or
  `--extend-select`);
- **preview** rules run with `--preview` (or `preview = true`). A rule leaves preview when
  its precision on the development set of real code is 90% or more, over at least 8
  judged findings ([CONTRIBUTING.md](../CONTRIBUTING.md#measuring-a-rule-on-real-code)).
- **fix**: `safe` fixes apply with `--fix`, `unsafe` ones also need `--unsafe-fixes`.
"""


def index(rules) -> str:
    """``docs/rules.md``: every rule, with its tier, default, fix and summary."""
    lines = [
        _GENERATED.format(source="the rule classes (`hooklint/rules/`)"),
        "",
        INDEX_INTRO,
        "| code | name | tier | default | fix | what it finds |",
        "|---|---|---|---|---|---|",
    ]
    for rule in rules:
        row = rule_row(rule)
        link = f"[{rule.code}]({_in_docs(rule_page(rule.code))})"
        lines.append(
            f"| {link} | `{rule.name}` | {row['tier']} | {row['default']} | {fix_column(row)} | {_cell(row['summary'])} |"
        )
    return "\n".join(lines) + "\n"


def generate(rules=None) -> dict[str, str]:
    """Every page, by its path under the docs directory: ``rules.md`` and ``rules/HLxxx.md``."""
    if rules is None:
        from hooklint.rules import all_rules

        rules = all_rules()
    pages = {"rules.md": index(rules)}
    for rule in rules:
        pages[_in_docs(rule_page(rule.code))] = page(rule)
    return pages


def _in_docs(path: str) -> str:
    """A path from the repository root as seen from the docs folder (``docs/``)."""
    return Path(path).relative_to("docs").as_posix()


def write(docs: Path) -> list[Path]:
    """Write every page under ``docs`` and remove rule pages no rule has; the paths written."""
    pages = generate()
    written = []
    folder = docs / _in_docs(DOCS_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("HL*.md"):
        if stale.relative_to(docs).as_posix() not in pages:
            stale.unlink()
    for relative, text in pages.items():
        path = docs / relative
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8", newline="\n")
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0].startswith("-")):
        print("usage: python -m hooklint.report.rule_docs [DOCS_DIR]   (default: docs)", file=sys.stderr)
        return 2
    docs = Path(args[0] if args else "docs")
    for path in write(docs):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
