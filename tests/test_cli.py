"""``hooklint`` end to end through its command line, on temporary trees."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest
from _hooklint_cli import (
    BUGGY,
    BUGGY_COLUMN,
    BUGGY_LINE,
    CLEAN,
    FIXED,
    PROJECT_ROOT,
    check,
    hooklint,
    no_traceback,
    run_subprocess,
    write,
)


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    write(tmp_path, "pkg/buggy.py", BUGGY)
    write(tmp_path, "pkg/clean.py", CLEAN)
    return tmp_path


# -- exit codes ---------------------------------------------------------------------------
def test_exit_0_when_clean(tree):
    result = check("pkg/clean.py", "--no-cache")
    assert result.exit_code == 0, result.output
    assert "All checks passed!" in result.output


def test_exit_1_when_violations_remain(tree):
    result = check("--no-cache")
    assert result.exit_code == 1
    assert f"pkg/buggy.py:{BUGGY_LINE}:{BUGGY_COLUMN}: HL001" in result.stdout
    assert "Found 1 error." in result.output


def test_default_path_is_current_directory(tree):
    assert check("--no-cache").exit_code == check(".", "--no-cache").exit_code == 1


def test_exit_2_on_usage_error(tree):
    result = check("--format", "xml")
    assert result.exit_code == 2
    no_traceback(result)


def test_exit_zero(tree):
    result = check("--no-cache", "--exit-zero")
    assert result.exit_code == 0
    assert "HL001" in result.stdout


def test_exit_0_after_everything_is_fixed(tree):
    result = check("--no-cache", "--fix")
    assert result.exit_code == 0, result.output
    assert "1 fixed, 0 remaining" in result.output
    assert (tree / "pkg/buggy.py").read_text() == FIXED


# -- selection ----------------------------------------------------------------------------
@pytest.mark.parametrize("selector", ["HL001", "HL0", "HL", "ALL", "hl001", "HL001,HL000"])
def test_select_matches_codes_prefixes_and_all(tree, selector):
    result = check("--no-cache", "--select", selector, "--format", "concise")
    assert result.exit_code == 1
    assert "HL001" in result.stdout


@pytest.mark.parametrize("option", ["--ignore", "--select"])
def test_ignore_and_select_exclude_hl001(tree, option):
    # --ignore HL001 drops it; --select HL000 selects only the syntax-error rule
    value = "HL001" if option == "--ignore" else "HL000"
    result = check("--no-cache", option, value)
    assert result.exit_code == 0, result.output
    assert "HL001" not in result.stdout


def test_ignore_prefix_beats_select(tree):
    assert check("--no-cache", "--select", "ALL", "--ignore", "HL0").exit_code == 0


def test_extend_select_adds_to_selection(tree):
    result = check("--no-cache", "--select", "HL000", "--extend-select", "HL001", "--format", "concise")
    assert result.exit_code == 1
    assert "HL001" in result.stdout


@pytest.mark.parametrize("option", ["--select", "--extend-select", "--ignore"])
@pytest.mark.parametrize("value", ["HL999", "E501", "XYZ", "HL001,BOGUS1"])
def test_unknown_code_is_a_one_line_usage_error(tree, option, value):
    result = check("--no-cache", option, value)
    assert result.exit_code == 2
    no_traceback(result)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown rule code" in lines[0]


# -- formats ------------------------------------------------------------------------------
def test_full_format_shows_source_line_and_caret(tree):
    result = check("--no-cache", "--format", "full")
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"pkg/buggy.py:{BUGGY_LINE}:{BUGGY_COLUMN}: HL001 [*] ")
    source = "    module.register_forward_hook(_disable)"
    assert f"{BUGGY_LINE} | {source}" in lines
    caret_line = next(line for line in lines if "^" in line)
    prefix = f"{' ' * len(str(BUGGY_LINE))} | "
    carets = caret_line[len(prefix) :].split(" HL001")[0]
    assert carets == " " * (BUGGY_COLUMN - 1) + "^" * len(source.strip())
    assert any("help:" in line for line in lines)


def test_concise_format(tree):
    result = check("--no-cache", "--format", "concise")
    message = json.loads(check("--no-cache", "--format", "json").stdout)[0]["message"]
    assert result.stdout.splitlines()[0] == f"pkg/buggy.py:{BUGGY_LINE}:{BUGGY_COLUMN}: HL001 [*] {message}"
    assert result.stdout.splitlines()[1] == "Found 1 error."


def test_concise_marker_absent_when_fix_withheld(tree):
    result = check("--no-cache", "--format", "concise", "--target-torch", "2.0")
    assert "HL001 [*]" not in result.stdout and "HL001 " in result.stdout
    assert "fix withheld" in result.stdout and "2.1" in result.stdout


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "sarif", "github"])
def test_every_format_reports_and_exits_1(tree, fmt):
    result = check("--no-cache", "--format", fmt)
    assert result.exit_code == 1
    assert "HL001" in result.stdout
    no_traceback(result)


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_machine_formats_are_pure_json_on_stdout(tree, fmt):
    result = check("--no-cache", "--format", fmt)
    json.loads(result.stdout)
    assert "Found" not in result.stdout


def test_output_file(tree):
    result = check("--no-cache", "--format", "json", "--output-file", "report.json")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert json.loads((tree / "report.json").read_text())[0]["code"] == "HL001"


def test_output_file_full_format_has_no_colour(tree, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")  # colour forced: still none in a report file
    check("--no-cache", "--output-file", "report.txt")
    text = (tree / "report.txt").read_text()
    assert "HL001" in text and "\x1b[" not in text


def test_output_file_unwritable_is_exit_2(tree):
    result = check("--no-cache", "--output-file", "no/such/dir/report.txt")
    assert result.exit_code == 2
    no_traceback(result)
    assert "cannot write" in result.stderr


def test_statistics(tree):
    write(tree, "pkg/buggy2.py", BUGGY)
    result = check("--no-cache", "--statistics")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0].split() == ["2", "HL001", "post-hook-without-always-call"]
    assert "buggy" not in result.stdout


def test_quiet_prints_only_violations(tree):
    result = check("--no-cache", "--quiet", "--format", "concise")
    assert result.exit_code == 1
    assert "Found" not in result.output and "fixable" not in result.output
    assert result.stdout.startswith("pkg/buggy.py:")
    assert check("pkg/clean.py", "--no-cache", "--quiet").output == ""


def test_summary_counts_unsafe_fixable_hint(tree):
    result = check("--no-cache")
    assert "[*] 1 fixable with the `--fix` option." in result.output


# -- stdin --------------------------------------------------------------------------------
def test_stdin_uses_stdin_filename(tree):
    result = check(
        "-", "--stdin-filename", "pkg/from_stdin.py", "--no-cache", "--format", "concise", input=BUGGY
    )
    assert result.exit_code == 1
    assert result.stdout.startswith(f"pkg/from_stdin.py:{BUGGY_LINE}:{BUGGY_COLUMN}: HL001")


def test_stdin_clean(tree):
    result = check("-", "--stdin-filename", "x.py", "--no-cache", input=CLEAN)
    assert result.exit_code == 0, result.output


def test_stdin_fix_prints_fixed_code_to_stdout(tree):
    result = check("-", "--stdin-filename", "x.py", "--fix", "--no-cache", input=BUGGY)
    assert result.exit_code == 0, result.output
    assert result.stdout == FIXED
    assert "1 fixed" in result.stderr
    assert not (tree / "x.py").exists()


def test_stdin_fix_of_clean_code_echoes_it(tree):
    result = check("-", "--stdin-filename", "x.py", "--fix", "--no-cache", input=CLEAN)
    assert result.stdout == CLEAN


def test_stdin_undecodable(tree):
    result = check("-", "--stdin-filename", "x.py", "--no-cache", input=b"register_forward_hook\n\xff\xfe\n")
    assert result.exit_code == 2
    no_traceback(result)
    assert "x.py" in result.stderr and "decode" in result.stderr


# -- diff ---------------------------------------------------------------------------------
def test_diff_writes_nothing_and_prints_a_unified_diff(tree):
    before = {p: p.read_bytes() for p in tree.rglob("*.py")}
    result = check("--no-cache", "--diff")
    assert result.exit_code == 1
    assert {p: p.read_bytes() for p in tree.rglob("*.py")} == before
    assert "--- pkg/buggy.py" in result.stdout and "+++ pkg/buggy.py" in result.stdout
    assert "+    module.register_forward_hook(_disable, always_call=True)" in result.stdout
    assert "-    P._cache_enabled -= 1" in result.stdout


def test_diff_with_nothing_to_fix_exits_0(tree):
    result = check("pkg/clean.py", "--no-cache", "--diff")
    assert result.exit_code == 0
    assert "---" not in result.stdout and "+++" not in result.stdout


def test_diff_summary_counts_the_fixes_in_their_own_number():
    from hooklint.runner import CheckOutcome

    remaining = [object()]  # only counted
    assert CheckOutcome([], [], remaining, 1).summary(False, True) == "Would fix 1 error (1 remaining)."
    assert CheckOutcome([], [], remaining, 0).summary(False, True) == "Would fix 0 errors (1 remaining)."
    assert CheckOutcome([], [], [], 2).summary(False, True) == "Would fix 2 errors (0 remaining)."


# -- colour -------------------------------------------------------------------------------
def _run_on_tty(cwd, env):
    master, slave = pty.openpty()
    full_env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    full_env.update(env)
    process = subprocess.Popen(
        [sys.executable, "-m", "hooklint", "check", "--no-cache", "pkg"],
        cwd=cwd,
        env=full_env,
        stdout=slave,
        stderr=subprocess.PIPE,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    process.wait(timeout=120)
    os.close(master)
    return b"".join(chunks).decode()


def test_colour_on_a_tty(tree):
    assert "\x1b[" in _run_on_tty(tree, {})


def test_no_colour_with_no_color_even_on_a_tty(tree):
    text = _run_on_tty(tree, {"NO_COLOR": "1"})
    assert "HL001" in text and "\x1b[" not in text


def test_no_colour_when_piped(tree):
    process = run_subprocess(["check", "--no-cache", "pkg"], tree)
    assert b"HL001" in process.stdout and b"\x1b[" not in process.stdout


# -- entry points and other commands ------------------------------------------------------
def test_python_dash_m(tree):
    process = run_subprocess(["check", "--no-cache", "--format", "concise", "pkg"], tree)
    assert process.returncode == 1, process.stderr
    assert process.stdout.decode().startswith("pkg/buggy.py:14:5: HL001")


def test_version(tree):
    result = hooklint("--version")
    assert result.exit_code == 0 and "hooklint" in result.stdout


def test_rules_json():
    result = hooklint("rules", "--format", "json")
    assert result.exit_code == 0
    rows = {row["code"]: row for row in json.loads(result.stdout)}
    assert rows["HL001"]["name"] == "post-hook-without-always-call"
    assert rows["HL001"]["default"] == "on"
    assert rows["HL001"]["fix"] == "safe"
    assert rows["HL000"]["fix"] == "none"
    for row in rows.values():
        assert set(row) >= {"code", "name", "default", "fix"}
        assert row["fix"] in ("safe", "unsafe", "none")


def test_rules_text():
    result = hooklint("rules")
    assert result.exit_code == 0
    assert "HL001" in result.stdout and "post-hook-without-always-call" in result.stdout


@pytest.mark.parametrize("name", ["HL001", "hl001", "post-hook-without-always-call"])
def test_explain(name):
    result = hooklint("explain", name)
    assert result.exit_code == 0
    for section in (
        "## What it does",
        "## Why is this bad?",
        "## Example",
        "## Use instead",
        "## Fix safety",
    ):
        assert section in result.stdout
    assert "always_call" in result.stdout


def test_explain_unknown_rule():
    result = hooklint("explain", "HL999")
    assert result.exit_code == 2
    no_traceback(result)
    assert "unknown rule" in result.stderr


def test_cli_module_does_not_import_libcst_for_help():
    code = "import sys, hooklint.cli; print('libcst' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT_ROOT)
    assert out.stdout.strip() == "False"


# -- colour choices and the fix flags (issue 15, item 4) ---------------------------------------
@pytest.mark.parametrize(
    ("args", "env", "coloured"),
    [
        (["--color", "always"], {}, True),
        (["--color", "always"], {"NO_COLOR": "1"}, True),
        (["--color", "never"], {"FORCE_COLOR": "1"}, False),
        ([], {"FORCE_COLOR": "1"}, True),
        ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),  # NO_COLOR wins, as in ruff 0.17
        ([], {"FORCE_COLOR": ""}, False),
        ([], {}, False),
    ],
)
def test_color_option_and_force_color_when_piped(tree, args, env, coloured):
    process = run_subprocess(["check", "--no-cache", "pkg", *args], tree, env=env)
    assert b"HL001" in process.stdout
    assert (b"\x1b[" in process.stdout) is coloured


def test_color_never_on_a_tty(tree):
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    process = subprocess.Popen(
        [sys.executable, "-m", "hooklint", "check", "--no-cache", "--color", "never", "pkg"],
        cwd=tree,
        env=env,
        stdout=slave,
        stderr=subprocess.PIPE,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    process.wait(timeout=120)
    os.close(master)
    text = b"".join(chunks).decode()
    assert "HL001" in text and "\x1b[" not in text


def test_color_never_colours_machine_formats(tree):
    process = run_subprocess(["check", "--no-cache", "pkg", "--format", "json", "--color", "always"], tree)
    assert b"\x1b[" not in process.stdout
    json.loads(process.stdout)


def test_fix_only_fixes_and_does_not_report_what_remains(tree):
    write(
        tree,
        "pkg/left.py",
        "from torch.nn.modules.module import register_module_forward_hook\ndef f(fn):\n    register_module_forward_hook(fn)\n",
    )
    result = check("pkg", "--no-cache", "--fix-only")
    assert result.exit_code == 0, result.output
    assert (tree / "pkg/buggy.py").read_text() == FIXED
    assert "HL009" not in result.output and "HL001" not in result.output
    assert result.output.strip() == "Fixed 1 error."
    again = check("pkg", "--no-cache", "--fix-only")
    assert again.exit_code == 0 and again.output.strip() == ""


def test_exit_non_zero_on_fix(tree):
    result = check("pkg", "--no-cache", "--fix", "--exit-non-zero-on-fix")
    assert result.exit_code == 1 and (tree / "pkg/buggy.py").read_text() == FIXED
    assert "Found 1 error (1 fixed, 0 remaining)." in result.output
    assert check("pkg", "--no-cache", "--fix", "--exit-non-zero-on-fix").exit_code == 0  # nothing left to fix
    write(tree, "pkg/buggy.py", BUGGY)
    assert check("pkg", "--no-cache", "--fix-only", "--exit-non-zero-on-fix").exit_code == 1


def test_show_fixes_lists_what_was_fixed_per_file_and_rule(tree):
    write(tree, "pkg/other.py", BUGGY)
    result = check("pkg", "--no-cache", "--fix", "--show-fixes")
    assert result.exit_code == 0
    assert (
        "Fixed 2 errors:\n- pkg/buggy.py:\n    1 \u00d7 HL001 (post-hook-without-always-call)\n- pkg/other.py:\n    1 \u00d7 HL001 (post-hook-without-always-call)\n"
        in result.output
    )
    assert "Fixed" not in check("pkg", "--no-cache", "--fix", "--show-fixes").output.replace(
        "All checks passed!", ""
    )


def test_extend_ignore_adds_to_the_configured_ignores(tree):
    write(tree, "pyproject.toml", '[tool.hooklint]\nignore = ["HL009"]\n')
    write(
        tree,
        "pkg/glob.py",
        "from torch.nn.modules.module import register_module_forward_hook\ndef f(fn):\n    register_module_forward_hook(fn)\n",
    )
    assert check("pkg", "--no-cache").exit_code == 1
    assert check("pkg", "--no-cache", "--extend-ignore", "HL001").exit_code == 0


def test_rule_is_an_alias_of_explain(tree):
    assert hooklint("rule", "HL001").stdout == hooklint("explain", "HL001").stdout
    assert "## Why is this bad?" in hooklint("rule", "post-hook-without-always-call").stdout
    assert hooklint("rule", "HL999").exit_code == 2


def test_rules_json_has_each_rules_documentation_and_url(tree):
    from hooklint.rules import all_rules

    rows = json.loads(hooklint("rules", "--format", "json").stdout)
    assert [r["code"] for r in rows] == [r.code for r in all_rules()]
    for row, rule in zip(rows, all_rules()):
        assert row["explanation"] == rule.documentation()
        assert row["url"].endswith(f"/docs/rules/{rule.code}.md") and row["url"].startswith("https://")
        assert (PROJECT_ROOT / "docs" / "rules" / f"{rule.code}.md").is_file(), (
            f"the url's page docs/rules/{rule.code}.md is missing"
        )
