"""File discovery through the CLI: .gitignore, default excludes, explicit files, order."""

from __future__ import annotations

import json

import pytest
from _hooklint_cli import BUGGY, check, write


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _reported(result) -> list[str]:
    return [item["filename"] for item in json.loads(result.stdout)]


def test_gitignore_is_respected(tree):
    write(tree, ".gitignore", "ignored/\n*_gen.py\n/rooted.py\n!keep_gen.py\n")
    for name in ["ignored/a.py", "sub/x_gen.py", "rooted.py", "sub/rooted.py", "keep_gen.py", "ok.py"]:
        write(tree, name, BUGGY)
    write(tree, "sub/.gitignore", "local.py\n")
    write(tree, "sub/local.py", BUGGY)
    result = check(".", "--no-cache", "--format", "json")
    assert _reported(result) == ["keep_gen.py", "ok.py", "sub/rooted.py"]


def test_gitignore_above_the_checked_directory_applies(tree, monkeypatch):
    write(tree, ".gitignore", "secret/\n")
    write(tree, "pkg/secret/a.py", BUGGY)
    write(tree, "pkg/b.py", BUGGY)
    monkeypatch.chdir(tree / "pkg")
    assert _reported(check(".", "--no-cache", "--format", "json")) == ["b.py"]


@pytest.mark.parametrize(
    "directory",
    [
        ".git",
        ".venv",
        "venv",
        "build",
        "dist",
        "__pycache__",
        "site-packages",
        ".tox",
        "node_modules",
        "x.egg-info",
        ".hooklint_cache",
    ],
)
def test_default_excludes(tree, directory):
    write(tree, f"{directory}/a.py", BUGGY)
    write(tree, "ok.py", BUGGY)
    assert _reported(check(".", "--no-cache", "--format", "json")) == ["ok.py"]


def test_explicit_file_is_always_checked(tree):
    write(tree, ".gitignore", "build/\nignored.py\n")
    write(tree, "build/a.py", BUGGY)
    write(tree, "ignored.py", BUGGY)
    write(tree, "script", BUGGY)  # no .py suffix, but named
    result = check("build/a.py", "ignored.py", "script", "--no-cache", "--format", "json")
    assert _reported(result) == ["build/a.py", "ignored.py", "script"]


def test_pyi_files_are_checked_and_other_suffixes_are_not(tree):
    broken = BUGGY + "def f(:\n"  # a hook token: the walk checks it
    write(tree, "a.pyi", broken)
    write(tree, "b.txt", broken)
    write(tree, "c.pyc", broken)
    result = check(".", "--no-cache", "--format", "json")
    assert _reported(result) == ["a.pyi"]
    assert [v["code"] for v in json.loads(result.stdout)] == ["HL000"]
    for _ in range(2):  # the stub's result is cached like a module's, and read back the same
        again = check(".", "--cache-dir", str(tree / "cache"), "--format", "json")
        assert json.loads(again.stdout) == json.loads(result.stdout)
    assert list((tree / "cache").rglob("*.json"))


def test_a_stub_is_only_compiled(tree):
    # A .pyi declares and never runs: the hook code in it registers nothing.
    write(tree, "a.pyi", BUGGY)
    write(tree, "a.py", BUGGY)
    assert _reported(check(".", "--no-cache", "--format", "json")) == ["a.py"]
    assert _reported(check("a.pyi", "--no-cache", "--format", "json")) == []
    assert _reported(check("-", "--stdin-filename", "a.pyi", "--format", "json", input=BUGGY)) == []
    assert _reported(check("-", "--stdin-filename", "a.py", "--format", "json", input=BUGGY)) == ["a.py"]


def test_order_is_deterministic_path_line_column(tree):
    names = ["z.py", "a/b.py", "a.py", "a/a.py", "m/z/q.py", "B.py"]
    for name in names:
        write(
            tree,
            name,
            BUGGY
            + "\n\ndef again(module):\n    module.register_forward_pre_hook(_enable)\n    module.register_forward_hook(_disable)\n",
        )
    first = json.loads(check(".", "--no-cache", "--format", "json").stdout)
    second = json.loads(check(*reversed(names), "--no-cache", "--format", "json").stdout)
    assert first == second
    keys = [(d["filename"], d["location"]["row"], d["location"]["column"]) for d in first]
    assert keys == sorted(keys) and len({k[0] for k in keys}) == len(names)
    assert len(keys) == 2 * len(names)


def test_same_file_twice_is_reported_once(tree):
    write(tree, "a.py", BUGGY)
    assert len(_reported(check("a.py", ".", "a.py", "--no-cache", "--format", "json"))) == 1
