"""``# noqa`` and ``# hooklint: noqa`` through the CLI."""

from __future__ import annotations

import pytest

from _hooklint_cli import BUGGY, check, write

CALL = "    module.register_forward_hook(_disable)"
MULTILINE_CALL = "    module.register_forward_hook(\n        _disable,\n    )"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _exit(tree, source: str) -> int:
    write(tree, "m.py", source)
    return check("m.py", "--no-cache").exit_code


@pytest.mark.parametrize(
    "comment",
    ["# noqa: HL001", "# noqa", "# NOQA:HL001", "# noqa: E501, HL001", "# noqa:HL001,HL000", "# some words  # noqa: HL001"],
)
def test_line_noqa_on_the_line(tree, comment):
    assert _exit(tree, BUGGY.replace(CALL, f"{CALL}  {comment}")) == 0


@pytest.mark.parametrize("comment", ["# noqa: HL002", "# noqa: E501", "# hooklint: noqa-not", "# no qa"])
def test_other_codes_do_not_suppress(tree, comment):
    assert _exit(tree, BUGGY.replace(CALL, f"{CALL}  {comment}")) == 1


def test_noqa_on_first_line_of_a_multiline_violation(tree):
    source = BUGGY.replace(CALL, MULTILINE_CALL.replace("hook(\n", "hook(  # noqa: HL001\n"))
    assert _exit(tree, source) == 0


def test_noqa_on_last_line_of_a_multiline_violation(tree):
    source = BUGGY.replace(CALL, MULTILINE_CALL + "  # noqa: HL001")
    assert _exit(tree, source) == 0


def test_noqa_on_a_middle_line_does_not_suppress(tree):
    source = BUGGY.replace(CALL, MULTILINE_CALL.replace("_disable,", "_disable,  # noqa: HL001"))
    assert _exit(tree, source) == 1


def test_noqa_on_another_line_does_not_suppress(tree):
    source = BUGGY.replace("def install(module):", "def install(module):  # noqa: HL001")
    assert _exit(tree, source) == 1


@pytest.mark.parametrize("comment", ["# hooklint: noqa", "# hooklint: noqa: HL001", "#hooklint:noqa:HL0001,HL001"])
def test_file_level_noqa(tree, comment):
    assert _exit(tree, f"{comment}\n" + BUGGY) == 0
    assert _exit(tree, BUGGY + f"\n{comment}\n") == 0


def test_file_level_noqa_with_other_code_does_not_suppress(tree):
    assert _exit(tree, "# hooklint: noqa: HL002\n" + BUGGY) == 1


def test_suppressed_violation_is_not_fixed(tree):
    source = BUGGY.replace(CALL, f"{CALL}  # noqa: HL001")
    path = write(tree, "m.py", source)
    assert check("m.py", "--no-cache", "--fix").exit_code == 0
    assert path.read_text() == source


def test_syntax_error_respects_file_noqa(tree):
    assert _exit(tree, "# hooklint: noqa\nregister_forward_hook(\n") in (0, 1)  # never a crash


def test_noqa_inside_a_string_is_not_a_comment_but_harmless(tree):
    # A noqa marker inside a string on the violation's line: documented as matching
    # (text-level, as in flake8); this only pins that it does not crash.
    source = BUGGY.replace(CALL, CALL.replace("_disable)", '_disable); x = "# noqa"'))
    assert _exit(tree, source) in (0, 1)
