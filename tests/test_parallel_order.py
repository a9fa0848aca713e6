"""How a parallel run hands out its files (``parallel._chunks``): the few big files
first, one at a time, then the rest in path order in chunks that shrink towards the
end; and it still answers for each file in the order it was given."""

from __future__ import annotations

import os

import pytest
from _hooklint_cli import BUGGY, CLEAN, write

import hooklint.engine.parallel as parallel
from hooklint.engine import Settings, check_paths


def _tasks(paths) -> list[tuple[int, str, bool]]:
    return [(position, str(path), False) for position, path in enumerate(paths)]


def _positions(chunks) -> list[list[int]]:
    return [[task[0] for task in chunk] for chunk in chunks]


def test_big_files_go_first_alone_largest_first_and_the_rest_keep_their_order(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "BIG_FILE", 100)
    paths = [
        write(tmp_path, "a.py", "x = 1\n"),
        write(tmp_path, "b.py", "x = 1\n" * 30),  # 180 bytes: big
        tmp_path / "gone.py",  # cannot be stat'ed: not big, its own check says why
        write(tmp_path, "c.py", "x = 1\n" * 5),
        write(tmp_path, "d.py", "x = 1\n" * 60),  # 360 bytes: the biggest
        write(tmp_path, "e.py", "y = 2\n"),
    ]
    chunks = _positions(parallel._chunks(_tasks(paths), 2))
    assert chunks[:2] == [[4], [1]]
    assert [p for chunk in chunks[2:] for p in chunk] == [0, 2, 3, 5]


def test_chunks_cover_every_file_once_and_shrink_to_one_file_at_the_end(tmp_path):
    paths = [write(tmp_path, f"m{i:04d}.py", f"x = {i}\n") for i in range(2000)]
    chunks = _positions(parallel._chunks(_tasks(paths), 2))
    assert [p for chunk in chunks for p in chunk] == list(range(2000))  # path order kept
    sizes = [len(chunk) for chunk in chunks]
    base = 2000 // (2 * 32)
    assert sizes[0] == base  # most of the run: chunks of the usual size
    assert sizes.count(base) > len(sizes) // 2
    assert all(later <= earlier for earlier, later in zip(sizes, sizes[1:]))  # never grow
    assert sizes[-8:] == [1] * 8  # the run ends on single files, shared out as workers free up


def test_few_files_make_chunks_of_one(tmp_path):
    paths = [write(tmp_path, f"m{i}.py", "x = 1\n") for i in range(9)]
    assert _positions(parallel._chunks(_tasks(paths), 2)) == [[i] for i in range(9)]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="workers fork")
def test_a_parallel_run_answers_in_the_given_order_whatever_the_sizes(tmp_path, monkeypatch):
    paths = []
    for i in range(40):  # sizes that grow with the name: every other file is "big"
        text = (BUGGY if i % 4 == 0 else CLEAN) + "\n" * i
        paths.append(write(tmp_path, f"m{i:02d}.py", text))
    sizes = sorted(path.stat().st_size for path in paths)
    monkeypatch.setattr(parallel, "BIG_FILE", sizes[20])
    settings = Settings(rule_codes=("HL000", "HL001"))
    serial = check_paths(paths, settings, 1)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    shared = check_paths(paths, settings, 2)
    assert [r.path.rsplit("/", 1)[-1] for r in shared] == [p.name for p in paths]
    assert [len(r.violations) for r in shared] == [1 if i % 4 == 0 else 0 for i in range(40)]
    assert [(r.path, r.error, r.violations) for r in shared] == [
        (r.path, r.error, r.violations) for r in serial
    ]
