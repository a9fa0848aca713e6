"""libcst's parser builds each node through the node class's dataclass ``__init__``:
for every field ``object.__setattr__`` (a frozen dataclass), which looks the slot up
on the class each time, then ``__post_init__``, the validation a parse skips anyway
(:func:`hooklint.engine.parse.parse_module`).  Node construction is a fifth of a
parse; :func:`direct_construction` swaps in, while a parse runs, an ``__init__`` per
class that takes the same arguments, fills in the same defaults and sets each slot
through its own descriptor, without the validation call.  The tree is the same,
node for node (``tests/test_construction.py`` compares them field by field).

Like the validation switch, it applies to every node built while it runs, in any
thread; outside it libcst's classes are as they were.  Building the ``__init__`` functions
costs a process about as much as it saves on 2,500 parsed lines, so it starts once
the process has parsed that many (a lint of one small file never pays for it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

#: Lines parsed in this process, and how many before the direct ``__init__`` functions pay.
_parsed = [0]
WORTH_IT = 2500


@contextmanager
def direct_construction(lines: int | None = None) -> Iterator[None]:
    """Nodes built inside are built by :func:`_direct_init`'s ``__init__``; ``lines``:
    the size of what is parsed inside, counted towards :data:`WORTH_IT` (None: always)."""
    if lines is not None:
        _parsed[0] += lines
        if _parsed[0] < WORTH_IT:
            yield
            return
    swaps = _swaps()
    for cls, fast, _ in swaps:
        cls.__init__ = fast
    try:
        yield
    finally:
        for cls, _, original in swaps:
            cls.__init__ = original


@cache
def _swaps() -> tuple:
    """``(class, direct __init__, its own __init__)`` for each node class with one."""
    from libcst import CSTNode

    found = []
    seen = set()
    stack = list(CSTNode.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls in seen:
            continue
        seen.add(cls)
        original = cls.__dict__.get("__init__")
        if original is None or not dataclasses.is_dataclass(cls):
            continue
        fast = _direct_init(cls)
        if fast is not None:
            found.append((cls, fast, original))
    return tuple(found)


def _direct_init(cls):
    """An ``__init__`` for ``cls`` with its dataclass signature (the same names, order
    and defaults) that sets each field through the slot's descriptor; None when the
    class has a field that does not fit that (so it keeps its own)."""
    parameters, body = [], []
    namespace: dict = {"_MISSING": dataclasses.MISSING}
    for index, f in enumerate(dataclasses.fields(cls)):
        if not f.init or f.kw_only:
            return None
        if f.default is not dataclasses.MISSING:
            namespace[f"_default{index}"] = f.default
            parameters.append(f"{f.name}=_default{index}")
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory{index}"] = f.default_factory
            parameters.append(f"{f.name}=_MISSING")
            body.append(f"    if {f.name} is _MISSING:\n        {f.name} = _factory{index}()")
        else:
            parameters.append(f.name)
        slot = getattr(cls, f.name, None)
        if type(slot).__name__ != "member_descriptor":
            return None
        namespace[f"_set{index}"] = slot.__set__
        body.append(f"    _set{index}(self, {f.name})")
    source = f"def __init__(self, {', '.join(parameters)}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(source, namespace)  # noqa: S102 - built from the class's own field names
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init
