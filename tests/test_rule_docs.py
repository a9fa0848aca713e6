"""The rule pages (``docs/rules/HLxxx.md``) and their index (``docs/rules.md``) are
generated from the rule classes, and the committed ones are what the generator writes
now: they cannot go stale.  Each is the page its rule's URL names, and each rule's
documentation carries its measured precision."""

from __future__ import annotations

from pathlib import Path

import pytest

from hooklint.report import rule_docs
from hooklint.report.urls import rule_page, rule_url
from hooklint.rules import all_rules

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
STALE = f"is stale: regenerate the rule pages with `{rule_docs.REGENERATE}` (from the repository root) and commit them"


def test_committed_rule_pages_are_what_the_generator_writes(tmp_path):
    assert rule_docs.main([str(tmp_path)]) == 0
    generated = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.md"))
    committed = sorted(["rules.md", *(p.relative_to(DOCS).as_posix() for p in (DOCS / "rules").glob("*.md"))])
    assert committed == generated, f"docs/rules/ holds other pages than the rules have; {STALE}"
    for relative in generated:
        expected = (tmp_path / relative).read_text(encoding="utf-8")
        assert (DOCS / relative).read_text(encoding="utf-8") == expected, f"docs/{relative} {STALE}"


def test_regenerating_changes_nothing_and_removes_a_page_no_rule_has(tmp_path):
    rule_docs.write(tmp_path)
    (tmp_path / "rules" / "HL999.md").write_text("# a rule that does not exist\n", encoding="utf-8")
    assert rule_docs.write(tmp_path) == []
    assert not (tmp_path / "rules" / "HL999.md").exists()


def test_a_page_is_the_rules_docstring_its_tier_its_fix_and_its_tested_examples():
    from hooklint.rules import find_rule

    rule = find_rule("HL002")
    page = rule_docs.page(rule)
    assert page.startswith("<!-- Generated from `hooklint/rules/hl002_capture_hook_not_removed.py`")
    assert "\n# HL002 `capture-hook-not-removed`\n\nA hook that stores what it receives" in page
    assert "- **Tier**: stable, on by default\n" in page
    assert "- **Fix**: safe (`--fix`); some of its fixes are unsafe (`--unsafe-fixes`)\n" in page
    assert (
        "[examples/hl002_layer_input_catcher.py](../../examples/hl002_layer_input_catcher.py) (reported)"
        in page
    )
    assert "(../../examples/hl002_layer_input_catcher_clean.py) (clean)" in page
    docs = rule.documentation()
    assert docs.partition("\n")[2].strip() in page
    for example in [*rule.VALID, *rule.INVALID]:
        first_line = next(line.strip() for line in example.code.splitlines() if line.strip())
        assert first_line in page
    preview = rule_docs.page(find_rule("HL014"))
    assert "- **Tier**: preview: runs with `--preview` (or `preview = true`)\n" in preview
    assert "- **Tier**: stable, off by default: select it (`--extend-select HL100`)\n" in rule_docs.page(
        find_rule("HL100")
    )


def test_the_index_lists_every_rule_with_a_link_to_its_page():
    index = rule_docs.index(all_rules())
    for rule in all_rules():
        row = rule_docs.rule_row(rule)
        line = f"| [{rule.code}](rules/{rule.code}.md) | `{rule.name}` | {row['tier']} | {row['default']} | {rule_docs.fix_column(row)} |"
        assert line in index, rule.code


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_the_rules_url_is_its_committed_page(rule):
    assert rule_page(rule.code) == f"docs/rules/{rule.code}.md"
    assert rule_url(rule.code).endswith("/" + rule_page(rule.code))
    assert (ROOT / rule_page(rule.code)).is_file(), f"{rule_page(rule.code)} is missing; {STALE}"


@pytest.mark.parametrize(
    "rule", [r for r in all_rules() if r.code not in ("HL000", "HL100")], ids=lambda r: r.code
)
def test_every_rule_documents_its_precision_on_real_code_and_how_it_was_measured(rule):
    # The tier is a measured decision: the figure and the command that measures it
    # stay with the rule (CONTRIBUTING.md, "Measuring a rule on real code").
    docs = rule.documentation()
    assert "\n## Precision on real code\n" in docs, rule.code
    section = docs.split("\n## Precision on real code\n", 1)[1].split("\n## ", 1)[0]
    assert "score.py" in section, f"{rule.code}: say which command measured the figure"
