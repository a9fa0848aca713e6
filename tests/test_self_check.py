"""hooklint on its own tree: ``hooklint check .`` at the project root is clean. What
holds hook bugs on purpose is excluded by the root ``[tool.hooklint]`` (the examples,
the cross-file test packages) or suppressed where it stands with a reason; a path
named on the command line is still checked."""

from __future__ import annotations

import os

from _hooklint_cli import PROJECT_ROOT, check


def _at_root(*args: str):
    cwd = os.getcwd()
    os.chdir(PROJECT_ROOT)
    try:
        return check(*args, "--no-cache", "--format", "concise")
    finally:
        os.chdir(cwd)


def test_the_project_tree_is_clean():
    result = _at_root(".")
    assert result.exit_code == 0, result.output


def test_an_excluded_tree_named_on_the_command_line_is_still_checked():
    result = _at_root("examples/hl001_parametrize_cache.py", "tests/cross_file/mixin_wrapper/invalid")
    assert result.exit_code == 1
    assert "examples/hl001_parametrize_cache.py:" in result.stdout and " HL001 " in result.stdout
    assert "tests/cross_file/mixin_wrapper/invalid/tapkit/probe.py:" in result.stdout
