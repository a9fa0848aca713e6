"""A parallel run sends the largest files first (``parallel._largest_first``) and
still answers for each file in the order it was given."""

from __future__ import annotations

import os

import pytest
from _hooklint_cli import BUGGY, CLEAN, write

import hooklint.engine.parallel as parallel
from hooklint.engine import Settings, check_paths


def _task(position: int, path) -> tuple[int, str, bool]:
    return (position, str(path), False)


def test_largest_files_come_first_equal_sizes_keep_their_order_and_a_missing_file_is_last(tmp_path):
    small = write(tmp_path, "a.py", "x = 1\n")
    large = write(tmp_path, "b.py", "x = 1\n" * 50)
    medium = write(tmp_path, "c.py", "x = 1\n" * 5)
    also_small = write(tmp_path, "d.py", "y = 2\n")
    tasks = [
        _task(0, small),
        _task(1, tmp_path / "gone.py"),
        _task(2, large),
        _task(3, medium),
        _task(4, also_small),
    ]
    assert [t[0] for t in parallel._largest_first(tasks)] == [2, 3, 0, 4, 1]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="workers fork")
def test_a_parallel_run_answers_in_the_given_order_whatever_the_sizes(tmp_path, monkeypatch):
    paths = []
    for i in range(40):  # sizes that grow with the name: dispatch reverses them
        text = (BUGGY if i % 4 == 0 else CLEAN) + "\n" * i
        paths.append(write(tmp_path, f"m{i:02d}.py", text))
    settings = Settings(rule_codes=("HL000", "HL001"))
    serial = check_paths(paths, settings, 1)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    shared = check_paths(paths, settings, 2)
    assert [r.path for r in shared] == [r.path for r in serial]
    assert [r.path.rsplit("/", 1)[-1] for r in shared] == [p.name for p in paths]
    assert [len(r.violations) for r in shared] == [1 if i % 4 == 0 else 0 for i in range(40)]
    assert [(r.error, r.violations) for r in shared] == [(r.error, r.violations) for r in serial]
