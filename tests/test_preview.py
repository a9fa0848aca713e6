"""The preview tier with real rules: preview rules run only with ``--preview`` /
``preview = true``, stable rules run either way, and ``hooklint rules`` shows the tier."""

from __future__ import annotations

import textwrap

from click.testing import CliRunner

from hooklint.cli import main
from hooklint.rules import all_rules, find_rule
from hooklint.selection import resolve_rules

PREVIEW_RULE = find_rule("HL014")  # forward-called-directly
STABLE_RULE = find_rule("HL013")  # stale-parametrize-import

SOURCE = textwrap.dedent(
    """\
    from torch.nn.utils.parametrize import _cache_enabled


    def evaluate(model, batch):
        print(_cache_enabled)
        return model.forward(batch)
    """
)


def _codes(result) -> set[str]:
    return {code for code in ("HL013", "HL014") if code in result.output}


def _check(tmp_path, *args, config: str | None = None):
    (tmp_path / "evaluate.py").write_text(SOURCE)
    if config is not None:
        (tmp_path / "pyproject.toml").write_text(config)
    runner = CliRunner()
    return runner.invoke(
        main,
        ["check", str(tmp_path / "evaluate.py"), "--no-cache", "--format", "concise", *args],
        catch_exceptions=False,
    )


def test_the_rules_used_here_are_in_the_tiers_this_test_assumes():
    assert PREVIEW_RULE.preview and not STABLE_RULE.preview


def test_preview_rules_are_not_selected_without_preview():
    chosen = resolve_rules(None)
    assert STABLE_RULE in chosen and PREVIEW_RULE not in chosen
    assert not any(rule.preview for rule in chosen)


def test_preview_rules_are_selected_with_preview():
    chosen = resolve_rules(None, preview=True)
    assert STABLE_RULE in chosen and PREVIEW_RULE in chosen


def test_explicit_select_of_a_preview_rule_still_needs_preview():
    assert resolve_rules(["HL014"]) == [find_rule("HL000")]
    assert PREVIEW_RULE in resolve_rules(["HL014"], preview=True)
    assert PREVIEW_RULE not in resolve_rules(["HL01"])
    assert PREVIEW_RULE in resolve_rules(["HL01"], preview=True)


def test_every_preview_rule_runs_only_in_preview():
    for rule in all_rules():
        if rule.preview:
            assert rule not in resolve_rules(["ALL"]), rule.code
            assert rule in resolve_rules(["ALL"], preview=True), rule.code


def test_cli_without_preview_reports_only_the_stable_rule(tmp_path):
    result = _check(tmp_path)
    assert _codes(result) == {"HL013"}


def test_cli_preview_flag_adds_the_preview_rule(tmp_path):
    result = _check(tmp_path, "--preview")
    assert _codes(result) == {"HL013", "HL014"}


def test_config_preview_true_adds_the_preview_rule(tmp_path):
    result = _check(tmp_path, config="[tool.hooklint]\npreview = true\n")
    assert _codes(result) == {"HL013", "HL014"}


def test_config_preview_false_keeps_it_out(tmp_path):
    result = _check(tmp_path, config="[tool.hooklint]\npreview = false\n")
    assert _codes(result) == {"HL013"}


def test_rules_command_shows_the_tier():
    result = CliRunner().invoke(main, ["rules"], catch_exceptions=False)
    lines = {line.split()[0]: line for line in result.output.splitlines() if line.startswith("HL")}
    assert "preview" in lines["HL014"] and "preview" in lines["HL015"] and "preview" in lines["HL010"]
    assert "stable" in lines["HL013"] and "stable" in lines["HL012"]


def test_preview_tier_hl006_and_hl008_run_only_in_preview():
    default = {r.code for r in resolve_rules(None)}
    assert {"HL005", "HL007"} <= default
    assert not {"HL006", "HL008"} & default
    assert not {"HL006", "HL008"} & {r.code for r in resolve_rules(["HL006", "HL008"])}
    preview = {r.code for r in resolve_rules(None, preview=True)}
    assert {"HL005", "HL006", "HL007", "HL008"} <= preview
