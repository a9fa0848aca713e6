"""What kind of statement a statement is, in the words the rules use.

The rules place registrations and removals in their blocks
(:func:`hooklint.analysis.lifetime.statement_path`) and then ask about the statements
they meet there: is it a loop, a bare ``yield``, a line that only removes hooks, one
plain expression or assignment of a given call?  The answers live here, so that no
rule tests libcst node types itself.
"""

from __future__ import annotations

import libcst as cst

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.names import dotted_name
from hooklint.analysis.walk import child_nodes, descendants


def is_loop(statement: cst.CSTNode) -> bool:
    """A ``for`` or ``while`` statement."""
    return isinstance(statement, (cst.For, cst.While))


def leaves_loop_after(path, depth: int) -> bool:
    """The loop ``path[depth].statement`` (``path``: :class:`hooklint.analysis.lifetime.Level`
    s down to a statement) ends with ``break`` in the pass that runs that statement,
    after it: a block from the loop's body down to the statement, with no other loop
    between, holds a plain ``break`` line after it (``for name, m in
    model.named_modules(): if name == wanted: h = m.register_forward_hook(f); break``).
    The statement then runs at most once per run of the loop."""
    for level in path[depth + 1 :]:
        if any(
            isinstance(s, cst.SimpleStatementLine) and any(isinstance(small, cst.Break) for small in s.body)
            for s in level.block[level.index + 1 :]
        ):
            return True
        if is_loop(level.statement):
            return False  # a ``break`` further in ends that loop, not this one
    return False


def jump_out_of(statements) -> str | None:
    """The keyword of a jump inside ``statements`` (one block's run of statements) that
    leaves them, so that a later statement of their block is skipped without anything
    raised: ``return``, or ``continue``/``break`` not inside a loop of their own (it
    then ends a pass of a loop around the block).  Nested defs, lambdas and classes
    are not entered; None when there is none."""
    pending = [(s, False) for s in reversed(list(statements))]
    while pending:
        node, in_loop = pending.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.SimpleStatementLine):  # a jump is a leaf: read the line
            for small in node.body:
                if isinstance(small, cst.Return):
                    return "return"
                if isinstance(small, (cst.Continue, cst.Break)) and not in_loop:
                    return "continue" if isinstance(small, cst.Continue) else "break"
            continue
        inner = in_loop or is_loop(node)
        pending.extend((child, inner) for child in reversed(list(child_nodes(node))))
    return None


def raises_first(statement: cst.If) -> bool:
    """The body of the ``if`` starts with a ``raise``."""
    body = statement.body.body
    return (
        bool(body) and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Raise)
    )


def is_simple_line(statement: cst.CSTNode) -> bool:
    """A line of simple statements (``h.remove()``, ``x = 1; y = 2``), no block."""
    return isinstance(statement, cst.SimpleStatementLine)


def is_bare_yield(statement: cst.CSTNode) -> bool:
    """A line holding a ``yield`` expression statement (a ``@contextmanager``'s ``yield``)."""
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Expr) and isinstance(small.value, cst.Yield) for small in statement.body
    )


def only_removes(facts: ModuleFacts, statement: cst.CSTNode) -> bool:
    """The statement does nothing but remove: one expression (``h.remove()``,
    ``helper(h)``), ``for h in handles: h.remove()`` or ``while handles:
    handles.pop().remove()``, with no ``else``."""
    if isinstance(statement, cst.SimpleStatementLine):
        return is_expression_line(statement)
    if (
        isinstance(statement, (cst.For, cst.While))
        and statement.orelse is None
        and isinstance(statement.body, cst.IndentedBlock)
    ):
        body = statement.body.body
        return len(body) == 1 and only_removes(facts, body[0]) and ".remove()" in facts.code(body[0])
    return False


def tests_empty(test: cst.BaseExpression, code: str) -> bool:
    """``test`` is true only when ``code`` (a name or attribute chain) is empty:
    ``not hs``, ``len(hs) == 0``, ``hs == []``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return dotted_name(test.expression) == code
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return False
    left, right = test.left, target.comparator
    if isinstance(left, cst.Call) and isinstance(left.func, cst.Name) and left.func.value == "len":
        return (
            len(left.args) == 1
            and dotted_name(left.args[0].value) == code
            and isinstance(right, cst.Integer)
            and right.value == "0"
        )
    return dotted_name(left) == code and isinstance(right, (cst.List, cst.Tuple)) and not right.elements


def is_expression_line(statement: cst.CSTNode) -> bool:
    """A line that is one expression statement (``cm.__enter__()``, ``h.remove()``)."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
    )


def assigns_alone(statement: cst.CSTNode, value: cst.CSTNode) -> bool:
    """The line is one assignment whose value is ``value`` (``ctx = saved_tensors_hooks(...)``)."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Assign)
        and statement.body[0].value is value
    )


def in_kept_lambda(site) -> bool:
    """Whether ``site`` is inside a lambda that its statement returns or binds
    (``return lambda: [h.remove() for h in hs]``, ``self.undo = lambda: h.remove()``):
    that code runs when someone calls the lambda later, not where it is written.  A
    lambda handed to a call (``model.apply(lambda m: ...)``, ``map(...)``) is not one."""
    lambdas = []
    for frame in reversed(site.frames):
        if frame.kind in ("def", "class"):
            break
        if frame.kind == "lambda":
            lambdas.append(frame.node)
    if not lambdas:
        return False
    outer = lambdas[-1]
    statement = site.statement
    smalls = statement.body if isinstance(statement, cst.SimpleStatementLine) else [statement]
    for small in smalls:
        if isinstance(small, (cst.Return, cst.Assign, cst.AnnAssign)) and small.value is outer:
            return True
    return False


def leaves_before(path) -> bool:
    """``path`` (:class:`hooklint.analysis.lifetime.Level`s, from the block shared with
    a later statement down to a statement's own block): after the statement, control
    always leaves before reaching the later statement in this pass: some block on
    the way ends, after it, in ``return``, or in ``continue``/``break`` of a loop
    around the shared block (not of a loop on the way down, which falls through)."""
    for depth, level in enumerate(path[1:], start=1):
        inner_loop = any(is_loop(outer.statement) for outer in path[:depth])
        for statement in level.block[level.index + 1 :]:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.Return):
                    return True
                if isinstance(small, (cst.Continue, cst.Break)) and not inner_loop:
                    return True
    return False


def _bound_targets(target: cst.CSTNode, out: set[str]) -> None:
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _bound_targets(element.value, out)
    elif isinstance(target, cst.StarredElement):
        _bound_targets(target.value, out)
    else:
        chain = dotted_name(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
        if chain is not None:  # a subscript changes a container; it binds nothing
            out.add(chain)


def chains_bound(statement: cst.CSTNode) -> set[str]:
    """What a statement binds anywhere in it, as code: names and attribute chains
    (``h``, ``self.h``) assigned by ``=``, ``+=``, an annotation, ``for``, ``with ... as``,
    ``:=``, ``import``, ``def`` or ``class``; not a comprehension's variables, nor what
    nested ``def``/``lambda``/``class`` bodies bind."""
    out: set[str] = set()
    for node in [statement, *descendants(statement, into_functions=False)]:
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For)):
            _bound_targets(node.target, out)
        elif isinstance(node, cst.AsName):  # ``with ... as``, ``except ... as``, ``import ... as``
            _bound_targets(node.name, out)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            out.add(node.name.value)
        elif isinstance(node, cst.ImportAlias) and node.asname is None:
            out.add(dotted_name(node.name).split(".")[0])  # `import a.b` binds `a`
    return out


def chains_read(statement: cst.CSTNode) -> set[str]:
    """The names and attribute chains a statement reads, less the variables of its own
    loops: ``for h in self.hs: h.remove()`` reads ``self`` and ``self.hs``, and
    ``[h.remove() for h in hs]`` reads ``hs``."""
    out: set[str] = set()
    own: set[str] = set()
    stack: list[cst.CSTNode] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.For, cst.CompFor)):
            _bound_targets(node.target, own)
        if isinstance(node, cst.Attribute):
            chain = dotted_name(node)
            if chain is not None:
                out.add(chain)
            stack.append(node.value)  # not ``attr``: the ``remove`` of ``h.remove`` is no name
        elif isinstance(node, cst.Name):
            out.add(node.value)
        else:
            stack.extend(child_nodes(node))
    return out - own
