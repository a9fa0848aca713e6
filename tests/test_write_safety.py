"""What ``--fix`` writes, and where (issue 11, item 6): never through a planted link,
never anything but the file being fixed."""

from __future__ import annotations

import os
import stat
import tempfile

import pytest
from _hooklint_cli import BUGGY, FIXED, check, no_traceback, write

VICTIM_TEXT = "# somebody else's file\n"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "pkg/buggy.py", BUGGY)
    return tmp_path


@pytest.fixture
def victim(tmp_path):
    path = tmp_path.parent / f"{tmp_path.name}-victim.txt"
    path.write_text(VICTIM_TEXT)
    path.chmod(0o600)
    yield path
    path.unlink()


def _assert_untouched(victim):
    assert victim.read_text() == VICTIM_TEXT
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600


def _one_line_problem(result, *needles):
    assert result.exit_code == 2, result.output
    no_traceback(result)
    problems = [line for line in result.stderr.splitlines() if line.startswith("hooklint:")]
    assert len(problems) == 1, result.stderr
    assert all(needle in problems[0] for needle in needles), problems[0]


def test_symlink_at_the_old_temporary_name_is_not_written_through(tree, victim):
    """The writer once used ``.NAME.hooklint-PID.tmp``: a link planted there for this
    process's PID (the CLI runs in-process here) pointed the write at any file."""
    planted = tree / f"pkg/.buggy.py.hooklint-{os.getpid()}.tmp"
    planted.symlink_to(victim)
    result = check("pkg", "--fix", "--no-cache")
    assert result.exit_code == 0, result.output
    assert (tree / "pkg/buggy.py").read_text() == FIXED
    assert not (tree / "pkg/buggy.py").is_symlink()
    _assert_untouched(victim)
    assert planted.is_symlink() and os.readlink(planted) == str(victim)


@pytest.fixture
def planting(monkeypatch, victim):
    """Before each temporary file is made, plant a symlink to the victim at the first
    name ``mkstemp`` will try, whatever directory, prefix and suffix the writer asks for."""
    planted = []
    real = tempfile.mkstemp

    def mkstemp(suffix=None, prefix=None, dir=None, text=False):
        link = os.path.join(dir, f"{prefix}planted{suffix}")
        if not os.path.lexists(link):
            os.symlink(victim, link)
        planted.append(link)
        names = iter(["planted", "free"])
        monkeypatch.setattr(tempfile, "_get_candidate_names", lambda: names)
        return real(suffix, prefix, dir, text)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    return planted


def test_symlink_at_the_temporary_name_is_skipped_by_fix(tree, victim, planting):
    result = check("pkg", "--fix", "--no-cache")
    assert result.exit_code == 0, result.output
    assert (tree / "pkg/buggy.py").read_text() == FIXED
    assert len(planting) == 1 and os.path.dirname(planting[0]) == str(tree / "pkg")
    _assert_untouched(victim)


def test_symlink_at_the_temporary_name_is_skipped_by_the_cache(tree, victim, planting):
    assert check("pkg").exit_code == 1
    assert check("pkg").exit_code == 1  # answered from the run index it wrote
    assert planting and all(".hooklint_cache" in link for link in planting)
    _assert_untouched(victim)


def test_symlinked_file_fixes_its_target_and_stays_a_link(tree):
    target = write(tree, "real/buggy.py", BUGGY)
    link = tree / "pkg/link.py"
    link.symlink_to(os.path.join("..", "real", "buggy.py"))
    (tree / "pkg/buggy.py").unlink()
    result = check("pkg/link.py", "--fix", "--no-cache")
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == os.path.join("..", "real", "buggy.py")
    assert target.read_text() == FIXED
    assert sorted(p.name for p in (tree / "real").iterdir()) == ["buggy.py"]  # no temporary left


def test_hard_linked_file_is_not_written(tree):
    path = tree / "pkg/buggy.py"
    other = tree / "elsewhere.py"
    os.link(path, other)
    result = check("pkg", "--fix", "--no-cache")
    _one_line_problem(result, "pkg/buggy.py", "hard links", "not written")
    assert path.read_text() == other.read_text() == BUGGY
    assert path.stat().st_nlink == 2 and os.path.samefile(path, other)
    assert sorted(p.name for p in (tree / "pkg").iterdir()) == ["buggy.py"]


def test_read_only_file_is_not_written(tree):
    path = tree / "pkg/buggy.py"
    path.chmod(0o444)
    result = check("pkg", "--fix", "--no-cache")
    _one_line_problem(result, "pkg/buggy.py", "read-only")
    assert path.read_text() == BUGGY and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert sorted(p.name for p in (tree / "pkg").iterdir()) == ["buggy.py"]


def test_the_other_files_are_still_fixed_when_one_is_refused(tree):
    write(tree, "pkg/second.py", BUGGY)
    (tree / "pkg/buggy.py").chmod(0o444)
    result = check("pkg", "--fix", "--no-cache")
    _one_line_problem(result, "pkg/buggy.py", "read-only")
    assert (tree / "pkg/second.py").read_text() == FIXED


def test_permission_bits_owner_and_group_are_kept(tree):
    path = tree / "pkg/buggy.py"
    # As root, hand the file to another user and group; otherwise keep one's own.
    uid, gid = (12345, 23456) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    os.chown(path, uid, gid)
    path.chmod(0o751)
    result = check("pkg", "--fix", "--no-cache")
    assert result.exit_code == 0, result.output
    status = path.stat()
    assert path.read_text() == FIXED
    assert (status.st_uid, status.st_gid, stat.S_IMODE(status.st_mode)) == (uid, gid, 0o751)


def test_fifo_named_for_fixing_is_not_written(tree):
    """Not a regular file: reading it would block, and a rename would replace it."""
    from hooklint.writer import write_fixed_source

    fifo = tree / "pkg/pipe.py"
    os.mkfifo(fifo)
    problem = write_fixed_source(fifo, "", "x = 1\n")
    assert problem is not None and "regular file" in problem
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_file_changed_while_writing_is_left_alone(tree, monkeypatch):
    """The last check before the rename sees a change made after the fix was computed."""
    import hooklint.writer as writer

    path = tree / "pkg/buggy.py"
    real = writer.replace_atomically

    def replace_after_a_change(target, data, **kwargs):
        path.write_text(BUGGY + "# edited meanwhile\n")
        return real(target, data, **kwargs)

    monkeypatch.setattr(writer, "replace_atomically", replace_after_a_change)
    result = check("pkg", "--fix", "--no-cache")
    _one_line_problem(result, "pkg/buggy.py", "changed on disk")
    assert path.read_text() == BUGGY + "# edited meanwhile\n"
    assert sorted(p.name for p in (tree / "pkg").iterdir()) == ["buggy.py"]


# -- fixed code keeps its encoding (issue 11, item 11) ----------------------------------------
LATIN_1 = b"# -*- coding: latin-1 -*-\n# r\xe9glage du cache\n" + BUGGY.encode()
WITH_BOM = b"\xef\xbb\xbf" + BUGGY.encode()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (LATIN_1, b"# -*- coding: latin-1 -*-\n# r\xe9glage du cache\n" + FIXED.encode()),
        (WITH_BOM, b"\xef\xbb\xbf" + FIXED.encode()),
        (
            b"\xef\xbb\xbfx = 1  # caf\xc3\xa9\n",
            b"\xef\xbb\xbfx = 1  # caf\xc3\xa9\n",
        ),  # nothing to fix: echoed as is
    ],
)
def test_fix_from_stdin_keeps_the_encoding_and_bom(tree, raw, expected):
    from _hooklint_cli import run_subprocess

    done = run_subprocess(
        ["check", "--fix", "--no-cache", "-", "--stdin-filename", "x.py"], cwd=tree, input=raw
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize("raw", [LATIN_1, WITH_BOM])
def test_fix_of_a_file_keeps_the_encoding_and_bom(tree, raw):
    path = write(tree, "pkg/buggy.py", raw)
    assert check("pkg", "--fix", "--no-cache").exit_code == 0
    assert path.read_bytes() == raw.replace(BUGGY.encode(), FIXED.encode())
