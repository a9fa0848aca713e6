"""The engine through the CLI: autofix writes, rollback, bad input, parallelism, no torch."""

from __future__ import annotations

import codecs
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from _hooklint_cli import BUGGY, CLEAN, FIXED, PROJECT_ROOT, check, no_traceback, run_subprocess, write
from hooklint.fixes.edits import Replace

import hooklint.rules as rules_module
import hooklint.selection as selection_module
from hooklint.rules.base import Finding, Rule


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


# -- fix: writing ------------------------------------------------------------------------
def test_fix_is_atomic_via_replace_and_leaves_no_temporary(tree, monkeypatch):
    path = write(tree, "m.py", BUGGY)
    replaced = []
    real_replace = os.replace

    def spy(source, target):
        replaced.append((Path(source), Path(target)))
        return real_replace(source, target)

    monkeypatch.setattr("hooklint.writer.os.replace", spy)
    result = check("m.py", "--fix", "--no-cache")
    assert result.exit_code == 0, result.output
    assert path.read_text() == FIXED
    assert len(replaced) == 1
    temporary, target = replaced[0]
    assert target.resolve() == path.resolve() and temporary.parent.resolve() == tree.resolve()
    assert sorted(p.name for p in tree.iterdir()) == ["m.py"]


def test_fix_keeps_latin1_encoding(tree):
    source = "# -*- coding: latin-1 -*-\n# Auteur: Fran\u00e7ois, caf\u00e9\n" + BUGGY
    path = write(tree, "m.py", source.encode("latin-1"))
    result = check("m.py", "--fix", "--no-cache")
    assert result.exit_code == 0, result.output
    raw = path.read_bytes()
    assert b"Fran\xe7ois, caf\xe9" in raw  # still latin-1, not utf-8
    assert raw.decode("latin-1") == "# -*- coding: latin-1 -*-\n# Auteur: Fran\u00e7ois, caf\u00e9\n" + FIXED


def test_fix_keeps_bom(tree):
    path = write(tree, "m.py", codecs.BOM_UTF8 + ("# \u00fcber\n" + BUGGY).encode())
    assert check("m.py", "--fix", "--no-cache").exit_code == 0
    raw = path.read_bytes()
    assert raw.startswith(codecs.BOM_UTF8) and not raw[3:].startswith(codecs.BOM_UTF8)
    assert raw[3:].decode() == "# \u00fcber\n" + FIXED


def test_fix_keeps_crlf(tree):
    path = write(tree, "m.py", BUGGY.replace("\n", "\r\n").encode())
    assert check("m.py", "--fix", "--no-cache").exit_code == 0
    raw = path.read_bytes()
    assert raw == FIXED.replace("\n", "\r\n").encode()


def test_fix_keeps_permissions(tree):
    path = write(tree, "m.py", BUGGY)
    path.chmod(0o751)
    assert check("m.py", "--fix", "--no-cache").exit_code == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert path.read_text() == FIXED


def test_fix_is_idempotent(tree):
    path = write(tree, "m.py", BUGGY)
    assert check("m.py", "--fix", "--no-cache").exit_code == 0
    once = path.read_bytes()
    second = check("m.py", "--fix", "--no-cache")
    assert second.exit_code == 0 and "All checks passed!" in second.output
    assert path.read_bytes() == once
    assert check("m.py", "--diff", "--no-cache").stdout.count("---") == 0


def test_fix_refuses_to_overwrite_a_file_changed_since_read(tree, monkeypatch):
    path = write(tree, "m.py", BUGGY)
    edited = BUGGY + "\n# edited by someone else meanwhile\n"
    import hooklint.runner as runner

    real = runner.check_paths

    def check_then_edit(*args, **kwargs):
        results = real(*args, **kwargs)
        path.write_text(edited)  # the file changes between reading and writing
        return results

    monkeypatch.setattr(runner, "check_paths", check_then_edit)
    result = check("m.py", "--fix", "--no-cache")
    no_traceback(result)
    assert path.read_text() == edited
    assert "changed on disk" in result.stderr and "m.py" in result.stderr
    assert result.exit_code != 0
    assert "All checks passed" not in result.output


def test_unsafe_fixes_flag_is_accepted(tree):
    path = write(tree, "m.py", BUGGY)
    assert check("m.py", "--fix", "--unsafe-fixes", "--no-cache").exit_code == 0
    assert path.read_text() == FIXED


def test_fix_withheld_for_old_target_torch(tree):
    path = write(tree, "m.py", BUGGY)
    result = check("m.py", "--fix", "--no-cache", "--target-torch", "2.0")
    assert result.exit_code == 1
    assert path.read_text() == BUGGY
    assert "fix withheld" in result.stdout and "always_call" in result.stdout and "2.1" in result.stdout


# -- fix: rollback of a fix that breaks parsing -------------------------------------------------
class BreakingRule(Rule):
    """Test-only rule whose fix leaves code that does not parse."""

    code = "HL990"
    name = "test-breaking-fix"
    fix_applicability = "safe"
    prefilter = ("register_forward_hook",)

    def check(self, facts, context):
        for registration in facts.registrations:
            yield Finding(
                node=registration.call,
                message="test finding",
                fix_edits=[Replace(registration.call, "broken(")],
                fix_message="break it",
            )


@pytest.fixture
def breaking_rule(monkeypatch):
    original = rules_module.all_rules()
    extended = lambda: tuple(sorted(original + (BreakingRule,), key=lambda r: r.code))  # noqa: E731
    monkeypatch.setattr(rules_module, "all_rules", extended)
    monkeypatch.setattr(selection_module, "all_rules", extended)
    return BreakingRule


def test_fix_that_breaks_parsing_is_rolled_back_and_reported(tree, breaking_rule):
    path = write(tree, "m.py", CLEAN)
    result = check("m.py", "--fix", "--no-cache", "--select", "HL990")
    no_traceback(result)
    assert path.read_text() == CLEAN
    assert "HL990 fix rolled back" in result.stderr and "does not parse" in result.stderr
    assert result.exit_code == 1
    assert "HL990" in result.stdout


def test_breaking_fix_does_not_block_good_fixes(tree, breaking_rule):
    path = write(tree, "m.py", BUGGY)
    result = check("m.py", "--fix", "--no-cache", "--select", "HL001,HL990")
    no_traceback(result)
    text = path.read_text()
    assert "always_call=True" in text and "broken(" not in text
    assert "rolled back" in result.stderr


# -- bad input ------------------------------------------------------------------------------
def _bad_tree(root: Path) -> None:
    write(root, "good.py", BUGGY)
    write(root, "syntax.py", "def broken(:\n    module.register_forward_hook(f)\n")
    write(root, "undecodable.py", b"x = 1  # register_forward_hook\n\xff\xfe\xfa\n")
    write(root, "binary.py", b"\x7fELF\x00\x00register_forward_hook\x00")
    write(root, "cookie.py", b"# -*- coding: no-such-codec -*-\nregister_forward_hook\n")
    (root / "dir.py").mkdir()
    write(root, "dir.py/inner.py", BUGGY)


def test_bad_input_gives_one_line_diagnostics_and_checks_the_rest(tree):
    _bad_tree(tree)
    result = check(".", "--no-cache", "--format", "concise")
    no_traceback(result)
    assert "good.py:14:5: HL001" in result.stdout
    assert "dir.py/inner.py:14:5: HL001" in result.stdout
    assert "syntax.py:1:" in result.stdout and "HL000" in result.stdout
    diagnostics = result.stderr.strip().splitlines()
    assert any(line.startswith("hooklint: undecodable.py: ") and "decode" in line for line in diagnostics)
    assert any(line.startswith("hooklint: binary.py: ") and "binary" in line for line in diagnostics)
    assert any(line.startswith("hooklint: cookie.py: ") for line in diagnostics)
    assert len(diagnostics) == 3
    assert result.exit_code == 2


def test_syntax_error_position_is_where_the_parser_stopped(tree):
    write(tree, "syntax.py", "import torch\n\ndef broken(:\n    module.register_forward_hook(f)\n")
    data = json.loads(check("syntax.py", "--no-cache", "--format", "json").stdout)
    assert [d["code"] for d in data] == ["HL000"]
    assert data[0]["name"] == "syntax-error"
    assert data[0]["location"]["row"] in (3, 4)


def test_unreadable_file(tree, monkeypatch):
    write(tree, "good.py", BUGGY)
    secret = write(tree, "secret.py", BUGGY)
    real = os.open

    def refusing_open(path, *args, **kwargs):
        if os.path.basename(path) == "secret.py":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    result = check(".", "--no-cache", "--format", "concise")
    no_traceback(result)
    assert "good.py:14:5: HL001" in result.stdout
    assert result.stderr.strip() == "hooklint: secret.py: cannot read: Permission denied"
    assert result.exit_code == 2
    assert secret.exists()


def test_missing_path(tree):
    write(tree, "good.py", BUGGY)
    result = check("good.py", "missing.py", "--no-cache", "--format", "concise")
    no_traceback(result)
    assert "good.py:14:5: HL001" in result.stdout
    assert result.stderr.strip() == "hooklint: missing.py: no such file or directory"
    assert result.exit_code == 2


def test_directory_named_like_a_python_file_is_walked(tree):
    write(tree, "pkg.py/inner.py", BUGGY)
    result = check("pkg.py", "--no-cache", "--format", "concise")
    no_traceback(result)
    assert result.stdout.startswith("pkg.py/inner.py:14:5: HL001")


def test_deeply_nested_code_is_a_diagnostic_not_a_crash(tree):
    write(tree, "good.py", BUGGY)
    write(tree, "deep.py", "register_forward_hook\nx = " + "(" * 3000 + "1" + ")" * 3000 + "\n")
    result = check(".", "--no-cache", "--format", "concise")
    no_traceback(result)
    assert "good.py:14:5: HL001" in result.stdout
    assert "deep.py" in result.output


# -- prefilter ------------------------------------------------------------------------------
def test_file_without_hook_tokens_is_never_parsed(tree, monkeypatch):
    write(tree, "plain.py", "def f(:\n")  # would be HL000 if parsed
    import libcst

    monkeypatch.setattr(libcst, "parse_module", lambda *a, **k: pytest.fail("parsed"))
    result = check(".", "--no-cache")  # discovered, not named: not parsed at all
    assert result.exit_code == 0, result.output


# -- parallelism ----------------------------------------------------------------------------
def _big_tree(root: Path) -> None:
    for i in range(40):
        write(root, f"pkg/sub{i % 4}/m{i:02d}.py", (BUGGY if i % 3 == 0 else CLEAN) + f"\n# file {i}\n")
    write(root, "pkg/syntax.py", "def broken(:\n    module.register_forward_hook(f)\n")
    write(root, "pkg/bad.py", b"register_forward_hook\n\xff\n")
    for i in range(30):
        write(root, f"pkg/plain{i}.py", f"x = {i}\n")


@pytest.mark.parametrize("fmt", ["concise", "json"])
def test_jobs_2_equals_jobs_1(tree, fmt):
    _big_tree(tree)
    serial = run_subprocess(["check", "--no-cache", "--jobs", "1", "--format", fmt, "pkg"], tree)
    parallel = run_subprocess(["check", "--no-cache", "--jobs", "2", "--format", fmt, "pkg"], tree)
    assert serial.returncode == parallel.returncode == 2
    assert serial.stdout == parallel.stdout
    assert serial.stderr == parallel.stderr
    assert serial.stdout.count(b"HL001") >= 14
    assert b"Traceback" not in parallel.stderr


def test_jobs_2_fix_equals_jobs_1_fix(tree):
    _big_tree(tree / "a")
    _big_tree(tree / "b")
    first = run_subprocess(["check", "--no-cache", "--jobs", "1", "--fix", "pkg"], tree / "a")
    second = run_subprocess(["check", "--no-cache", "--jobs", "2", "--fix", "pkg"], tree / "b")
    assert first.stdout == second.stdout and first.returncode == second.returncode
    for path in (tree / "a").rglob("*.py"):
        assert path.read_bytes() == (tree / "b" / path.relative_to(tree / "a")).read_bytes()


def test_output_is_sorted_by_path_line_column(tree):
    _big_tree(tree)
    data = json.loads(
        run_subprocess(["check", "--no-cache", "--jobs", "2", "--format", "json", "pkg"], tree).stdout
    )
    keys = [(d["filename"], d["location"]["row"], d["location"]["column"]) for d in data]
    assert keys == sorted(keys)


# -- torch is never imported ---------------------------------------------------------------------
def test_a_full_check_run_never_imports_torch(tree):
    _big_tree(tree)
    write(tree, "pkg/uses_torch.py", "import torch\nimport torch.nn as nn\n" + BUGGY)
    script = (
        "import sys\n"
        "from hooklint.cli import main\n"
        "try:\n"
        "    main(['check', '--no-cache', '--jobs', '2', '--fix', '--format', 'sarif', 'pkg'])\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH', code, file=sys.stderr)\n"
    )
    process = subprocess.run(
        [sys.executable, "-c", script], cwd=tree, capture_output=True, text=True, timeout=300
    )
    assert process.stderr.strip().splitlines()[-1] == "NO-TORCH 2", process.stderr
    rules = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from hooklint.rules import all_rules; all_rules(); import hooklint.report.sarif; print('torch' in sys.modules)",
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
    )
    assert rules.stdout.strip() == "False", rules.stderr


def test_skipping_irrelevant_definitions_keeps_findings_and_positions():
    """hooklint.sparse blanks definitions no rule can care about; what is reported,
    and where, must be exactly what a full parse reports."""
    import ast as std_ast

    import hooklint.engine as engine_module
    from hooklint.rules import all_rules
    from hooklint.rules.base import RuleContext
    from hooklint.sparse import relevant_source

    filler = "".join(f"def helper_{i}(x):\n    return [y * {i} for y in x]\n\n\n" for i in range(30))
    source = (
        "import torch.nn.utils.parametrize as P\n\n\n"
        + filler
        + "class Tracer:\n"
        + "    def unrelated(self):\n        return 1\n\n"
        + "    def _enter(self, module, args):\n        P._cache_enabled += 1\n\n"
        + "    def _leave(self, module, args, output):\n        P._cache_enabled -= 1\n\n"
        + "    def attach(self, model):\n"
        + "        model.register_forward_pre_hook(self._enter)\n"
        + "        model.register_forward_hook(self._leave)\n"
        + filler.replace("helper_", "tail_")
    )
    rules = [r for r in all_rules() if r.code != "HL000"]
    tokens = engine_module._prefilter_regex(engine_module.prefilter_tokens(rules))
    sparse = relevant_source(source, std_ast.parse(source), tokens)
    assert "helper_3" not in sparse and "def unrelated" not in sparse
    assert sparse.count("\n") == source.count("\n")

    skipped = engine_module.lint_text(source, "m.py", rules, RuleContext())
    full = engine_module.lint_text(source, "m.py", rules, RuleContext(), skip_irrelevant=False)
    assert skipped == full and [v.code for v in skipped] == ["HL001"]
    assert (
        skipped[0].start.line
        == source.splitlines().index("        model.register_forward_hook(self._leave)") + 1
    )


# -- positions -----------------------------------------------------------------------------------
def test_selective_positions_equal_libcsts_position_provider():
    import libcst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from hooklint.analysis.walk import descendants
    from hooklint.positions import positions_of

    source = (PROJECT_ROOT / "examples").glob("*.py")
    for path in sorted(source):
        module = libcst.parse_module(path.read_text(encoding="utf-8"))
        everything = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        nodes = [module, *descendants(module)]
        some = nodes[::7]
        assert positions_of(module, some).items() <= dict(everything).items(), path
        for first in (nodes[1:4], nodes[len(nodes) // 2 : len(nodes) // 2 + 3]):
            # the code generation stops after the last wanted node: each still gets its range
            found = positions_of(module, first)
            assert all(found[n] == everything[n] for n in first), path
        mine = positions_of(module, nodes)
        assert all(mine[n] == everything[n] for n in nodes), path


def test_warnings_about_the_checked_code_are_not_printed():
    # "\d" in a plain string is a DeprecationWarning (a SyntaxWarning since 3.12) of
    # CPython's compiler: it concerns the user's code, and hooklint's run prints nothing.
    import warnings

    from hooklint.engine import fix_text, lint_text, syntax_check
    from hooklint.rules import all_rules
    from hooklint.rules.base import RuleContext

    text = 'PATTERN = "\\d+"\n\ndef probe(model, x, seen):\n    h = model.register_forward_hook(lambda m, i, o: seen.append(o))\n    model(x)\n    h.remove()\n'
    rules = list(all_rules())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert lint_text(text, "m.py", rules, RuleContext())
        assert syntax_check(text, "m.py", rules) == []
        assert fix_text(text, "m.py", rules, RuleContext(), unsafe=True).text != text
    assert [str(w.message) for w in caught] == []
