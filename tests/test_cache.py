"""The result cache through the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from _hooklint_cli import BUGGY, CLEAN, check, write


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "pkg/buggy.py", BUGGY)
    write(tmp_path, "pkg/clean.py", CLEAN)
    write(tmp_path, "pkg/syntax.py", "def f(:\n    m.register_forward_hook(g)\n")
    return tmp_path


def _entries(directory):
    """The content cache's entries (not the run index)."""
    return sorted(p for p in directory.rglob("*.json") if p.parent.name != "runs")


def _run_indexes(directory):
    return sorted((directory / "runs").glob("*.json"))


def _no_parsing(monkeypatch):
    import libcst

    def fail(*args, **kwargs):
        raise AssertionError("parsed on a warm run")

    monkeypatch.setattr(libcst, "parse_module", fail)
    monkeypatch.setattr("hooklint.engine.ast.parse", fail)


@pytest.mark.parametrize("fmt", ["full", "json", "sarif"])
def test_warm_run_gives_the_same_output_without_parsing(tree, monkeypatch, fmt):
    cold = check("pkg", "--format", fmt)
    assert cold.exit_code == 1
    assert _entries(tree / ".hooklint_cache")
    _no_parsing(monkeypatch)
    warm = check("pkg", "--format", fmt)
    assert (warm.exit_code, warm.stdout, warm.stderr) == (cold.exit_code, cold.stdout, cold.stderr)


def test_cache_ignores_itself_in_git(tree):
    check("pkg")
    assert (tree / ".hooklint_cache/.gitignore").read_text().splitlines()[-1] == "*"
    assert "*" in (tree / ".hooklint_cache/.gitignore").read_text().split()


def test_cache_dir_in_the_config_root(tree, monkeypatch):
    write(tree, "pyproject.toml", "[tool.hooklint]\n")
    monkeypatch.chdir(tree / "pkg")
    check(".")
    assert (tree / ".hooklint_cache").is_dir() and not (tree / "pkg/.hooklint_cache").exists()


def test_no_cache_writes_nothing(tree):
    check("pkg", "--no-cache")
    assert not (tree / ".hooklint_cache").exists()


def test_no_cache_does_not_read(tree, monkeypatch):
    check("pkg")
    import hooklint.cache

    monkeypatch.setattr(hooklint.cache, "load", lambda *a: pytest.fail("cache read"))
    assert check("pkg", "--no-cache").exit_code == 1


def test_cache_dir_option(tree):
    check("pkg", "--cache-dir", "elsewhere/cache")
    assert _entries(tree / "elsewhere/cache") and not (tree / ".hooklint_cache").exists()
    assert (tree / "elsewhere/cache/.gitignore").exists()


def test_corrupt_entry_is_ignored_and_rewritten(tree):
    cold = check("pkg", "--format", "json")
    entries = _entries(tree / ".hooklint_cache")
    for index, entry in enumerate(entries):
        entry.write_text(["{not json", '{"violations": [{"code": 1}]}', "", '{"other": []}'][index % 4])
    for run_index in _run_indexes(tree / ".hooklint_cache"):
        run_index.unlink()  # else the unchanged files never reach the content cache
    warm = check("pkg", "--format", "json")
    assert (warm.exit_code, warm.stdout) == (cold.exit_code, cold.stdout)
    for entry in _entries(tree / ".hooklint_cache"):
        json.loads(entry.read_text())["violations"]


def test_cache_is_keyed_by_content(tree):
    assert check("pkg").exit_code == 1
    write(tree, "pkg/buggy.py", CLEAN + "\n# now clean\n")
    write(tree, "pkg/syntax.py", CLEAN)
    assert check("pkg").exit_code == 0


def test_cache_is_keyed_by_settings(tree):
    concise = check("pkg", "--format", "concise").stdout
    assert "HL001 [*]" in concise
    withheld = check("pkg", "--format", "concise", "--target-torch", "2.0").stdout
    assert "HL001 [*]" not in withheld and "fix withheld" in withheld
    assert check("pkg", "--ignore", "HL001", "--format", "concise").stdout.count("HL001") == 0


def test_cache_is_keyed_by_hooklints_code(tree, monkeypatch):
    check("pkg")
    before = set(_entries(tree / ".hooklint_cache"))
    runs_before = set(_run_indexes(tree / ".hooklint_cache"))
    monkeypatch.setattr("hooklint.cache.code_fingerprint", lambda: "another version")
    monkeypatch.setattr("hooklint.runner.code_fingerprint", lambda: "another version")
    check("pkg")
    assert set(_entries(tree / ".hooklint_cache")) > before
    assert set(_run_indexes(tree / ".hooklint_cache")) > runs_before


def test_code_fingerprint_follows_the_sources():
    from hooklint import cache

    first = cache.code_fingerprint()
    import hooklint.rules.base as base_module

    source = base_module.__file__
    stat = os.stat(source)
    try:
        os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        cache.code_fingerprint.cache_clear()
        assert cache.code_fingerprint() != first
    finally:
        os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        cache.code_fingerprint.cache_clear()
    assert cache.code_fingerprint() == first


def test_unwritable_cache_dir_only_costs_speed(tree):
    write(tree, "blocker", "a file, not a directory")
    result = check("pkg", "--cache-dir", "blocker/cache", "--format", "concise")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "pkg/buggy.py:14:5: HL001" in result.stdout


def test_fix_run_uses_fresh_results(tree):
    check("pkg")  # warm the cache
    assert check("pkg", "--fix").exit_code == 1  # the syntax error remains
    assert "always_call=True" in (tree / "pkg/buggy.py").read_text()
    assert check("pkg/buggy.py").exit_code == 0


def test_cache_entries_written_atomically(tree, monkeypatch):
    import os

    calls = []
    real = os.replace
    monkeypatch.setattr("hooklint.cache.os.replace", lambda a, b: (calls.append((a, b)), real(a, b)))
    check("pkg")
    assert calls and all(str(b).endswith(".json") for _, b in calls)
    assert not list((tree / ".hooklint_cache").rglob("*.tmp"))


# -- the run index -------------------------------------------------------------------------
def test_corrupt_run_index_is_ignored_and_rewritten(tree):
    cold = check("pkg", "--format", "json")
    [run_index] = _run_indexes(tree / ".hooklint_cache")
    for garbage in ("{not json", '{"files": {"x": 1}}', '{"files": []}', "[]"):
        run_index.write_text(garbage)
        warm = check("pkg", "--format", "json")
        assert (warm.exit_code, warm.stdout) == (cold.exit_code, cold.stdout)
    assert set(json.loads(run_index.read_text())["files"]) == {str(p) for p in sorted((tree / "pkg").glob("*.py"))}


def test_run_index_notices_a_change_of_the_same_size(tree):
    assert "HL001" in check("pkg", "--format", "concise").stdout
    fixed = BUGGY.replace("register_forward_hook(", "register_forward_hoop(")
    assert len(fixed) == len(BUGGY)
    path = tree / "pkg/buggy.py"
    stat = path.stat()
    write(tree, "pkg/buggy.py", fixed)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert "HL001" not in check("pkg", "--format", "concise").stdout


def test_run_index_is_per_options_and_paths(tree):
    assert "HL001" in check("pkg", "--format", "concise").stdout
    assert "HL001" not in check("pkg", "--format", "concise", "--ignore", "HL001").stdout
    assert "HL001" not in check("pkg/clean.py", "--format", "concise").stdout
    assert len(_run_indexes(tree / ".hooklint_cache")) == 3


def test_warm_run_loads_no_rule_and_no_libcst(tree):
    """The point of the run index: an unchanged tree is answered from it alone."""
    probe = (
        "import sys\n"
        "from hooklint.cli import main\n"
        "try:\n"
        "    main(['check', 'pkg', '--format', 'concise'])\n"
        "except SystemExit as exit:\n"
        "    print('exit', exit.code)\n"
        "print('libcst' in sys.modules, any(m.startswith('hooklint.rules.hl') for m in sys.modules))\n"
    )
    cold = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tree)
    warm = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tree)
    assert cold.stdout.splitlines()[-1] == "True True", cold.stderr
    assert warm.stdout.splitlines()[-1] == "False False", warm.stderr
    assert "exit 1" in warm.stdout and "HL001" in warm.stdout
    assert cold.stdout == warm.stdout.replace("False False", "True True")
