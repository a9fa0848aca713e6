"""Hostile and broken inputs to ``hooklint check`` (issue 11, items 7-10, 12, 13): each
gets one line on stderr and a documented exit code, never a signal death, a hang or a
traceback, and the other files are still checked."""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from _hooklint_cli import BUGGY, CLEAN, PROJECT_ROOT, check, no_traceback, write

import hooklint.engine.check as engine_check
import hooklint.engine.parallel as parallel
from hooklint.engine import MAX_NESTING, Settings, TooDeeplyNested, check_nesting, check_paths, worker_count

#: ``x = a and a and ...``: one ``ast.BoolOp`` for CPython, 9,999 nested nodes for
#: libcst, whose native parser overflowed the C stack on it (exit 139, no output).
TEN_THOUSAND_TERMS = "m.register_forward_hook(g)\nx = " + " and ".join(["a"] * 10_000) + "\n"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("HOOKLINT_DEBUG", raising=False)
    return tmp_path


def _errors(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("hooklint: ")]


def _hooklint(args, cwd, **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("HOOKLINT_DEBUG", None)
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    return subprocess.run([sys.executable, "-m", "hooklint", *args], cwd=cwd, env=env, timeout=120, **kwargs)


# -- item 7: nesting libcst cannot parse; a worker that dies ------------------------------
def test_ten_thousand_term_boolean_chain_is_one_line_not_a_segfault(tree):
    write(tree, "deep.py", TEN_THOUSAND_TERMS)
    write(tree, "good.py", BUGGY)
    done = _hooklint(["check", "--no-cache", "--format", "concise", "deep.py", "good.py"], tree)
    assert done.returncode == 2, done  # not -11
    assert _errors(done.stderr.decode()) == [
        f"hooklint: deep.py: too deeply nested for the analyzer (over {MAX_NESTING} levels, line 2); not analysed"
    ]
    assert "good.py:14:5: HL001" in done.stdout.decode()


def test_ten_thousand_term_chain_in_a_parallel_run_keeps_every_other_result(tree):
    write(tree, "pkg/deep.py", TEN_THOUSAND_TERMS)
    for i in range(10):
        write(tree, f"pkg/m{i}.py", BUGGY if i % 2 else CLEAN)
    done = _hooklint(["check", "--no-cache", "--format", "concise", "--jobs", "2", "pkg"], tree)
    assert done.returncode == 2, done
    assert len(_errors(done.stderr.decode())) == 1
    assert done.stdout.decode().count("HL001") == 5
    assert b"Traceback" not in done.stderr


def test_nesting_guard_counts_a_boolean_chain_as_libcst_nests_it():
    def guard(code: str) -> None:
        check_nesting(ast.parse(code), code)

    guard("x = " + " and ".join(["a"] * (MAX_NESTING - 10)) + "\n")
    guard("x = " + " < ".join(["a"] * 5000) + "\n")  # one flat Comparison in libcst too
    with pytest.raises(TooDeeplyNested) as raised:
        guard("def f():\n    if a:\n        y = " + " or ".join(["b"] * (MAX_NESTING + 10)) + "\n")
    assert raised.value.line == 3
    chain = " and ".join(["a"] * (MAX_NESTING + 10))
    for where in (
        f"if {chain}:\n    pass\n",
        f"def f(x={chain}):\n    pass\n",
        f"@d({chain})\nclass C:\n    pass\n",
        f"for x in y:\n    try:\n        pass\n    except E:\n        z = [{chain}]\n",
    ):
        with pytest.raises(TooDeeplyNested):
            guard(where)
    # Nested chains add up: 4 chains of 300 inside each other (spread over lines).
    chain = "a"
    for _ in range(4):
        chain = "(" + " and\n".join(["a"] * 300) + " and " + chain + ")"
    with pytest.raises(TooDeeplyNested):
        guard("x = " + chain + "\n")


def _crash_on(name: str, how: str):
    real = parallel.check_path

    def check_path(path, settings, explicit=False):
        if os.path.basename(path) == name:
            if how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer does
            os._exit(3)
        return real(path, settings, explicit)

    return check_path


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the test plants the crash through fork")
@pytest.mark.parametrize("how, why", [("kill", "killed by SIGKILL"), ("exit", "exited with status 3")])
def test_a_worker_that_dies_costs_one_file_and_the_rest_of_its_chunk_is_rerun(tree, monkeypatch, how, why):
    paths = []
    for i in range(200):
        paths.append(write(tree, f"m{i:03d}.py", BUGGY if i % 10 == 1 else f"x = {i}\n"))
    settings = Settings(rule_codes=("HL000", "HL001"))
    expected = check_paths(paths, settings, 1)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(parallel, "check_path", _crash_on("m060.py", how))
    # 200 files, 2 workers: chunks of 3, so m060.py starts a chunk ([60, 61, 62]) and
    # m061.py (findings) is in the rest of it.
    results = check_paths(paths, settings, 2)
    assert [r.path for r in results] == [r.path for r in expected]
    assert results[60].error == f"the analyzer crashed on this file (worker process {why}); not checked"
    for position, (got, want) in enumerate(zip(results, expected)):
        if position != 60:
            assert (got.error, got.violations) == (want.error, want.violations), got.path
    assert len(results[61].violations) == 1


def _crash_once_on(name: str, marker: Path):
    """Like :func:`_crash_on` with "kill", only the first time (``marker`` remembers
    it across the workers): a death that does not come again, as the OOM killer's."""
    real = parallel.check_path

    def check_path(path, settings, explicit=False):
        if os.path.basename(path) == name and not marker.exists():
            marker.write_text("killed")
            os.kill(os.getpid(), signal.SIGKILL)
        return real(path, settings, explicit)

    return check_path


def _batched_run(tree, monkeypatch, crash) -> tuple[list, list]:
    """Forty files (every fourth with a finding) checked alone, then by two workers
    that each take twenty and answer only at the end of them, ``crash`` planted:
    (the parallel results, the serial ones)."""
    paths = [write(tree, f"m{i:02d}.py", BUGGY if i % 4 == 1 else f"x = {i}\n") for i in range(40)]
    settings = Settings(rule_codes=("HL000", "HL001"))
    expected = check_paths(paths, settings, 1)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(parallel, "ANSWER_INTERVAL", 3600.0)
    monkeypatch.setattr(parallel, "_chunks", lambda tasks, jobs: [tasks[:20], tasks[20:]])
    monkeypatch.setattr(parallel, "check_path", crash)
    return check_paths(paths, settings, 2), expected


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the test plants the crash through fork")
def test_a_worker_that_dies_inside_its_answered_batch_blames_only_the_file_it_died_on(tree, monkeypatch):
    # The worker answers for its files only at the end of its chunk: when it dies on
    # m21.py, the files before it in the chunk are unanswered too, and checked again.
    results, expected = _batched_run(tree, monkeypatch, _crash_on("m21.py", "kill"))
    assert (
        results[21].error
        == "the analyzer crashed on this file (worker process killed by SIGKILL); not checked"
    )
    assert [(r.path, r.error, r.violations) for i, r in enumerate(results) if i != 21] == [
        (r.path, r.error, r.violations) for i, r in enumerate(expected) if i != 21
    ]
    assert sum(len(r.violations) for r in results) == 9  # m21.py's finding is the one lost


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the test plants the crash through fork")
def test_a_death_that_does_not_come_again_blames_no_file(tree, monkeypatch):
    results, expected = _batched_run(tree, monkeypatch, _crash_once_on("m25.py", tree / "killed-once"))
    assert (tree / "killed-once").exists()  # the worker did die
    assert [(r.path, r.error, r.violations) for r in results] == [
        (r.path, r.error, r.violations) for r in expected
    ]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the test plants the crash through fork")
def test_a_crashed_worker_is_exit_2_with_one_line_and_the_other_findings(tree, monkeypatch):
    for i in range(20):
        write(tree, f"pkg/m{i:02d}.py", BUGGY)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(parallel, "check_path", _crash_on("m07.py", "kill"))
    result = check("pkg", "--no-cache", "--jobs", "2", "--format", "concise")
    no_traceback(result)
    assert result.exit_code == 2
    assert _errors(result.stderr) == [
        "hooklint: pkg/m07.py: the analyzer crashed on this file (worker process killed by SIGKILL); not checked"
    ]
    assert result.stdout.count("HL001") == 19


# -- item 8: size --------------------------------------------------------------------------
def test_file_over_max_file_size_is_skipped_with_a_line_naming_the_option(tree):
    write(tree, "pyproject.toml", "[tool.hooklint]\nmax-file-size = 1000\n")
    write(tree, "big.py", BUGGY + "#" * 1000 + "\n")
    write(tree, "small.py", BUGGY)
    result = check(".", "--no-cache", "--format", "concise")
    no_traceback(result)
    size = (tree / "big.py").stat().st_size
    assert _errors(result.stderr) == [
        f"hooklint: big.py: too large to check ({size} bytes, over `max-file-size` = 1000); skipped"
    ]
    assert result.stdout.startswith("small.py:14:5: HL001")
    assert result.exit_code == 2
    # The command line overrides the configuration.
    assert check(".", "--no-cache", "--max-file-size", str(size)).exit_code == 1
    assert _errors(check(".", "--no-cache", "--max-file-size", str(size)).stderr) == []


def test_default_max_file_size_is_4_mib(tree):
    write(tree, "big.py", "register_forward_hook\n" + "x = 1\n" * (4 * 1024 * 1024 // 6 + 1))
    result = check("big.py", "--no-cache")
    assert result.exit_code == 2
    assert "over `max-file-size` = 4194304" in result.stderr


def test_max_file_size_over_stdin(tree):
    result = check("-", "--max-file-size", "50", input=BUGGY)
    assert result.exit_code == 2
    assert _errors(result.stderr) == [
        "hooklint: -: too large to check (over `max-file-size` = 50 bytes); skipped"
    ]


@pytest.mark.parametrize("value", ['"4MB"', "0", "-1", "true", "1.5"])
def test_bad_max_file_size_in_config_is_one_line(tree, value):
    write(tree, "pyproject.toml", f"[tool.hooklint]\nmax-file-size = {value}\n")
    write(tree, "a.py", CLEAN)
    result = check("a.py", "--no-cache")
    no_traceback(result)
    assert result.exit_code == 2
    assert "[tool.hooklint] max-file-size: expected a positive number of bytes" in result.stderr


# -- item 9: only regular files; workers die with the run; --jobs is capped ---------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_and_device_named_explicitly_do_not_block(tree):
    os.mkfifo(tree / "x.py")
    write(tree, "good.py", BUGGY)
    devices = ["/dev/zero"] if os.path.exists("/dev/zero") else []
    done = _hooklint(["check", "--no-cache", "--format", "concise", "x.py", *devices, "good.py"], tree)
    assert done.returncode == 2
    errors = _errors(done.stderr.decode())
    assert "hooklint: x.py: not a regular file (a FIFO); only regular files are read" in errors
    if devices:
        assert "hooklint: /dev/zero: not a regular file (a device); only regular files are read" in errors
    assert len(errors) == 1 + len(devices)
    assert "good.py:14:5: HL001" in done.stdout.decode()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_in_a_walked_directory_is_not_a_python_file(tree):
    os.mkfifo(tree / "pipe.py")
    write(tree, "good.py", BUGGY)
    done = _hooklint(["check", "--no-cache", "--format", "concise", "."], tree)
    assert done.returncode == 1, done
    assert done.stderr.decode().count("hooklint: ") == 0


def test_jobs_is_capped_at_files_and_cpus(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert worker_count(1000, 10_000) == 4
    assert worker_count(1000, 3) == 3
    assert worker_count(2, 10_000) == 2
    assert worker_count(1, 0) == 1


def test_jobs_1000_starts_no_more_workers_than_cpus(tree, monkeypatch):
    for i in range(12):
        write(tree, f"m{i}.py", BUGGY)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    sizes = []
    real = parallel._Pool.__init__

    def recording(self, size, settings):
        sizes.append(size)
        real(self, size, settings)

    monkeypatch.setattr(parallel._Pool, "__init__", recording)
    result = check(".", "--no-cache", "--jobs", "1000", "--format", "concise")
    assert result.exit_code == 1
    assert result.stdout.count("HL001") == 12
    assert sizes == [2]


#: Runs hooklint on DIR with a check that blocks on ``slow.py`` (after writing the
#: worker's pid next to it), as a worker stuck reading would.
_BLOCKING_RUN = textwrap.dedent(
    """\
    import os, sys, time
    import hooklint.engine.parallel as parallel
    from hooklint.cli import main

    real = parallel.check_path
    def check_path(path, settings, explicit=False):
        if os.path.basename(path) == "slow.py":
            with open(os.path.join(os.path.dirname(path), "pid-%d" % os.getpid()), "w"):
                pass
            time.sleep(600)
        return real(path, settings, explicit)
    parallel.check_path = check_path
    os.cpu_count = lambda: 2
    main(["check", "--no-cache", "--jobs", "2", sys.argv[1]])
    """
)


def _start_blocked_run(tree: Path):
    for i in range(12):
        write(tree, f"pkg/m{i:02d}.py", BUGGY)
    write(tree, "pkg/slow.py", BUGGY)
    script = write(tree, "run.py", _BLOCKING_RUN)
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
    process = subprocess.Popen(
        [sys.executable, str(script), "pkg"],
        cwd=tree,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not list((tree / "pkg").glob("pid-*")):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the worker never reached slow.py"
        time.sleep(0.05)
    worker = int(next((tree / "pkg").glob("pid-*")).name.split("-")[1])
    return process, worker


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the test plants the hang through fork")
@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_to_the_parent_stops_blocked_workers(tree, signum, code):
    process, worker = _start_blocked_run(tree)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == code
    assert b"Traceback" not in stderr
    if signum == signal.SIGINT:
        assert stderr.decode().strip().endswith("hooklint: interrupted")
    assert _gone(worker), "a worker outlived its parent"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_workers_die_with_a_killed_parent(tree):
    process, worker = _start_blocked_run(tree)
    process.kill()  # no handler runs: only the kernel can stop the workers now
    process.communicate(timeout=30)
    assert _gone(worker), "a worker outlived its parent"


# -- item 10: tracebacks -------------------------------------------------------------------
@pytest.mark.parametrize(
    "source, message",
    [
        (
            TEN_THOUSAND_TERMS,
            f"too deeply nested for the analyzer (over {MAX_NESTING} levels, line 2); not analysed",
        ),
        # Within the guard, but deeper than the analysis (in Python) can recurse.
        (
            "m.register_forward_hook(g)\nx = " + " and ".join(["a"] * 900) + "\n",
            "too deeply nested to analyse",
        ),
    ],
)
def test_deeply_nested_stdin_is_one_line(tree, source, message):
    result = check("-", input=source)
    no_traceback(result)
    assert result.exit_code == 2
    assert _errors(result.stderr) == [f"hooklint: -: {message}"]


def test_deeply_nested_stdin_with_fix_echoes_the_source(tree):
    result = check("-", "--fix", input=TEN_THOUSAND_TERMS)
    assert result.exit_code == 2
    assert result.stdout == TEN_THOUSAND_TERMS


def test_file_name_too_long_is_one_line_and_the_rest_is_checked(tree):
    write(tree, "good.py", BUGGY)
    name = "a" * 300 + ".py"
    result = check(name, "good.py", "--no-cache", "--format", "concise")
    no_traceback(result)
    assert result.exit_code == 2
    assert _errors(result.stderr) == [f"hooklint: {name}: cannot read: File name too long"]
    assert result.stdout.startswith("good.py:14:5: HL001")


def _refuse_directory(monkeypatch, name: str) -> None:
    real = os.scandir

    def scandir(path="."):
        if os.path.basename(os.fspath(path)) == name:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


def test_unreadable_subdirectory_is_reported_not_skipped(tree, monkeypatch):
    write(tree, "pkg/good.py", CLEAN)
    write(tree, "pkg/secret/hidden.py", BUGGY)
    _refuse_directory(monkeypatch, "secret")
    result = check(".", "--no-cache", "--format", "concise")
    no_traceback(result)
    assert result.exit_code == 2
    assert _errors(result.stderr) == ["hooklint: pkg/secret: cannot read directory: Permission denied"]
    assert "All checks passed!" not in result.output


def _refuse_below(monkeypatch, name: str) -> None:
    """As a directory without search permission does: nothing below it can be stat-ed."""
    real = os.stat

    def stat(path, *args, **kwargs):
        if name in Path(os.fspath(path)).parts[:-1]:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)


def test_file_under_an_unreadable_directory_is_one_line(tree, monkeypatch):
    write(tree, "locked/inner.py", BUGGY)
    write(tree, "good.py", BUGGY)
    _refuse_below(monkeypatch, "locked")
    result = check("locked/inner.py", "good.py", "--no-cache", "--format", "concise")
    no_traceback(result)
    assert result.exit_code == 2
    assert _errors(result.stderr) == ["hooklint: locked/inner.py: cannot read: Permission denied"]
    assert result.stdout.startswith("good.py:14:5: HL001")


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root reads any file; the monkeypatched tests above cover it",
)
def test_real_unreadable_directories(tree):
    write(tree, "pkg/secret/hidden.py", BUGGY)
    write(tree, "locked/inner.py", BUGGY)
    write(tree, "good.py", BUGGY)
    os.chmod(tree / "pkg/secret", 0)
    os.chmod(tree / "locked", 0)
    try:
        walked = _hooklint(["check", "--no-cache", "pkg", "good.py"], tree)
        named = _hooklint(["check", "--no-cache", "locked/inner.py", "good.py"], tree)
    finally:
        os.chmod(tree / "pkg/secret", 0o755)
        os.chmod(tree / "locked", 0o755)
    assert walked.returncode == named.returncode == 2
    assert _errors(walked.stderr.decode()) == [
        "hooklint: pkg/secret: cannot read directory: Permission denied"
    ]
    assert _errors(named.stderr.decode()) == ["hooklint: locked/inner.py: cannot read: Permission denied"]


def test_unreadable_file_named_explicitly_is_one_line_and_the_rest_is_checked(tree, monkeypatch):
    write(tree, "secret.py", BUGGY)
    write(tree, "good.py", BUGGY)
    real = os.open

    def refusing(path, *args, **kwargs):
        if os.path.basename(os.fspath(path)) == "secret.py":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing)
    result = check("secret.py", "good.py", "--no-cache", "--format", "concise")
    no_traceback(result)
    assert result.exit_code == 2
    assert _errors(result.stderr) == ["hooklint: secret.py: cannot read: Permission denied"]
    assert result.stdout.startswith("good.py:14:5: HL001")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("fmt", ["full", "json"])
def test_stdout_to_dev_full_is_one_line_and_exit_2(tree, fmt):
    write(tree, "good.py", BUGGY)
    with open("/dev/full", "w") as full:
        done = _hooklint(["check", "--no-cache", "--format", fmt, "good.py"], tree, stdout=full)
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        "hooklint: error: cannot write the report to stdout: No space left on device"
    ]


@pytest.mark.skipif(os.name != "posix", reason="closes file descriptor 0")
def test_closed_stdin_is_one_line(tree):
    done = _hooklint(["check", "-"], tree, stdin=None, preexec_fn=lambda: os.close(0))
    assert done.returncode == 2
    assert _errors(done.stderr.decode()) == [
        "hooklint: -: cannot read standard input: standard input is closed"
    ]


# -- item 12: exit codes -------------------------------------------------------------------
def test_internal_error_is_exit_2_with_one_line(tree, monkeypatch):
    import hooklint.runner

    write(tree, "good.py", BUGGY)

    def broken(request):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(hooklint.runner, "run_check", broken)
    result = check("good.py", "--no-cache")
    assert result.exit_code == 2  # never 1: that means findings
    assert result.stderr.splitlines() == [
        "hooklint: error: internal error: ZeroDivisionError: division by zero (set HOOKLINT_DEBUG=1 for the traceback)"
    ]
    debug = check("good.py", "--no-cache", env={"HOOKLINT_DEBUG": "1"})
    assert debug.exit_code == 2
    assert (
        debug.stderr.splitlines()[0] == "hooklint: error: internal error: ZeroDivisionError: division by zero"
    )
    assert "Traceback (most recent call last):" in debug.stderr


def test_interrupt_is_exit_130(tree, monkeypatch):
    import hooklint.runner

    def interrupted(request):
        raise KeyboardInterrupt

    monkeypatch.setattr(hooklint.runner, "run_check", interrupted)
    result = check(".", "--no-cache")
    assert result.exit_code == 130
    assert result.stderr.strip().splitlines() == ["hooklint: interrupted"]


def test_usage_error_is_still_exit_2_and_help_exit_0(tree):
    assert check("--no-such-option").exit_code == 2
    assert check("--help").exit_code == 0


# -- item 13: a file named on the command line is always compiled -------------------------
def test_broken_file_named_explicitly_is_hl000_even_without_hook_tokens(tree):
    write(tree, "broken.py", "def f(:\n    return 1\n")
    result = check("broken.py", "--no-cache", "--format", "concise")
    no_traceback(result)
    assert result.exit_code == 1
    assert result.stdout.startswith("broken.py:1:7: HL000 syntax error:")
    # Discovered in a directory walk, the same file is still skipped unparsed.
    walked = check(".", "--no-cache")
    assert walked.exit_code == 0
    assert "All checks passed!" in walked.output


def test_explicit_file_without_tokens_is_compiled_not_parsed_by_libcst(tree, monkeypatch):
    write(tree, "broken.py", "def f(:\n")
    write(tree, "fine.py", "x = 1\n")
    import libcst

    monkeypatch.setattr(libcst, "parse_module", lambda *a, **k: pytest.fail("parsed by libcst"))
    result = check("broken.py", "fine.py", "--no-cache", "--format", "concise")
    no_traceback(result)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0].startswith("broken.py:1:7: HL000 syntax error:")
    assert "fine.py" not in result.stdout


def test_broken_stdin_without_hook_tokens_is_hl000(tree):
    result = check("-", "--stdin-filename", "broken.py", input="def f(:\n")
    assert result.exit_code == 1
    assert result.stdout.startswith("broken.py:1:7: HL000 syntax error:")
    fixed = check("-", "--fix", input="def f(:\n")
    assert fixed.exit_code == 1
    assert fixed.stdout == "def f(:\n"  # the code is echoed unchanged


def test_a_bug_met_in_one_file_is_one_line_and_the_others_are_checked(tree, monkeypatch):
    write(tree, "a.py", BUGGY)
    write(tree, "b.py", BUGGY)
    real = engine_check.check_source

    def buggy(source, shown, settings):
        if shown == "a.py":
            raise KeyError("facts")
        return real(source, shown, settings)

    monkeypatch.setattr(engine_check, "check_source", buggy)
    result = check(".", "--no-cache", "--format", "concise")
    assert result.exit_code == 2
    assert _errors(result.stderr) == [
        "hooklint: a.py: internal error: KeyError: 'facts' (set HOOKLINT_DEBUG=1 for the traceback)"
    ]
    assert result.stdout.startswith("b.py:14:5: HL001")
    debug = check(".", "--no-cache", env={"HOOKLINT_DEBUG": "1"})
    assert "Traceback (most recent call last):" in debug.stderr
