"""The console script's exit (``hooklint.entry.script``): it skips the interpreter's
teardown, so it must hand back the exit code ``main`` gave and everything the run
printed, however much, wherever stdout goes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from _hooklint_cli import BUGGY, CLEAN, PROJECT_ROOT, run_subprocess, write


def _run(args, cwd, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    """``python -m hooklint ARGS`` (:func:`run_subprocess`), its output as text."""
    done = run_subprocess(args, cwd, stdout=stdout)
    done.stdout = (done.stdout or b"").decode()
    done.stderr = done.stderr.decode()
    return done


def test_python_m_hooklint_and_the_console_script_run_script():
    import tomllib

    scripts = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["hooklint"] == "hooklint.entry:script"
    assert "script()" in (PROJECT_ROOT / "hooklint" / "__main__.py").read_text()


def test_every_line_of_a_long_report_reaches_a_pipe_and_the_exit_code_is_kept(tmp_path):
    for i in range(400):  # 400 findings, about 60 kB of report: more than a pipe holds
        write(tmp_path, f"pkg/m{i:03d}.py", BUGGY)
    done = _run(["check", "--no-cache", "--format", "concise", "pkg"], tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert sum(": HL001 " in line for line in lines) == 400
    assert lines[-2:] == [
        "Found 400 errors.",
        "[*] 400 fixable with the `--fix` option.",
    ]  # the summary, last


def test_clean_and_failing_runs_keep_their_exit_codes(tmp_path):
    write(tmp_path, "clean.py", CLEAN)
    assert _run(["check", "--no-cache", "clean.py"], tmp_path).returncode == 0
    missing = _run(["check", "--no-cache", "nowhere.py"], tmp_path)
    assert missing.returncode == 2
    assert "hooklint: nowhere.py: no such file or directory" in missing.stderr
    assert _run(["check", "--select", "HL999", "clean.py"], tmp_path).returncode == 2


def test_a_report_that_cannot_be_written_is_exit_2_with_one_line(tmp_path):
    if not os.path.exists("/dev/full"):
        return  # the device that refuses every write exists on Linux only
    write(tmp_path, "bad.py", BUGGY)
    with open("/dev/full", "w") as full:
        done = _run(["check", "--no-cache", "bad.py"], tmp_path, stdout=full)
    assert done.returncode == 2
    assert "cannot write the report to stdout" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_text_exit_is_printed_and_is_exit_1(tmp_path):
    program = textwrap.dedent(
        """
        import hooklint.entry as entry

        def main():
            raise SystemExit("stopped: a reason")

        entry.main = main
        entry.script()
        """
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == "stopped: a reason\n"
