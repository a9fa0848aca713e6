"""README stays true: its rules table is the registry's, and its commands exist."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from hooklint.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_rules_table_matches_the_registry():
    generated = CliRunner().invoke(main, ["rules", "--format", "markdown"]).output
    table = re.search(r"<!-- rules-table.*?-->\n(.*?)<!-- end rules-table -->", README, re.S)
    assert table is not None, "README lacks the rules-table markers"
    assert table.group(1) == generated, (
        "README's rules table is stale: paste `hooklint rules --format markdown`"
    )


def test_ci_runs_the_readme_test_command():
    assert "python -m pytest" in README
    assert "python -m pytest" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_main_job_finds_the_examples_bugs_and_passes_their_clean_counterparts():
    result = CliRunner().invoke(main, ["check", "--no-cache", "--format", "concise", str(ROOT / "examples")])
    assert result.exit_code == 1, result.output
    flagged = {Path(line.split(":")[0]).name for line in result.output.splitlines() if ": HL" in line}
    examples = sorted(p.name for p in (ROOT / "examples").glob("hl*") if p.suffix in (".py", ".ipynb"))
    assert examples, "examples/ is empty"
    for name in examples:
        if name.endswith("_fixed.py") or "_clean" in name:
            assert name not in flagged, f"clean example {name} is flagged"
        else:
            assert name in flagged, f"buggy example {name} is not flagged"


def test_quick_start_commands_work_on_a_copy_of_the_examples(tmp_path, monkeypatch):
    # The quick start's `hooklint ...` lines, run in order on a repository of buggy
    # files: the first run finds, --fix fixes what is safe, --add-noqa baselines the
    # rest, and the run after it is clean.
    import shutil

    block = re.search(r"## Quick start.*?```bash\n(.*?)```", README, re.S)
    assert block is not None, "README lacks the quick start's commands"
    commands = [
        line.split("#", 1)[0].split() for line in block.group(1).splitlines() if line.startswith("hooklint ")
    ]
    assert [c[:2] for c in commands] == [["hooklint", "check"]] * 4 + [["hooklint", "explain"]]
    for example in (ROOT / "examples").glob("hl*.py"):
        shutil.copy(example, tmp_path / example.name)
    monkeypatch.chdir(tmp_path)
    codes = []
    for command in commands:
        result = CliRunner().invoke(main, [*command[1:], *(["--no-cache"] if command[1] == "check" else [])])
        assert "Traceback" not in result.output
        codes.append(result.exit_code)
    assert codes == [1, 1, 0, 0, 0], codes


def test_every_pinned_version_in_the_docs_is_this_version():
    """The README's install line, pre-commit ``rev`` and action tag, and the same in
    docs/cli.md and action.yml, name the tag of this version (``v`` + ``__version__``,
    which the package's metadata also reads), so a release cannot leave one behind."""
    from hooklint import __version__

    for name in ("README.md", "docs/cli.md", "action.yml"):
        text = (ROOT / name).read_text(encoding="utf-8")
        pinned = re.findall(r"(?:@|rev: |blob/)v(\d+\.\d+\.\d+)", text)
        assert pinned, f"{name} pins no version"
        assert set(pinned) == {__version__}, name
