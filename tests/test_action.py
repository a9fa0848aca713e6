"""``action.yml``: the composite GitHub Action, read as the runner reads it, and its
check step run as written (with the runner's variables pointing at this venv)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _hooklint_cli import BUGGY, CLEAN, PROJECT_ROOT, write

yaml = pytest.importorskip("yaml")  # PyYAML comes with pre-commit, in the test extra

ACTION = yaml.safe_load((PROJECT_ROOT / "action.yml").read_text(encoding="utf-8"))


def _steps():
    return ACTION["runs"]["steps"]


def test_composite_action_sets_up_python_installs_itself_and_uploads_sarif():
    assert ACTION["runs"]["using"] == "composite"
    steps = _steps()
    uses = [s.get("uses", "") for s in steps]
    assert uses[0].startswith("actions/setup-python@")
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    install = next(s for s in steps if "pip install" in s.get("run", ""))
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}" and '"$ACTION_PATH"' in install["run"]
    check = next(s for s in steps if s.get("id") == "check")
    assert "--format sarif --output-file" in check["run"]
    for step in steps:
        if "run" in step:
            assert step["shell"] == "bash"
            assert "${{" not in step["run"], "inputs reach scripts through env, never pasted into them"
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    for name, spec in ACTION["inputs"].items():
        assert "description" in spec and "default" in spec, name


def _run_check_step(tmp_path: Path, repo: Path, inputs: dict) -> tuple[subprocess.CompletedProcess, dict]:
    step = next(s for s in _steps() if s.get("id") == "check")
    defaults = {name: spec["default"] for name, spec in ACTION["inputs"].items()}
    defaults.update(inputs)
    env = dict(os.environ)
    for key, value in step["env"].items():
        env[key] = re.sub(r"\$\{\{ inputs\.([\w-]+) \}\}", lambda m: defaults[m.group(1)], value)
    runner_temp = tmp_path / "runner-temp"
    link = runner_temp / "hooklint-venv" / "bin" / "hooklint"
    if not link.exists():
        link.parent.mkdir(parents=True)
        link.symlink_to(shutil.which("hooklint") or str(Path(sys.executable).with_name("hooklint")))
    output = tmp_path / "github-output"
    output.write_text("")
    env.update(RUNNER_TEMP=str(runner_temp), GITHUB_OUTPUT=str(output))
    env.pop("NO_COLOR", None)
    process = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=repo, env=env, capture_output=True, text=True, timeout=300
    )
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
    return process, outputs


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash, as the runner's step does")
def test_check_step_writes_valid_sarif_and_reports_the_exit_code(tmp_path):
    from test_reports import _validate_sarif

    repo = tmp_path / "repo"
    write(repo, "src/model.py", BUGGY)
    write(repo, "src/ok.py", CLEAN)
    process, outputs = _run_check_step(tmp_path, repo, {})
    assert process.returncode == 0, (
        process.stdout + process.stderr
    )  # findings fail a later step, after the upload
    assert outputs["exit-code"] == "1"
    log = json.loads((repo / "hooklint.sarif").read_text())
    _validate_sarif(log)
    (result,) = log["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/model.py"

    process, outputs = _run_check_step(
        tmp_path, repo, {"paths": "src/ok.py", "sarif-file": "out/clean.sarif", "args": "--select HL001"}
    )
    assert (
        process.returncode == 2 and outputs["exit-code"] == "2"
    )  # out/ does not exist: the step fails, no upload
    (repo / "out").mkdir()
    process, outputs = _run_check_step(
        tmp_path, repo, {"paths": "src/ok.py", "sarif-file": "out/clean.sarif", "args": "--select HL001"}
    )
    assert process.returncode == 0 and outputs["exit-code"] == "0"
    assert json.loads((repo / "out/clean.sarif").read_text())["runs"][0]["results"] == []
