"""Nodes built under engine.construction.direct_construction are the nodes libcst's
own __init__ builds: the same types and field values, node for node, and libcst's
classes are as they were outside it."""

from __future__ import annotations

import dataclasses
import sys
import threading
from pathlib import Path

import libcst as cst
import pytest

from hooklint.engine.construction import _swaps, direct_construction
from hooklint.engine.parse import parse_module

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(ROOT.glob("examples/*.py")) + sorted((ROOT / "hooklint" / "engine").glob("*.py"))

SYNTAX = '''
import a.b as c
from . import (d, e as f)
@decorator(1, *args, **kw)
async def g(x: int = 1, /, y=2, *z, k: "str" = "v", **w) -> list[int]:
    global q
    async with h() as (i, j), l():
        async for m in n:
            yield m
    try:
        pass
    except* (TypeError, ValueError) as err:
        raise RuntimeError("no") from err
    else:
        o = [p async for p in r if p if not p]
    finally:
        del s[1:2, ::3], t.u
    v = {**x, "k": lambda a, *b, c=1: (a, b, c)}
    w = {y for y in range(3)}; z = (yield)
    match v:
        case {"k": [1, *rest]} | Point(x=0) if rest:
            return f"{v!r:>{10}} {x=}"
        case _:
            return -1 ** 2 @ 3 if x else not y
    assert x, "message"
    x @= 2; x //= 3; x **= 4; x >>= 1; x <<= 1; x ^= 1; x |= 1; x &= 1; x %= 2
    print(*[1], b"bytes", 1j, 1.5e3, ..., None, True, sep="")
class C(Base, metaclass=Meta):
    """Doc."""
    type Alias[T] = list[T]
    def __init__(self) -> None: self.x: int = 0
while (n := n - 1) > 0: continue
else: pass
'''


def _same(a, b, path="module") -> None:
    assert type(a) is type(b), path
    if isinstance(a, cst.CSTNode):
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), path
        for index, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{index}]")
    else:
        assert a == b, path


def _texts():
    yield pytest.param(SYNTAX, id="syntax")
    for path in SOURCES:
        yield pytest.param(path.read_text(encoding="utf-8"), id=path.name)


@pytest.mark.parametrize("text", list(_texts()))
def test_a_parse_builds_the_same_tree(text):
    if "type Alias" in text and sys.version_info < (3, 12):
        text = text.replace("    type Alias[T] = list[T]\n", "")
    plain = parse_module(text)
    with direct_construction():
        direct = parse_module(text)
    _same(plain, direct)
    assert direct.code == text


def test_defaults_and_factories_are_those_of_the_class():
    with direct_construction():
        call = cst.Call(func=cst.Name("f"))
        other = cst.Call(cst.Name("g"))
    _same(call, cst.Call(func=cst.Name("f")))
    assert call.args == () and call.lpar == ()
    # a factory's default is a fresh node per instance, as with libcst's own __init__
    assert call.whitespace_after_func is not other.whitespace_after_func
    with direct_construction(), pytest.raises(TypeError):
        cst.Call()  # a required field is still required


def test_outside_it_libcst_builds_and_checks_as_before():
    originals = {cls: init for cls, _, init in _swaps()}
    with direct_construction():
        assert all(cls.__init__ is not init for cls, init in originals.items())
    assert all(cls.__init__ is init for cls, init in originals.items())
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")  # validated again
    with pytest.raises(RuntimeError), direct_construction():
        raise RuntimeError
    assert all(cls.__init__ is init for cls, init in originals.items())


def test_every_node_class_of_libcst_is_covered():
    swapped = {cls for cls, _, _ in _swaps()}
    for name in dir(cst):
        cls = getattr(cst, name)
        if (
            isinstance(cls, type)
            and issubclass(cls, cst.CSTNode)
            and cls is not cst.CSTNode
            and "__init__" in cls.__dict__
        ):
            assert cls in swapped, name


def test_parses_in_threads_build_the_same_trees():
    text = SOURCES[0].read_text(encoding="utf-8")
    expected = parse_module(text)
    results = []

    def parse() -> None:
        with direct_construction():
            results.append(parse_module(text))

    threads = [threading.Thread(target=parse) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for tree in results:
        _same(expected, tree)


def test_it_starts_once_the_process_has_parsed_enough_lines(monkeypatch):
    import hooklint.engine.construction as construction

    monkeypatch.setattr(construction, "_parsed", [0])
    swapped = [cls for cls, _, _ in _swaps()]
    originals = [cls.__init__ for cls in swapped]
    with direct_construction(construction.WORTH_IT - 10):  # a small file: libcst's own
        assert [cls.__init__ for cls in swapped] == originals
    with direct_construction(10):  # the lines parsed so far now repay the build
        assert all(cls.__init__ is not init for cls, init in zip(swapped, originals))
    assert [cls.__init__ for cls in swapped] == originals
