"""``.pre-commit-hooks.yaml`` through ``pre-commit try-repo`` (needs the network to
build the hook's virtualenv, hence slow)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from _hooklint_cli import BUGGY, FIXED, PROJECT_ROOT

pytestmark = pytest.mark.slow


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
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT_ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")
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
        assert hook["language"] == "python" and hook["types_or"] == ["python", "pyi", "jupyter"] and "types" not in hook
        assert hook["require_serial"] is True  # one run at a time: the run index in .hooklint_cache is rewritten whole


def test_hook_entries_run_as_written(tmp_path, monkeypatch):
    # Each hook's entry, with the files pre-commit would pass, behaves as the hook promises.
    import shlex
    import yaml

    from _hooklint_cli import hooklint, write

    monkeypatch.chdir(tmp_path)
    write(tmp_path, "pyproject.toml", '[tool.hooklint]\nextend-exclude = ["vendored"]\n')
    write(tmp_path, "model.py", BUGGY)
    write(tmp_path, "stub.pyi", BUGGY)
    write(tmp_path, "vendored/copy.py", BUGGY)
    hooks = {h["id"]: h for h in yaml.safe_load((PROJECT_ROOT / ".pre-commit-hooks.yaml").read_text())}
    args = shlex.split(hooks["hooklint"]["entry"])[1:]
    result = hooklint(*args, "--no-cache", "--format", "concise", "model.py", "stub.pyi", "vendored/copy.py")
    assert result.exit_code == 1
    flagged = {line.split(":")[0] for line in result.stdout.splitlines() if ": HL" in line}
    assert flagged == {"model.py", "stub.pyi"}  # the excluded file is skipped although named


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
            cwd=repo, env=env, capture_output=True, text=True, timeout=900,
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
