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
    monkeypatch.setattr("ast.parse", fail)
    monkeypatch.setattr("hooklint.engine.parse.python_ast", fail)  # what the engine parses with


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
    assert any(str(b).endswith(".json") for _, b in calls)
    assert all(str(b).endswith((".json", "/.gitignore")) for _, b in calls)
    assert not list((tree / ".hooklint_cache").rglob("*.tmp"))


# -- the run index -------------------------------------------------------------------------
def test_corrupt_run_index_is_ignored_and_rewritten(tree):
    cold = check("pkg", "--format", "json")
    [run_index] = _run_indexes(tree / ".hooklint_cache")
    for garbage in ("{not json", '{"files": {"x": 1}}', '{"files": []}', "[]"):
        run_index.write_text(garbage)
        warm = check("pkg", "--format", "json")
        assert (warm.exit_code, warm.stdout) == (cold.exit_code, cold.stdout)
    assert set(json.loads(run_index.read_text())["files"]) == {
        str(p) for p in sorted((tree / "pkg").glob("*.py"))
    }


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


# -- everything that decides a file's result is in the key (issue 11, item 1) --------------
HL004_FUNCTION = """

def layer_output(model, layer, inputs):
    saved = []
    handle = layer.register_forward_hook(lambda m, i, o: saved.append(o))
    model(inputs)
    handle.remove()
    return saved[0]
"""
#: The same content in src/ and tests/, where HL004 is ignored: src/a.py has HL001 and
#: HL004, tests/a.py HL001 only.
SAME_CONTENT_EXPECTED = {
    "src": ["src/a.py:14:5: HL001", "src/a.py:19:14: HL004"],
    "tests": ["tests/a.py:14:5: HL001"],
}


@pytest.fixture
def twins(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "pyproject.toml", '[tool.hooklint]\nper-file-ignores = {"tests/*" = ["HL004"]}\n')
    for directory in ("src", "tests"):
        write(tmp_path, f"{directory}/a.py", BUGGY + HL004_FUNCTION)
    return tmp_path


def _found(*args):
    result = check(*args, "--format", "concise", "--quiet")
    assert "Traceback" not in result.output and result.exception is None
    return [line.split(" [")[0] for line in result.stdout.splitlines()]


@pytest.mark.parametrize("order", [("tests", "src"), ("src", "tests")])
def test_same_content_under_different_per_file_ignores(twins, order):
    for directory in order:  # each run fills the cache for the next
        assert _found(directory) == SAME_CONTENT_EXPECTED[directory]
        assert _found(directory, "--no-cache") == SAME_CONTENT_EXPECTED[directory]
    everything = SAME_CONTENT_EXPECTED["src"] + SAME_CONTENT_EXPECTED["tests"]
    assert _found(".") == _found(".", "--no-cache") == everything
    # Both files' entries, not one shared by the same content.
    assert len(_entries(twins / ".hooklint_cache")) == 2


def test_same_content_under_different_per_file_ignores_in_one_run(twins):
    everything = SAME_CONTENT_EXPECTED["src"] + SAME_CONTENT_EXPECTED["tests"]
    assert _found(".") == everything  # a fresh cache, filled by the first of the two
    for runs in _run_indexes(twins / ".hooklint_cache"):
        runs.unlink()
    assert _found(".") == everything  # answered from the content cache


def test_run_index_is_per_working_directory(tmp_path, monkeypatch):
    """The same absolute paths and config, from another working directory: the path
    as shown differs, and a per-file-ignores glob matches it."""
    write(tmp_path, "pyproject.toml", '[tool.hooklint]\nper-file-ignores = {"pkg/*" = ["HL001"]}\n')
    write(tmp_path, "x/pkg/buggy.py", BUGGY)
    target = str(tmp_path / "x/pkg")
    monkeypatch.chdir(tmp_path / "x")
    assert _found(target) == []  # shown as pkg/buggy.py: ignored
    monkeypatch.chdir(tmp_path)
    assert _found(target) == _found(target, "--no-cache") == ["x/pkg/buggy.py:14:5: HL001"]
    monkeypatch.chdir(tmp_path / "x")
    assert _found(target) == []


def test_code_fingerprint_names_the_python_and_libcst(monkeypatch):
    from hooklint import cache

    first = cache.code_fingerprint()
    try:
        monkeypatch.setattr("hooklint.cache.sys.version", "3.99.0 (another Python)")
        cache.code_fingerprint.cache_clear()
        assert cache.code_fingerprint() != first
        monkeypatch.undo()
        import libcst

        version_file = libcst.__file__  # its __init__.py
        stat = os.stat(version_file)
        os.utime(version_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        try:
            cache.code_fingerprint.cache_clear()
            assert cache.code_fingerprint() != first
        finally:
            os.utime(version_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    finally:
        cache.code_fingerprint.cache_clear()
    assert cache.code_fingerprint() == first


# -- entries of the wrong shape are misses (issue 11, item 10) -------------------------------
def _mutations(entry: dict) -> list:
    """Valid JSON, each of a shape no cache writes, derived from a real entry."""
    first = entry["violations"][0]

    def changed(**fields):
        return {"violations": [dict(first, **fields)] + entry["violations"][1:]}

    fix = first["fix"]
    return [
        [],
        "violations",
        None,
        {"violations": {}},
        {"violations": [None]},
        {"violations": ["HL001"]},
        changed(code=1),
        changed(message=None),
        changed(start={"line": "14", "column": 5}),
        changed(start={"line": True, "column": 5}),
        changed(start={"line": 0, "column": 5}),
        changed(start={"line": 14}),
        changed(end=[14, 5]),
        changed(fix="add always_call"),
        changed(fix=dict(fix, applicability="maybe")),
        changed(fix=dict(fix, edits={"content": ""})),
        changed(fix=dict(fix, edits=[dict(fix["edits"][0], content=5)])),
        changed(fix=dict(fix, edits=[dict(fix["edits"][0], start=None)])),
        changed(fix_withheld=3),
        changed(source_line=None),
    ]


def test_entries_of_the_wrong_shape_are_ignored_and_rewritten(tree):
    cold = check("pkg", "--format", "json")
    [entry] = [p for p in _entries(tree / ".hooklint_cache") if '"HL001"' in p.read_text()]
    good = json.loads(entry.read_text())
    assert good["violations"][0]["code"] == "HL001" and good["violations"][0]["fix"]
    for bad in _mutations(good) + ["[" * 100_000 + "]" * 100_000]:
        entry.write_text(bad if isinstance(bad, str) and bad.startswith("[") else json.dumps(bad))
        for runs in _run_indexes(tree / ".hooklint_cache"):
            runs.unlink()  # else the unchanged files never reach the content cache
        warm = check("pkg", "--format", "json")
        assert warm.exception is None and "Traceback" not in warm.output, bad
        assert (warm.exit_code, warm.stdout) == (cold.exit_code, cold.stdout), bad
        assert json.loads(entry.read_text()) == good, bad


def test_run_index_entries_of_the_wrong_shape_are_ignored_and_rewritten(tree):
    cold = check("pkg", "--format", "json")
    [run_index] = _run_indexes(tree / ".hooklint_cache")
    good = json.loads(run_index.read_text())
    buggy = str(tree / "pkg/buggy.py")
    mtime, size, violations = good["files"][buggy]
    entry = {"violations": violations}
    bad_files = [
        dict(good["files"], **{buggy: value}) for value in ([mtime, size], [mtime, size, None], "x", 5)
    ]
    bad_files += [
        dict(good["files"], **{buggy: [mtime, size, changed["violations"]]})
        for changed in _mutations(entry)[3:]
    ]
    for bad in [{"files": files} for files in bad_files] + [
        "[" * 100_000 + "]" * 100_000,
        '{"files": ' * 50_000,
    ]:
        run_index.write_text(bad if isinstance(bad, str) else json.dumps(bad))
        warm = check("pkg", "--format", "json")
        assert warm.exception is None and "Traceback" not in warm.output, bad
        assert (warm.exit_code, warm.stdout) == (cold.exit_code, cold.stdout), bad
        assert json.loads(run_index.read_text()) == good, bad


# -- the cache never writes through a planted link ------------------------------------------
def test_cache_entry_planted_as_a_symlink_or_fifo_is_a_miss_and_the_target_is_untouched(tree):
    cold = check("pkg", "--format", "json")
    victim = write(tree, "victim.txt", "not the cache's\n")
    entries = _entries(tree / ".hooklint_cache")
    for number, entry in enumerate(entries):
        entry.unlink()
        if number % 2:
            os.mkfifo(entry)  # reading it would block
        else:
            entry.symlink_to(victim)
    for runs in _run_indexes(tree / ".hooklint_cache"):
        runs.unlink()
    warm = check("pkg", "--format", "json")
    assert (warm.exit_code, warm.stdout) == (cold.exit_code, cold.stdout)
    assert victim.read_text() == "not the cache's\n"
    for entry in entries:  # replaced by real entries, the link itself and not its target
        assert entry.is_file() and not entry.is_symlink()
        json.loads(entry.read_text())["violations"]


@pytest.mark.parametrize("planted", [".hooklint_cache", ".hooklint_cache/runs"])
def test_cache_directory_planted_as_a_symlink_is_not_written_into(tree, planted):
    elsewhere = tree.parent / f"{tree.name}-elsewhere"
    elsewhere.mkdir()
    if planted != ".hooklint_cache":
        (tree / ".hooklint_cache").mkdir()
    (tree / planted).symlink_to(elsewhere, target_is_directory=True)
    cold = check("pkg", "--format", "concise")
    assert cold.exit_code == 1 and "pkg/buggy.py:14:5: HL001" in cold.stdout
    assert list(elsewhere.iterdir()) == []
    assert check("pkg", "--format", "concise").stdout == cold.stdout
