"""``.pre-commit-hooks.yaml``: the manifest, its entries run as pre-commit runs them
(through the console script), and ``pre-commit try-repo`` (needs the network to build
the hook's virtualenv, hence slow)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _hooklint_cli import BUGGY, FIXED, PROJECT_ROOT


def _pre_commit() -> list[str]:
    executable = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))
    if not Path(executable).exists():
        pytest.skip("pre-commit is not installed")
    return [executable]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _snapshot_of_project(target: Path) -> Path:
    """The project's working tree as is (tracked and untracked, not ignored files) as a
    one-commit repository: ``try-repo`` on the project itself would only see tracked
    files (it snapshots HEAD plus ``git add -u``), so a not yet committed file would be
    missing."""
    listing = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=PROJECT_ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listing):
        source = PROJECT_ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    _git(target, "init", "-q")
    _git(target, "add", "-A")
    _git(target, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "snapshot")
    return target


def test_hooks_manifest():
    import yaml  # pre-commit depends on PyYAML

    hooks = {h["id"]: h for h in yaml.safe_load((PROJECT_ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"hooklint", "hooklint-fix"}
    assert hooks["hooklint"]["entry"] == "hooklint check --force-exclude"
    assert hooks["hooklint-fix"]["entry"] == "hooklint check --fix --force-exclude"
    for hook in hooks.values():
        assert (
            hook["language"] == "python"
            and hook["types_or"] == ["python", "pyi", "jupyter"]
            and "types" not in hook
        )
        assert (
            hook["require_serial"] is True
        )  # one run at a time: the run index in .hooklint_cache is rewritten whole


def test_hook_entries_run_as_written(tmp_path, monkeypatch):
    # Each hook's entry, with the files pre-commit would pass, behaves as the hook promises.
    import shlex

    import yaml
    from _hooklint_cli import hooklint, write

    monkeypatch.chdir(tmp_path)
    write(tmp_path, "pyproject.toml", '[tool.hooklint]\nextend-exclude = ["vendored"]\n')
    write(tmp_path, "model.py", BUGGY)
    write(tmp_path, "stub.pyi", "def f(:\n")  # a stub is compiled (HL000), not linted
    write(tmp_path, "vendored/copy.py", BUGGY)
    hooks = {h["id"]: h for h in yaml.safe_load((PROJECT_ROOT / ".pre-commit-hooks.yaml").read_text())}
    args = shlex.split(hooks["hooklint"]["entry"])[1:]
    result = hooklint(*args, "--no-cache", "--format", "concise", "model.py", "stub.pyi", "vendored/copy.py")
    assert result.exit_code == 1
    flagged = {line.split(":")[0] for line in result.stdout.splitlines() if ": HL" in line}
    assert flagged == {"model.py", "stub.pyi"}  # the excluded file is skipped although named


def test_the_console_script_is_the_pre_commit_entry():
    # pre-commit runs the `hooklint` script: its target settles clean runs without click
    # (tests/test_lazy_imports.py compares it with the CLI) and hands the rest over.
    import tomllib

    scripts = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"hooklint": "hooklint.entry:script"}


def test_hook_entry_through_the_console_script(tmp_path):
    # The hook's entry as pre-commit runs it (`python -m hooklint` is the same entry as
    # the script): staged files without a token pass, a buggy one fails, an excluded one
    # is skipped, and the run index is kept in the project's .hooklint_cache.
    import shlex

    import yaml
    from _hooklint_cli import write

    write(tmp_path, "pyproject.toml", '[tool.hooklint]\nextend-exclude = ["vendored"]\n')
    write(tmp_path, "clean.py", "import os\n\n\ndef here():\n    return os.getcwd()\n")
    write(tmp_path, "vendored/copy.py", BUGGY)
    write(tmp_path, "model.py", BUGGY)
    hooks = {h["id"]: h for h in yaml.safe_load((PROJECT_ROOT / ".pre-commit-hooks.yaml").read_text())}
    entry = [sys.executable, "-m", "hooklint", *shlex.split(hooks["hooklint"]["entry"])[1:]]

    def run(*files):
        return subprocess.run(
            [*entry, *files],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**os.environ, "NO_COLOR": "1"},
        )

    passing = run("clean.py", "vendored/copy.py")
    assert (passing.returncode, passing.stdout, passing.stderr) == (0, "All checks passed!\n", "")
    assert list((tmp_path / ".hooklint_cache" / "runs").iterdir())
    failing = run("clean.py", "model.py", "vendored/copy.py")
    assert (
        failing.returncode == 1
        and "model.py:14:5: HL001" in failing.stdout
        and "vendored" not in failing.stdout
    )


@pytest.mark.slow
def test_try_repo_fails_then_fixes_then_passes(tmp_path):
    pre_commit = _pre_commit()
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "user-repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    (repo / "model.py").write_text(BUGGY)
    _git(repo, "add", "model.py")
    _git(repo, "commit", "-q", "-m", "buggy")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), NO_COLOR="1")

    hook_repo = _snapshot_of_project(tmp_path / "hooklint-repo")

    def try_repo(hook: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*pre_commit, "try-repo", str(hook_repo), hook, "--all-files", "--verbose"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )

    first = try_repo("hooklint")
    assert "is not a file" not in first.stdout, first.stdout
    if first.returncode != 0 and "HL001" not in first.stdout:
        if "Could not" in first.stdout + first.stderr or "network" in (first.stdout + first.stderr).lower():
            pytest.skip("pre-commit could not build the hook environment (offline?)")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "HL001" in first.stdout
    assert (repo / "model.py").read_text() == BUGGY

    fixing = try_repo("hooklint-fix")
    assert fixing.returncode == 1, fixing.stdout + fixing.stderr  # files were modified
    assert (repo / "model.py").read_text() == FIXED

    after = try_repo("hooklint")
    assert after.returncode == 0, after.stdout + after.stderr
