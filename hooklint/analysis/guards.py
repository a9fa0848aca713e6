"""Guards: the conditions under which a statement runs, one concept for every rule.

A *guard* of a statement is a condition that must hold (or fail) for the statement to
run: the test of an ``if``/``elif`` around it, and the test of an earlier
``if ...: return`` / ``raise`` / ``continue`` in a block around it (an *early exit*:
what follows runs only when the test failed).  Inside an expression, the walk of a
hook body (:mod:`hooklint.analysis.effects`) adds the conditions that an expression
can hold: a ``while`` test, the left side of ``and``/``or``, the test of ``x if c else
y``.  A loop test is no guard of a *registration site* (:func:`site_guards`): it is
tested again on every pass, so it says nothing about "only once".

Three questions rest on guards:

* :func:`mentions` — whether any guard tests one of some names: a release under a
  check of what its pre-hook acquired (HL005) runs only when there is something to
  release;
* :func:`install_once` — whether a registration is guarded by an *install-once*
  check: a guard that tests something the function itself sets or stores
  (``if self._handle is None: self._handle = m.register_forward_hook(fn)``,
  ``if m in self._hooked: return ... self._hooked.add(m)``), or ``hasattr``/``getattr``
  (HL003);
* :func:`under_main_guard` — whether a site runs under ``if __name__ == "__main__"``,
  once per process (HL009);
* :func:`pins_loop_value` — whether a site in a loop runs only on the passes where
  what the loop varies equals one literal (``if name == "head":``), not on every pass
  (HL003).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst

from hooklint.analysis.facts import Frame, ModuleFacts, Registration, Site
from hooklint.analysis.lifetime import blocks_of, container_of, enclosing_ifs, statement_path, word_count
from hooklint.analysis.vocabulary import CONSTANT_NAMES, RECORDING_METHODS
from hooklint.analysis.walk import descendants

#: The last statement of a block that leaves it early.
_EXITS = (cst.Return, cst.Raise, cst.Continue)


def _block(suite: cst.BaseSuite) -> Sequence:
    """The statements of a block (a one-line suite's small statements)."""
    return suite.body if isinstance(suite, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()


def exits_early(statement: cst.CSTNode) -> bool:
    """``if test: ...; return`` (or ``raise``/``continue``): what follows the ``if`` in
    its block runs only when ``test`` failed."""
    if not isinstance(statement, cst.If):
        return False
    body = _block(statement.body)
    last = body[-1] if body else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1]
    return isinstance(last, _EXITS)


def only_when_unset(facts: ModuleFacts, statement: cst.CSTNode, store: str) -> bool:
    """``if handle is None: raise ...`` (or ``if not handles:``), without ``else``, whose
    body never mentions ``store`` (the code of a handle store): it runs only when
    nothing was put there, so nothing it raises leaves one of the store's hooks on."""
    if not isinstance(statement, cst.If) or statement.orelse is not None:
        return False
    test = statement.test
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        tested = test.expression
    elif (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Is)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        tested = test.left
    else:
        return False
    return facts.code(tested) == store and not any(
        facts.code(n) == store
        for n in descendants(statement.body)
        if isinstance(n, (cst.Name, cst.Attribute))
    )


def early_exit_guards(statements: Iterable[cst.CSTNode]) -> list[cst.BaseExpression]:
    """The tests of the early exits among ``statements`` (those before a statement in its block)."""
    return [statement.test for statement in statements if exits_early(statement)]  # type: ignore[attr-defined]


def site_guards(facts: ModuleFacts, site: Site) -> list[cst.BaseExpression]:
    """The conditions a site runs under in its function: the tests of the ``if``s around
    it, innermost first, then those of the early exits before it in each block around
    it, outermost first."""
    guards = [node.test for node in enclosing_ifs(site)]
    path = statement_path(facts, site)
    if path is not None:
        for level in path:
            guards += early_exit_guards(level.block[: level.index])
    return guards


def holding_tests(facts: ModuleFacts, site: Site) -> list[cst.BaseExpression]:
    """The conditions known true where a site runs: the test of each ``if`` whose body
    (not its ``else``) holds it, and ``X`` of each early exit ``if not X: continue``
    before it.  Empty where no statement path describes the site."""
    path = statement_path(facts, site)
    if path is None:
        return []
    found = []
    for level, inner in zip(path, path[1:]):
        statement = level.statement
        if isinstance(statement, cst.If) and isinstance(statement.body, cst.IndentedBlock):
            if inner.block is statement.body.body:
                found.append(statement.test)
    for level in path:
        for test in early_exit_guards(level.block[: level.index]):
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                found.append(test.expression)
    return found


def mentions(facts: ModuleFacts, guards: Iterable[cst.BaseExpression], names: Iterable[str]) -> bool:
    """Whether any guard tests one of ``names`` (a whole name: ``self.h``, not ``x.h``)."""
    names = [name for name in names if name]
    return any(word_count(code, name) for code in map(facts.code, guards) for name in names)


def locals_read_from(facts: ModuleFacts, function: cst.CSTNode, names: list[str]) -> list[str]:
    """The locals ``function`` binds (``local = value``, not in nested defs) from a value
    that reads one of ``names`` or of those locals (``on = stack.pop()``)."""
    assigns = [
        node
        for node in descendants(function, into_functions=False)
        if isinstance(node, cst.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0].target, cst.Name)
    ]
    found: list[str] = []
    watched = list(names)
    changed = True
    while changed:
        changed = False
        for node in assigns:
            local = node.targets[0].target.value  # type: ignore[attr-defined]
            if local not in found and any(word_count(facts.code(node.value), n) for n in watched):
                found.append(local)
                watched.append(local)
                changed = True
    return found


def popped_into(facts: ModuleFacts, node: cst.CSTNode) -> list[str]:
    """The containers whose popped item a call is handed (``ctx.reset(tokens.pop())``:
    ``tokens``): a test of one guards the call, which then undoes only what was pushed."""
    if not isinstance(node, cst.Call):
        return []
    return [
        facts.code(arg.value.func.value)
        for arg in node.args
        if isinstance(arg.value, cst.Call)
        and isinstance(arg.value.func, cst.Attribute)
        and arg.value.func.attr.value in ("pop", "popleft")
    ]


def touches_only_its_module(facts: ModuleFacts, registration: Registration) -> bool:
    """The registration's hook keeps nothing outside the module it is handed: it
    stores only into that module (``module.ready = True``), names no ``self`` and calls
    no function of this file (which might store for it): lazy set-up of the module."""
    from hooklint.analysis.hook_roles import module_parameter

    hook = registration.hook
    if hook is None or not isinstance(hook.node, cst.FunctionDef):
        return False
    module = module_parameter(registration, hook)
    if not module:
        return False
    from hooklint.analysis.scopes import local_names

    own_locals = local_names(hook.node)[0]  # bound in the hook, not ``nonlocal``/``global``
    for stored in stored_names(facts, hook.node):
        if stored == module or stored.startswith(f"{module}."):
            continue
        if stored in own_locals:
            continue  # a local of the hook, gone when it returns
        return False
    own = {info.name for info in facts.functions}
    for node in descendants(hook.node.body):
        if isinstance(node, cst.Name) and node.value == "self":
            return False
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in own:
            return False
    return True


def stored_names(facts: ModuleFacts, function: cst.FunctionDef | None) -> set[str]:
    """What a function assigns to (``self._hooked``, ``_installed``) or records into
    (``self._seen.add(m)``), without looking into nested functions."""
    stored: set[str] = set()
    if function is None:
        return stored
    for node in descendants(function.body, into_functions=False):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                stored.add(container_of(facts.code(target.target)))
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            stored.add(container_of(facts.code(node.target)))
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in RECORDING_METHODS
        ):
            stored.add(facts.code(node.func.value))
    return stored


def install_once(facts: ModuleFacts, registration: Registration, target: str | None) -> bool:
    """Whether a guard of the registration is an install-once check: it calls
    ``hasattr``/``getattr``, or it tests an attribute the function sets or records into,
    or the registration's own ``target`` (where the handle is kept).  Locals are left
    out: ``h = self.proj(x); if h.requires_grad:`` is no install-once check."""
    site = registration.site
    stored = stored_names(facts, site.function)
    own = container_of(target) if target is not None else None
    if own is not None:
        stored.add(own)
    stored = {name for name in stored if "." in name or name == own}
    guards = site_guards(facts, site)
    if any("hasattr(" in facts.code(guard) or "getattr(" in facts.code(guard) for guard in guards):
        return True
    path = statement_path(facts, site)
    return any(mentions(facts, [guard], stored - set_anew_before(facts, path, guard)) for guard in guards)


def set_anew_before(facts: ModuleFacts, path, guard: cst.BaseExpression) -> set[str]:
    """What every run of the function sets before it tests ``guard``, from a value that
    does not read it (``self.busy = self.phase == "backward"``, or such an assignment in
    both branches of an ``if``/``else``): a test of it reads this call's value, so it
    says nothing about an earlier call (``self.count += 1`` keeps one)."""
    if not path:
        return set()
    before: list[cst.CSTNode] = []
    for level in path:
        statement = level.statement
        if isinstance(statement, cst.If) and guard in _if_tests(statement):
            return _set_anew(facts, [*before, *level.block[: level.index]])
        for index, earlier in enumerate(level.block[: level.index]):
            if exits_early(earlier) and earlier.test is guard:  # type: ignore[attr-defined]
                return _set_anew(facts, [*before, *level.block[:index]])
        before += level.block[: level.index]
    return set()


def _if_tests(statement: cst.If) -> list[cst.BaseExpression]:
    """The tests of an ``if`` and of its ``elif`` chain."""
    tests = []
    branch: object = statement
    while isinstance(branch, cst.If):
        tests.append(branch.test)
        branch = branch.orelse
    return tests


def _set_anew(facts: ModuleFacts, statements: Sequence[cst.CSTNode]) -> set[str]:
    """Names and attributes that ``statements``, run in order, always assign from a value
    that does not read them."""
    found: set[str] = set()
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    value = facts.code(small.value)
                    for target in small.targets:
                        name = facts.code(target.target)
                        if isinstance(target.target, (cst.Name, cst.Attribute)) and not word_count(
                            value, name
                        ):
                            found.add(name)
        elif isinstance(statement, cst.If):
            blocks = blocks_of(statement)
            if len(blocks) > len(_if_tests(statement)):  # an ``else``: one branch always runs
                found |= set.intersection(*(_set_anew(facts, _block(block)) for block in blocks))
    return found


def if_tests_around(site: Site) -> list[cst.BaseExpression]:
    """The tests of every ``if`` around a site, outermost first, also those around the
    function it sits in (a ``def`` inside ``if __name__ == "__main__":``)."""
    return [frame.node.test for frame in site.frames if frame.kind == "if"]  # type: ignore[attr-defined]


def under_main_guard(site: Site) -> bool:
    """The site runs under ``if __name__ ...`` (a script's main block: it runs once)."""
    return any(_tests_module_name(test) for test in if_tests_around(site))


def _tests_module_name(test: cst.BaseExpression) -> bool:
    """``__name__ == "__main__"`` (any comparison of ``__name__``)."""
    return (
        isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and test.left.value == "__name__"
    )


def in_script_that_stops_on_error(site: Site) -> bool:
    """The site runs in a script's main block (``if __name__ == "__main__":``, also in a
    ``def`` inside it) that catches nothing (no ``try`` with a handler there): whatever
    raises ends the program, and nothing it registered outlives it."""
    for frame in site.frames:
        if frame.kind == "if" and _tests_module_name(frame.node.test):  # type: ignore[attr-defined]
            return not any(
                isinstance(node, (cst.Try, cst.TryStar)) and node.handlers
                for node in descendants(frame.node.body)
            )
    return False


def pins_loop_value(facts: ModuleFacts, site: Site, loop: cst.CSTNode, varying: set[str]) -> bool:
    """Whether an ``if`` inside ``loop`` whose body holds the site tests one of the
    ``varying`` names (bound anew on each pass) for equality with a literal
    (``if name == "head":``, ``if kind is None and ...:``): the site runs on the passes
    that reach that one value, not on every pass."""
    inside = {id(n) for n in descendants(loop)}
    return any(id(test) in inside and _pins(test, varying) for test in holding_tests(facts, site))


def breaks_after(facts: ModuleFacts, site: Site, loop: Frame) -> bool:
    """Whether the pass of ``loop`` (a statement loop's frame: a comprehension has no
    ``break``) that runs the site then leaves the loop: a ``break`` of that loop follows
    the site's statement in one of the blocks between them (``if name == wanted: h =
    m.register_forward_hook(f); break``), so the site runs at most once per run of the
    loop."""
    from hooklint.analysis.lifetime import statement_site
    from hooklint.analysis.statements import leaves_loop_after

    if loop.kind == "comp":
        return False
    path = statement_path(facts, statement_site(site)) or []
    at = next((k for k, level in enumerate(path) if level.statement is loop.node), None)
    return at is not None and leaves_loop_after(path, at)


#: Literals a loop variable may be compared with (and ``None``/``True``/``False``).
_LITERALS = (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float)


def _pins(test: cst.BaseExpression, varying: set[str]) -> bool:
    """``name == literal`` (or ``literal == name``, ``is``), alone or as one operand of
    an ``and``, with ``name`` among ``varying``."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _pins(test.left, varying) or _pins(test.right, varying)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, (cst.Equal, cst.Is)):
        return False
    sides = (test.left, target.comparator)
    return any(
        isinstance(one, cst.Name) and one.value in varying and _is_literal(other)
        for one, other in (sides, sides[::-1])
    )


def _is_literal(node: cst.BaseExpression) -> bool:
    return isinstance(node, _LITERALS) or (isinstance(node, cst.Name) and node.value in CONSTANT_NAMES)


def in_other_branches(site: Site, other: Site) -> bool:
    """Whether the two sites sit in different branches of one ``if`` (``if`` and
    ``else``, or ``if`` and an ``elif``): at most one of them runs."""
    for frame in site.frames:
        if frame.kind != "if" or not any(f.node is frame.node for f in other.frames if f.kind == "if"):
            continue
        body = {id(n) for n in descendants(frame.node.body)}  # type: ignore[attr-defined]
        if (id(site.statement) in body) != (id(other.statement) in body):
            return True
    return False
