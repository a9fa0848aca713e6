"""Context managers that extend a library's context manager and hand their own
``__enter__``/``__exit__`` on to it with ``super()`` (HL011's subclass question).

A subclass of ``saved_tensors_hooks`` pushes its pack/unpack hooks in the base's
``__enter__`` and pops them in the base's ``__exit__``.  Its own ``__exit__`` may first
do work of its own (synchronise streams, clear stashes): if that work raises before
``super().__exit__(...)`` and outside ``finally``, the base's exit never runs and the
hooks stay pushed for the thread.  Its own ``__enter__`` may go on after
``super().__enter__()``: if that raises, ``with`` never calls ``__exit__`` at all (so
too for a context it holds and enters by hand, ``self._ctx.__enter__()``,
:func:`raises_after_enter`).  A ``super()`` call in ``finally`` (or, for ``__enter__``,
inside a ``try``, whose handler can undo it) is not reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.lifetime import statement_path
from hooklint.analysis.names import dotted_name, is_super_call, resolve
from hooklint.analysis.reachability import may_raise
from hooklint.analysis.walk import descendants


@dataclass(frozen=True)
class SkippedBaseExit:
    """A ``super().__enter__()``/``super().__exit__()`` call that code around it can
    keep the base's exit from following."""

    call: cst.Call
    class_name: str
    method: str  # "__enter__" or "__exit__"
    base: str  # the qualified name of the library base (``torch.autograd.graph.saved_tensors_hooks``)


def skipped_base_exits(facts: ModuleFacts, bases: frozenset[str]) -> list[SkippedBaseExit]:
    """The ``super()`` hand-offs of classes of the file derived from one of ``bases``
    (qualified names) where the base's exit can be skipped: in ``__exit__``, code that
    can raise runs before ``super().__exit__(...)`` and the call is not in ``finally``;
    in ``__enter__``, code that can raise runs after ``super().__enter__()`` outside
    any ``try``."""
    found: list[SkippedBaseExit] = []
    for class_name, node in facts.classes.items():
        base = next(
            (q for q in (resolve(dotted_name(b.value), facts.imports) for b in node.bases) if q in bases),
            None,
        )
        if base is None:
            continue
        for method in ("__enter__", "__exit__"):
            info = facts.method(class_name, method)
            if info is None:
                continue
            for call in facts.calls_to_attr(method):
                if call.site.function is not info.node or not is_super_call(call.node.func):
                    continue
                if method == "__exit__":
                    skipped = _raises_before(facts, call.site)
                else:
                    skipped = raises_after_enter(facts, call.site)
                if skipped:
                    found.append(SkippedBaseExit(call.node, class_name, method, base))
    return found


def _raises_before(facts: ModuleFacts, site) -> bool:
    """Code that may raise runs before the statement at ``site`` (not in ``finally``)."""
    if any(f.kind == "finally" for f in site.frames):
        return False
    path = statement_path(facts, site)
    return path is not None and any(may_raise(s) for level in path for s in level.block[: level.index])


def raises_after_enter(facts: ModuleFacts, site) -> bool:
    """In an ``__enter__``, code that may raise runs after the statement at ``site``
    (something entered there: ``super().__enter__()``, ``self._ctx.__enter__()``),
    outside any ``try``: when it raises, ``with`` never calls ``__exit__``.  Entering
    the next context (``return super().__enter__()``) is not counted: the chain of
    enters is the class's own entering."""
    if any(f.kind in ("try", "except") for f in site.frames):
        return False
    path = statement_path(facts, site)
    if path is None:
        return False
    after = [s for level in path for s in level.block[level.index + 1 :]]
    return any(may_raise(s) and not _only_enters(s) for s in after)


def _only_enters(statement: cst.CSTNode) -> bool:
    """Every call in ``statement`` enters a context (``x.__enter__()``)."""
    calls = [
        n
        for n in descendants(statement, into_functions=False)
        if isinstance(n, cst.Call) and not (isinstance(n.func, cst.Name) and n.func.value == "super")
    ]
    return (
        bool(calls)
        and all(isinstance(c.func, cst.Attribute) and c.func.attr.value == "__enter__" for c in calls)
        and not any(
            isinstance(n, (cst.Raise, cst.Assert)) for n in descendants(statement, into_functions=False)
        )
    )
