"""Which statements of a function can never run: those after a ``return``, ``raise``,
``continue`` or ``break`` in the same block (and everything inside them); the
``raise`` or ``assert`` that can run after a given statement (:func:`raise_after`);
and the ``except`` handler that runs a statement only for some exceptions
(:func:`narrow_handler`).

A removal placed there is no removal (``return out`` then ``handle.remove()``).  The
check is per block, as CPython's compiler sees it: a terminator inside an ``if`` does
not make the code after the ``if`` dead.
"""

from __future__ import annotations

import libcst as cst

from hooklint.analysis.walk import contains, descendants

_TERMINATORS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


def dead_statements(function: cst.FunctionDef | cst.Module) -> set[int]:
    """The ids of the statements of ``function``'s body (nested defs excluded) that
    follow a terminator in their block: the outermost dead statement of each run."""
    dead: set[int] = set()
    _visit_block(_body(function), dead)
    return dead


def _body(node: cst.CSTNode) -> list[cst.CSTNode]:
    body = getattr(node, "body", None)
    if isinstance(body, cst.BaseSuite):
        body = getattr(body, "body", ())
    return list(body) if isinstance(body, (list, tuple)) else []


def _visit_block(statements: list[cst.CSTNode], dead: set[int]) -> None:
    finished = False
    for statement in statements:
        if finished:
            dead.add(id(statement))
            continue
        if isinstance(statement, cst.SimpleStatementLine):
            finished = any(isinstance(small, _TERMINATORS) for small in statement.body)
            continue
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue  # a nested definition has reachability of its own
        for block in _blocks(statement):
            _visit_block(block, dead)


def _blocks(statement: cst.CSTNode):
    """The statement lists directly inside a compound statement (``if``/``elif``/
    ``else``, loops, ``try``'s parts, ``with``, ``match`` cases)."""
    yield _body(statement)
    orelse = getattr(statement, "orelse", None)
    if orelse is not None:
        if isinstance(orelse, cst.If):
            yield from _blocks(orelse)
        else:
            yield _body(orelse)
    for handler in getattr(statement, "handlers", ()) or ():
        yield _body(handler)
    final = getattr(statement, "finalbody", None)
    if final is not None:
        yield _body(final)
    for case in getattr(statement, "cases", ()) or ():
        yield _body(case)


def raise_after(function: cst.FunctionDef, statement: cst.CSTNode) -> cst.CSTNode | None:
    """The first ``raise`` or ``assert`` of ``function``'s body that can run after
    ``statement`` has: one in a top-level statement that follows the one holding
    ``statement`` (nested defs and classes left out), outside every ``try`` (whose
    handler might clean up) and not after a terminator in its block; or, when a loop
    holds ``statement``, one anywhere in that loop's body whose condition changes from
    pass to pass (:func:`_varying_raise`: a later pass reaches it after this one
    registered: ``for name in names: if bad(name): raise ...``); None if there is
    none."""
    body = _body(function)
    dead = dead_statements(function)
    for index, top in enumerate(body):
        if top is statement or _holds(top, statement):
            for later in body[index + 1 :]:
                found = _first_raise(later, dead)
                if found is not None:
                    return found
            return _raise_in_loop(top, statement, dead)
    return None


def removed_before(function: cst.FunctionDef, raised: cst.CSTNode, removals: list[cst.CSTNode]) -> bool:
    """Whether a statement before ``raised`` (a ``raise``/``assert`` of ``function``)
    in its own block holds one of ``removals`` (removal calls: ``self.close()`` then
    ``raise``): the hooks are off by the time it raises."""
    found = _line_holding(function, lambda line: any(s is raised for s in line.body))
    if found is None:
        return False
    block, index = found
    wanted = {id(r) for r in removals}
    return any(
        id(n) in wanted for earlier in block[:index] for n in descendants(earlier, into_functions=False)
    )


def raises_next(function: cst.FunctionDef, node: cst.CSTNode) -> bool:
    """Whether the statement holding ``node`` (a call of ``function``'s body) is followed
    in its block by a ``raise``: cleanup on the way out of an error (``self.close()``,
    then ``raise``), not the code's normal path."""
    found = _line_holding(function, lambda line: contains(line, node, into_functions=False))
    if found is None:
        return False
    block, index = found
    return any(
        isinstance(later, cst.SimpleStatementLine)
        and any(isinstance(small, cst.Raise) for small in later.body)
        for later in block[index + 1 :]
    )


def _line_holding(function: cst.FunctionDef, holds) -> tuple[list, int] | None:
    """The block of ``function``'s body (nested defs and classes left out) and the index
    in it of the first simple statement line for which ``holds(line)``; None if none."""
    pending = [_body(function)]
    while pending:
        block = pending.pop()
        for index, statement in enumerate(block):
            if isinstance(statement, cst.SimpleStatementLine):
                if holds(statement):
                    return block, index
            elif not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                pending.extend(_blocks(statement))
    return None


def _raise_in_loop(top: cst.CSTNode, statement: cst.CSTNode, dead: set[int]) -> cst.CSTNode | None:
    """A ``raise``/``assert`` in the body of the outermost loop of ``top`` (itself
    included) that holds ``statement`` (see :func:`raise_after`)."""
    pending = [top]
    while pending:
        node = pending.pop(0)
        if isinstance(node, (cst.For, cst.While)) and (node is statement or _holds(node, statement)):
            return _varying_raise(_body(node), _loop_bound(node), dead)
        if isinstance(node, cst.SimpleStatementLine):
            continue
        for block in _blocks(node):
            pending.extend(child for child in block if child is statement or _holds(child, statement))
    return None


def _holds(node: cst.CSTNode, wanted: cst.CSTNode) -> bool:
    for block in _blocks(node) if not isinstance(node, cst.SimpleStatementLine) else ():
        for child in block:
            if child is wanted or _holds(child, wanted):
                return True
    return False


def _loop_bound(loop: cst.For | cst.While) -> set[str]:
    """The names a loop binds anew on each pass: its target and what its body assigns."""
    from hooklint.analysis.scopes import target_names

    names = target_names(loop.target) if isinstance(loop, cst.For) else set()
    for node in descendants(loop.body):
        if isinstance(node, cst.AssignTarget):
            names |= target_names(node.target)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)):
            names |= target_names(node.target)
        elif isinstance(node, cst.NamedExpr):
            names |= target_names(node.target)
    return names


def _varying_raise(statements, bound: set[str], dead: set[int]) -> cst.CSTNode | None:
    """A ``raise``/``assert`` among ``statements`` (a loop body) whose condition changes
    from pass to pass: an ``assert`` or an ``if`` test that names one of ``bound``, or a
    handler (calling no ``.remove()``) of a ``try`` whose body names one.  A check of
    something the loop does not change (``assert torch_ok()``) fails on the first pass
    or never."""
    for statement in statements:
        if id(statement) in dead or isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assert) and _names_any(small.test, bound):
                    return small
            continue
        if isinstance(statement, cst.If) and _names_any(statement.test, bound):
            found = _first_raise(statement, dead, handlers=True)
            if found is not None:
                return found
            continue
        if isinstance(statement, (cst.Try, cst.TryStar)) and _names_any(statement.body, bound):
            found = _first_raise(statement, dead, handlers=True)  # its handlers'
            if found is not None:
                return found
        for block in _blocks(statement):
            found = _varying_raise(block, bound, dead)
            if found is not None:
                return found
    return None


def _names_any(node: cst.CSTNode, names: set[str]) -> bool:
    return any(isinstance(n, cst.Name) and n.value in names for n in descendants(node))


def _first_raise(statement: cst.CSTNode, dead: set[int], handlers: bool = False) -> cst.CSTNode | None:
    """The first ``raise``/``assert`` ``statement`` may run: not inside a ``try``
    (whose handler might clean up), but with ``handlers``, in a handler of one that
    calls no ``.remove()``."""
    if id(statement) in dead or isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return None
    if isinstance(statement, (cst.Try, cst.TryStar)):
        if not handlers:
            return None
        for handler in statement.handlers:
            if not _calls_remove(handler):
                for child in _body(handler):
                    found = _first_raise(child, dead, handlers)
                    if found is not None:
                        return found
        return None
    if isinstance(statement, cst.SimpleStatementLine):
        return next((s for s in statement.body if isinstance(s, (cst.Raise, cst.Assert))), None)
    for block in _blocks(statement):
        for child in block:
            found = _first_raise(child, dead, handlers)
            if found is not None:
                return found
    return None


def _calls_remove(node: cst.CSTNode) -> bool:
    return any(
        isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "remove"
        for n in descendants(node)
    )


#: Exception classes a handler catches everything a forward can raise with (bare
#: ``except:`` too).
_CATCH_ALL = frozenset({"Exception", "BaseException"})


def narrow_handler(site) -> tuple[cst.ExceptHandler, str] | None:
    """The innermost ``except`` handler of ``site``'s function that holds it and
    catches only some exceptions (``except StopForward:``), with the code of what it
    catches; None when the site is in no handler, or in one that catches everything
    (bare, ``Exception``, ``BaseException``, or a tuple with one of them).  Code in
    such a handler runs only when that exception is raised: not when another one is,
    nor when none is."""
    handler = _innermost_handler(site)
    if handler is None or catches_everything(handler):
        return None
    return handler, _code(handler.type)


def _innermost_handler(site) -> cst.ExceptHandler | None:
    """The innermost ``except`` handler of ``site``'s own function that holds it."""
    for frame in reversed(site.frames):
        if frame.kind in ("def", "lambda", "class"):
            return None
        if frame.kind == "except":
            return frame.node  # type: ignore[return-value]
    return None


def runs_when_raising(site, other, exception: str) -> bool:
    """Whether ``site`` is in an ``except`` handler (the innermost of its function)
    that catches ``exception`` (by name, or everything), of a ``try`` whose body holds
    ``other``: it runs only when that body raised, as a fallback for ``other``
    (``try: register(h, always_call=True)`` / ``except TypeError: register(h)``)."""
    handler = _innermost_handler(site)
    if handler is None or not (catches_everything(handler) or exception in _caught(handler)):
        return False
    return any(f.kind == "try" and any(h is handler for h in f.node.handlers) for f in other.frames)


def _caught(handler: cst.ExceptHandler) -> set[str]:
    """The last part of each name the handler catches (``builtins.TypeError``: ``TypeError``)."""
    caught = handler.type
    if caught is None:
        return set()
    names = caught.elements if isinstance(caught, cst.Tuple) else [caught]
    return {_code(e.value if isinstance(e, cst.Element) else e).rsplit(".", 1)[-1] for e in names}


def catches_everything(handler: cst.ExceptHandler) -> bool:
    """A bare ``except:``, or one that names ``Exception`` or ``BaseException`` (alone
    or in a tuple)."""
    return handler.type is None or bool(_caught(handler) & _CATCH_ALL)


def may_raise(statement: cst.CSTNode) -> bool:
    """Whether running ``statement`` can end in an exception it lets out: it calls,
    raises or asserts somewhere, except inside a ``try`` that catches everything with
    handlers (and ``else``/``finally``) that cannot themselves raise.  (A plain
    assignment of a value to an attribute is taken not to raise.)"""
    if isinstance(statement, (cst.Try, cst.TryStar)) and any(
        catches_everything(h) for h in statement.handlers
    ):
        parts = [*statement.handlers, statement.orelse, statement.finalbody]
        return any(may_raise(s) for part in parts if part is not None for s in _body(part))
    return any(
        isinstance(n, (cst.Call, cst.Raise, cst.Assert)) for n in descendants(statement, into_functions=False)
    )


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def guarded_body(statements, handler: cst.ExceptHandler) -> list[cst.CSTNode]:
    """The body of the ``try`` among ``statements`` (and the statements nested in
    them) whose handlers include ``handler``: what runs before the handler can."""
    stack = list(statements)
    while stack:
        statement = stack.pop()
        if isinstance(statement, (cst.Try, cst.TryStar)) and any(h is handler for h in statement.handlers):
            return _body(statement)
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        for block in _blocks(statement):
            stack.extend(block)
    return []
