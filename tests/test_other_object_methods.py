"""Hooks added and removed through a method called on another object
(``self.points[name].add(fn)``, ``point.clear()``): the handle model resolves such a
call to the file's one class whose method of that name registers or removes, keys what
it keeps by that class, and the fast path (screen, then sparse text) keeps the code
that decides it.  Each program is checked on the whole file and on the fast path."""

from __future__ import annotations

import textwrap

import pytest

from hooklint.engine import lint_text
from hooklint.rules import all_rules, rules_by_code
from hooklint.rules.base import RuleContext

EVERY = [r for r in all_rules() if r.code != "HL000"]

POINT = """
from torch import nn


class Point(nn.Module):
    def __init__(self):
        super().__init__()
        self.live = []

    def add(self, fn):
        self.live.append(self.register_forward_hook(lambda mod, args, out: fn(out)))

    def clear(self):
        for handle in self.live:
            handle.remove()
        self.live = []

    def forward(self, x):
        return x
"""

# The caller's class holds no hook text at all: only its calls on the points tie it in.
CALLER = """

class Runner:
    def __init__(self, model, points):
        self.model = model
        self.points = points

    def _clear_all(self):
        for point in self.points.values():
            point.clear()

    def run(self, x, fns):
        for name, fn in fns.items():
            self.points[name].add(fn)
        out = self.model(x)
        self._clear_all()
        return out
"""

GUARDED = CALLER.replace(
    """        for name, fn in fns.items():
            self.points[name].add(fn)
        out = self.model(x)
        self._clear_all()
""",
    """        try:
            for name, fn in fns.items():
                self.points[name].add(fn)
            out = self.model(x)
        finally:
            self._clear_all()
""",
)

MODULE_LEVEL = """

def probe(model, point, fn, x):
    point.add(fn)
    model(x)
    point.clear()
"""

# Another class with an `add` that registers too: `point.add` may be either.
SECOND_REGISTERING_ADD = """

class Counter:
    def __init__(self):
        self.handles = []

    def add(self, module):
        self.handles.append(module.register_forward_pre_hook(lambda mod, args: None))
"""

# Another class whose `add` does something else: `point.add` may be that one.
UNRELATED_ADD = """

class Tally:
    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(item)
"""

# Removal through a helper of the point class, whose own code never says `remove`.
HELPER_CLEAR = POINT.replace(
    """    def clear(self):
        for handle in self.live:
            handle.remove()
        self.live = []
""",
    """    def _drop(self):
        for handle in self.live:
            handle.remove()
        self.live = []

    def clear(self):
        self._drop()
""",
)


def _hl004(text: str, fast: bool) -> list[tuple]:
    found = lint_text(text, "m.py", [rules_by_code()["HL004"]], RuleContext(), skip_irrelevant=fast)
    return [(v.start.line, v.message) for v in found]


def _same_everywhere(text: str) -> list[tuple]:
    whole = _hl004(text, False)
    assert _hl004(text, True) == whole
    every = [
        (v.code, v.start, v.message)
        for v in lint_text(text, "m.py", EVERY, RuleContext(), skip_irrelevant=True)
    ]
    assert every == [
        (v.code, v.start, v.message)
        for v in lint_text(text, "m.py", EVERY, RuleContext(), skip_irrelevant=False)
    ]
    return whole


def _line_of(text: str, code: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), start=1) if code in line)


@pytest.mark.parametrize("point", [POINT, HELPER_CLEAR], ids=["direct", "helper"])
def test_registration_through_another_object_is_reported_on_every_path(point):
    text = textwrap.dedent(point + CALLER).lstrip()
    found = _same_everywhere(text)
    assert [line for line, _ in found] == [_line_of(text, "self.points[name].add(fn)")]
    assert "`Point.live` is removed outside `finally`/`with`" in found[0][1]


def test_a_module_function_on_a_point_it_is_given_is_reported():
    text = textwrap.dedent(POINT + MODULE_LEVEL).lstrip()
    assert [line for line, _ in _same_everywhere(text)] == [_line_of(text, "point.add(fn)")]


def test_the_same_code_with_try_finally_is_silent():
    assert _same_everywhere(textwrap.dedent(POINT + GUARDED).lstrip()) == []


@pytest.mark.parametrize("other", [SECOND_REGISTERING_ADD, UNRELATED_ADD], ids=["registers", "unrelated"])
def test_a_second_method_of_that_name_keeps_it_silent(other):
    for program in (POINT + CALLER + other, POINT + MODULE_LEVEL + other):
        assert _same_everywhere(textwrap.dedent(program).lstrip()) == []


def test_a_removal_of_the_callers_own_store_of_that_name_does_not_count():
    text = textwrap.dedent(
        POINT
        + """

class Owner:
    def __init__(self, model, point):
        self.model = model
        self.point = point
        self.live = []

    def _drop(self):
        for handle in self.live:
            handle.remove()

    def run(self, x, fn):
        self.point.add(fn)
        out = self.model(x)
        self._drop()
        return out
"""
    ).lstrip()
    assert _same_everywhere(text) == []
