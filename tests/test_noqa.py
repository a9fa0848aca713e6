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


# -- one line splitter: \n, \r\n and \r end a line; \f, \v, \x1c-\x1e, \x85, \u2028 do not --
ODD_BREAKS = ["\f", "\v", "\x1c", "\x85", "\u2028", "\u2029"]


def _global_hook(separator: str, comment: str) -> str:
    return (
        "from torch.nn.modules.module import register_module_forward_hook\n"
        f'NOTE = "a{separator}b"\n'
        "def install(fn):\n"
        f"    register_module_forward_hook(fn){comment}\n"
    )


@pytest.mark.parametrize("separator", ODD_BREAKS, ids=ascii)
def test_noqa_after_a_string_holding_an_odd_line_break_stays_on_its_line(separator):
    from hooklint.engine import lint_text
    from hooklint.rules import rules_by_code
    from hooklint.rules.base import RuleContext

    rules = [rules_by_code()["HL009"]]
    found = lint_text(_global_hook(separator, ""), "m.py", rules, RuleContext())
    assert [(v.start.line, v.source_line) for v in found] == [(4, "    register_module_forward_hook(fn)")]
    assert lint_text(_global_hook(separator, "  # noqa: HL009"), "m.py", rules, RuleContext()) == []


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=ascii)
def test_noqa_in_every_newline_style(newline):
    from hooklint.engine import lint_text
    from hooklint.rules import rules_by_code
    from hooklint.rules.base import RuleContext

    rules = [rules_by_code()["HL009"]]
    text = _global_hook("\u2028", "").replace("\n", newline)
    assert [v.start.line for v in lint_text(text, "m.py", rules, RuleContext())] == [4]
    text = _global_hook("\u2028", "  # noqa").replace("\n", newline)
    assert lint_text(text, "m.py", rules, RuleContext()) == []


def test_split_lines_breaks_only_where_the_tokenizer_does():
    from hooklint.lexical import line_starts, split_lines

    text = "a\fb\u2028c\r\nd\re\nf"
    assert split_lines(text) == ["a\fb\u2028c", "d", "e", "f"]
    assert split_lines(text, keepends=True) == ["a\fb\u2028c\r\n", "d\r", "e\n", "f"]
    assert split_lines("x\n") == ["x", ""] and split_lines("x\n", keepends=True) == ["x\n"]
    assert line_starts(text) == [0, 7, 9, 11]


def test_no_other_line_splitter_in_the_linter():
    # str.splitlines breaks at \f and \u2028; every line of hooklint's is split by hooklint.lexical.
    from pathlib import Path

    import hooklint

    root = Path(hooklint.__file__).parent
    for path in [*root.glob("*.py"), *root.glob("analysis/*.py"), *root.glob("report/*.py"), *(root.parent / "fixes").glob("*.py")]:
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.split("\n"), start=1):
            if ".splitlines(" in line and "docs" not in line and "message" not in line and "read_text" not in line:
                raise AssertionError(f"{path.name}:{number}: {line.strip()}")
