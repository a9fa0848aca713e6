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
    [
        "# noqa: HL001",
        "# noqa",
        "# NOQA:HL001",
        "# noqa: E501, HL001",
        "# noqa:HL001,HL000",
        "# some words  # noqa: HL001",
    ],
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


@pytest.mark.parametrize(
    "comment", ["# hooklint: noqa", "# hooklint: noqa: HL001", "#hooklint:noqa:HL0001,HL001"]
)
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
    for path in [
        *root.glob("*.py"),
        *root.glob("analysis/*.py"),
        *root.glob("report/*.py"),
        *(root.parent / "fixes").glob("*.py"),
    ]:
        if path.name == "lexical.py":
            continue  # the splitter itself: str.splitlines only where it breaks as the tokenizer does
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.split("\n"), start=1):
            if (
                ".splitlines(" in line
                and "docs" not in line
                and "message" not in line
                and "read_text" not in line
            ):
                raise AssertionError(f"{path.name}:{number}: {line.strip()}")


# -- --add-noqa (issue 15, item 4) -------------------------------------------------------------
def _add(tree, source: str | bytes, *extra: str):
    path = write(tree, "m.py", source)
    result = check("m.py", "--no-cache", "--add-noqa", *extra)
    return path, result


def test_add_noqa_then_a_clean_run_and_a_second_add_changes_nothing(tree):
    path, result = _add(tree, BUGGY)
    assert result.exit_code == 0, result.output
    assert "Added 1 noqa directive." in result.stderr
    assert path.read_text() == BUGGY.replace(CALL, CALL + "  # noqa: HL001")
    assert check("m.py", "--no-cache").exit_code == 0
    again = check("m.py", "--no-cache", "--add-noqa")
    assert "Added 0 noqa directives." in again.stderr and path.read_text() == BUGGY.replace(
        CALL, CALL + "  # noqa: HL001"
    )


def test_add_noqa_merges_with_an_existing_directive_and_keeps_the_comment(tree):
    path, _ = _add(tree, BUGGY.replace(CALL, CALL + "  # why: E501 is fine  # noqa: E501"))
    assert CALL + "  # why: E501 is fine  # noqa: E501, HL001\n" in path.read_text()
    assert check("m.py", "--no-cache").exit_code == 0


def test_add_noqa_keeps_crlf_and_the_rest_of_the_file_byte_for_byte(tree):
    source = BUGGY.replace("\n", "\r\n").encode()
    path, result = _add(tree, source)
    assert result.exit_code == 0
    assert path.read_bytes() == source.replace(
        CALL.encode() + b"\r\n", CALL.encode() + b"  # noqa: HL001\r\n"
    )


def test_add_noqa_puts_the_directive_after_a_string_that_spans_the_first_line(tree):
    source = (
        "from torch.nn.modules.module import register_module_forward_hook\n"
        "def install(fn):\n"
        '    register_module_forward_hook(fn, always_call="""\n'
        "    # noqa: not a comment\n"
        '    """)\n'
    )
    path, result = _add(tree, source)
    assert result.exit_code == 0, result.output
    text = path.read_text()
    assert (
        '    """)  # noqa: HL009\n' in text and 'register_module_forward_hook(fn, always_call="""\n' in text
    )
    assert check("m.py", "--no-cache").exit_code == 0


def test_add_noqa_never_writes_after_a_line_continuation(tree):
    source = (
        "from torch.nn.modules.module import register_module_forward_hook\n"
        "def install(fn):\n"
        "    register_module_forward_hook(fn, \\\n"
        "        always_call=False)\n"
    )
    path, result = _add(tree, source)
    assert (
        "    register_module_forward_hook(fn, \\\n        always_call=False)  # noqa: HL009\n"
        in path.read_text()
    )
    from hooklint.engine import parses

    assert parses(path.read_text()) and check("m.py", "--no-cache").exit_code == 0


def test_add_noqa_refuses_stdin_and_fix(tree):
    assert check("-", "--add-noqa", input=BUGGY).exit_code == 2
    result = check("m.py", "--add-noqa", "--fix")
    assert result.exit_code == 2 and "--add-noqa" in result.stderr


def test_add_noqa_does_not_write_a_read_only_file(tree):
    import os

    path = write(tree, "m.py", BUGGY)
    os.chmod(path, 0o444)
    result = check("m.py", "--no-cache", "--add-noqa")
    assert result.exit_code == 2 and "read-only" in result.stderr
    assert path.read_text() == BUGGY


def test_add_noqa_text_function_directly():
    from hooklint.noqa import add_noqa
    from hooklint.violation import Location, Violation

    def at(line, code="HL001", end=None):
        return Violation(code, "n", "m", "m.py", Location(line, 1), Location(end or line, 2))

    text = "a = 1\nb = 2   \nc = 3  # noqa: HL002\nd = 4  # noqa\n"
    new, changed, problems = add_noqa(text, [at(1), at(1, "HL003"), at(2), at(3), at(4), at(1, "HL000")])
    assert (
        new
        == "a = 1  # noqa: HL001, HL003\nb = 2  # noqa: HL001\nc = 3  # noqa: HL002, HL001\nd = 4  # noqa\n"
    )
    assert changed == 3 and problems == []
    assert add_noqa(new, [at(1), at(2), at(3)])[0] == new  # idempotent
    inside = 'x = """\nstill a string\n"""\n'
    _, changed, problems = add_noqa(inside, [at(2)])
    assert changed == 0 and problems and problems[0][0] == 2


# -- HL100 unused-noqa --------------------------------------------------------------------------
def _hl100(tree, source: str, *extra: str):
    write(tree, "m.py", source)
    return check("m.py", "--no-cache", "--extend-select", "HL100", "--format", "concise", *extra)


def test_hl100_is_off_by_default(tree):
    write(tree, "m.py", "x = 1  # noqa: HL999\n")
    assert check("m.py", "--no-cache").exit_code == 0


def test_hl100_reports_unknown_unused_and_not_enabled_codes_and_leaves_used_ones(tree):
    source = BUGGY.replace(CALL, CALL + "  # noqa: HL001, HL002, HL999, E501").replace(
        "def install(module):", "def install(module):  # noqa: HL001"
    )
    result = _hl100(tree, source)
    lines = [line for line in result.stdout.splitlines() if "HL100" in line]
    assert len(lines) == 2, result.stdout
    assert "m.py:12:" in lines[0] and "unused: HL001" in lines[0]
    assert (
        "m.py:14:" in lines[1]
        and "unknown: HL999" in lines[1]
        and "unused: HL002" in lines[1]
        and "HL001" not in lines[1].split("(")[1]
    )
    fixed = _hl100(tree, source, "--fix")
    text = (tree / "m.py").read_text()
    assert CALL + "  # noqa: HL001, E501\n" in text and "def install(module):\n" in text, text
    assert fixed.exit_code == 0 and _hl100(tree, text).exit_code == 0


def test_hl100_runs_on_files_without_any_hook_token(tree):
    result = _hl100(tree, "x = 1  # noqa: HL001\n")
    assert result.exit_code == 1 and "HL100" in result.stdout and "unused: HL001" in result.stdout
    write(tree, "pkg/plain.py", "x = 1  # noqa: HL003\n")
    walked = check("pkg", "--no-cache", "--extend-select", "HL100", "--format", "concise")
    assert "pkg/plain.py:1:8: HL100" in walked.stdout


def test_hl100_ignores_noqa_text_inside_strings_and_bare_noqa(tree):
    assert _hl100(tree, 'x = "# noqa: HL001"\ny = 2  # noqa\n').exit_code == 0


def test_hl100_a_file_level_suppression_is_not_counted_as_use(tree):
    source = "# hooklint: noqa: HL001\n" + BUGGY.replace(CALL, CALL + "  # noqa: HL001")
    result = _hl100(tree, source)
    assert "unused: HL001" in result.stdout


@pytest.mark.parametrize("comment", ["# noqa", "# noqa: HL000", "# hooklint: noqa"])
def test_a_syntax_error_is_never_suppressed(tree, comment):
    # As in ruff: a file that does not parse is reported whatever its comments say
    # (on a broken line, what looks like a comment may not be one).
    write(tree, "m.py", f"x = (  {comment}\nmodule.register_forward_hook(hook)\n")
    result = check("m.py", "--no-cache")
    assert result.exit_code == 1 and "HL000" in result.stdout
