"""Queries about *when a hook goes away*, shared by HL003, HL004, HL009 and HL011.

Everything here looks at one function (or one loop) at a time, never the module:
where a statement sits in its blocks (:func:`statement_path`), which names change
from one call or iteration to the next (:func:`varying_names`), whether a handle is
removed, and whether the code between two statements can raise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import libcst as cst

from hooklint.analysis.facts import CallSite, ModuleFacts, Registration, Site, parameter_names
from hooklint.analysis.scopes import target_names
from hooklint.analysis.statements import chains_bound, raises_first
from hooklint.analysis.vocabulary import (
    CLOCK_READINGS,
    CONSTANT_NAMES,
    CONTEXTMANAGERS,
    GRAD_MODE_SWITCHES,
    ITERATING_BUILTINS,
    METHOD_APIS,
    MODE_SWITCHES,
    MODULE_PARTS,
    NAME_LOOKUP_METHODS,
    STANDARD_ATTRIBUTES,
    STORE_METHODS,
)
from hooklint.analysis.walk import child_nodes, descendants


# -- where a statement sits ------------------------------------------------------------------
def registering_block(site: Site):
    """The frame whose block holds the registration's statement, for grouping hooks
    registered side by side: comprehensions (``hs = [reg(m) for m in ms]`` then
    ``hs += [...]``) and the branches of one ``if``/``elif``/``else`` (each registers
    the hook its case needs into one list) are the block around them."""
    frames = [f for f in statement_site(site).frames if f.kind != "if"]
    return frames[-1] if frames else None


def statement_site(site: Site) -> Site:
    """The site of the statement that holds a comprehension or lambda (``hs = set(reg(m)
    for m in ms)`` is registered where that statement runs)."""
    for index, frame in enumerate(site.frames):
        if frame.kind in ("comp", "lambda"):
            if any(f.kind in ("def", "class") for f in site.frames[index:]):
                return site
            return Site(site.order, site.frames[:index], site.statement)
    return site


@dataclass(frozen=True)
class Level:
    """One block on the way from a function's body to a statement, and the index of
    the statement of that block that holds it."""

    block: Sequence[cst.BaseStatement]
    index: int

    @property
    def statement(self) -> cst.BaseStatement:
        return self.block[self.index]


def _contains(statement: cst.CSTNode, target: cst.CSTNode) -> bool:
    if statement is target:
        return True
    if isinstance(statement, (cst.Try, cst.TryStar)):
        return target in statement.handlers or target is statement.orelse or target is statement.finalbody
    if isinstance(statement, cst.If):
        branch = statement.orelse
        while isinstance(branch, cst.If):
            if branch is target:
                return True
            branch = branch.orelse
    return False


def blocks_of(node: cst.CSTNode) -> list:
    """The blocks a compound statement runs: its body and, for an ``if``, the body of
    each ``elif`` and of the ``else``."""
    blocks = []
    body = getattr(node, "body", None)
    if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)):
        blocks.append(body)
    if isinstance(node, cst.If):
        branch = node.orelse
        while isinstance(branch, cst.If):
            blocks.append(branch.body)
            branch = branch.orelse
        if isinstance(branch, cst.Else):
            blocks.append(branch.body)
    return blocks


def statement_path(facts: ModuleFacts, site: Site) -> list[Level] | None:
    """The blocks from the site's function body (or the module) down to the block that
    holds the site's statement, outermost first; None when the site sits somewhere a
    statement path cannot describe (a lambda, a comprehension, a one-line suite)."""
    frames = list(site.frames)
    start = -1
    for index, frame in enumerate(frames):
        if frame.kind in ("def", "class"):
            start = index
    if start >= 0 and frames[start].kind == "class":
        return None
    inner = frames[start + 1 :]
    if any(f.kind in ("lambda", "comp", "def", "class") for f in inner):
        return None
    targets = [f.node for f in inner] + [site.statement]
    # An ``elif`` is its own frame, but it is part of the ``if`` statement above it.
    cleaned: list[cst.CSTNode] = []
    for node in targets:
        if (
            cleaned
            and isinstance(node, cst.If)
            and isinstance(cleaned[-1], cst.If)
            and _contains(cleaned[-1], node)
            and cleaned[-1] is not node
        ):
            continue
        if cleaned and cleaned[-1] is node:
            continue
        cleaned.append(node)
    block: object = facts.module if start < 0 else frames[start].node.body  # type: ignore[attr-defined]
    path: list[Level] = []
    for position, target in enumerate(cleaned):
        if not isinstance(block, (cst.IndentedBlock, cst.Module)):
            return None
        statements = block.body
        index = next((i for i, s in enumerate(statements) if _contains(s, target)), None)
        if index is None:
            return None
        path.append(Level(statements, index))
        if target is site.statement or position == len(cleaned) - 1:
            break
        following = cleaned[position + 1]
        container = target
        candidates = blocks_of(container)
        block = next(
            (
                b
                for b in candidates
                if isinstance(b, cst.IndentedBlock) and any(_contains(s, following) for s in b.body)
            ),
            None,
        )
        if block is None:
            return None
    if not path or path[-1].statement is not site.statement:
        return None
    return path


def common_level(first: list[Level], second: list[Level]) -> tuple[Level, Level] | None:
    """The deepest block both paths pass through, with each path's statement there."""
    found = None
    for a, b in zip(first, second):
        if a.block is not b.block:
            break
        found = (a, b)
        if a.index != b.index:
            break
    return found


# -- what can raise ----------------------------------------------------------------------------
_LITERALS = (
    cst.Integer,
    cst.Float,
    cst.SimpleString,
    cst.Name,
    cst.Imaginary,
    cst.ConcatenatedString,
)


def _simple_value(node: cst.BaseExpression | None) -> bool:
    """A value whose evaluation does not fail in practice: names and literals (an
    f-string of names too), an attribute of the method's own object (``self.model``),
    a standard attribute of such a value (``first.device``: :data:`~hooklint.analysis.vocabulary.STANDARD_ATTRIBUTES`),
    ``and``/``or`` of them, a module's mode switch (``model.eval()``), the start of a
    walk of its parts with a default (``next(model.parameters(), None)``), a scalar
    tensor or a device from a literal (``torch.tensor(0.0)``), displays of them, a comprehension that builds a skeleton of
    empty slots (:func:`_skeleton`), a test of identity, equality or membership between
    them (``"x" in kinds``), ``not`` of one, a conditional of them, ``getattr(obj,
    "name", default)`` (the missing attribute is its default), a grad-mode context not
    yet entered (``torch.no_grad()``, ``contextlib.nullcontext()``), a clock's reading
    (``time.monotonic()``: :data:`~hooklint.analysis.vocabulary.CLOCK_READINGS`), and a
    forward (pre-)hook registration on a name (:func:`_plain_forward_registration`)."""
    if node is None or isinstance(node, _LITERALS):
        return True
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        return all(_simple_value(e.value) for e in node.elements)
    if isinstance(node, cst.Dict):
        return all(
            isinstance(e, cst.DictElement) and _simple_value(e.key) and _simple_value(e.value)
            for e in node.elements
        )
    if isinstance(node, (cst.ListComp, cst.SetComp, cst.DictComp)):
        return _skeleton(node)
    if isinstance(node, cst.Comparison):
        return (
            all(isinstance(c.operator, _PLAIN_TESTS) for c in node.comparisons)
            and _simple_value(node.left)
            and all(_simple_value(c.comparator) for c in node.comparisons)
        )
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return _simple_value(node.expression)
    if isinstance(node, cst.BooleanOperation):
        return _simple_value(node.left) and _simple_value(node.right)
    if isinstance(node, cst.Attribute):
        return _own_attribute(node) or (
            node.attr.value in STANDARD_ATTRIBUTES and (_simple_value(node.value) or _walk_start(node.value))
        )
    if _walk_start(node) or _mode_switch(node) or _torch_constant(node):
        return True
    if isinstance(node, cst.IfExp):
        return _simple_value(node.test) and _simple_value(node.body) and _simple_value(node.orelse)
    if _grad_mode_context(node) or _null_context(node) or _clock_reading(node):
        return True
    if isinstance(node, cst.FormattedString):  # ``f"{side}_{n}"`` of names
        return all(
            isinstance(part, cst.FormattedStringText)
            or (part.format_spec is None and part.conversion is None and _simple_value(part.expression))
            for part in node.parts
        )
    return _defaulted_getattr(node) or _plain_forward_registration(node)


def _plain_forward_registration(node: cst.BaseExpression) -> bool:
    """``m.register_forward_hook(hook)`` (a module's forward or forward pre-hook) on a
    name or attribute chain, with names, attribute chains and literals for arguments:
    it only adds the hook to the module's dict, which does not fail in practice (a
    tensor's ``register_hook`` raises for a tensor that needs no grad, a full backward
    hook on a module that has an old-style one)."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return False
    api = METHOD_APIS.get(node.func.attr.value)
    return (
        api is not None
        and api.owner == "module"
        and api.kind in ("forward", "forward_pre")
        and _dotted(node.func.value)
        and all(not a.star and (_dotted(a.value) or _simple_value(a.value)) for a in node.args)
    )


#: Tests between names and literals that do not fail in practice.
_PLAIN_TESTS = (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot, cst.In, cst.NotIn)


def tests_on_the_way(statement: cst.CSTNode, target: cst.CSTNode) -> list[cst.BaseExpression]:
    """The tests an ``if``/``elif`` chain evaluates before it runs the branch that holds
    ``target`` (``if a: ... elif b: <target>`` evaluates ``a`` and ``b``); empty for any
    other statement."""
    from hooklint.analysis.walk import contains

    tests: list[cst.BaseExpression] = []
    node = statement
    while isinstance(node, cst.If):
        tests.append(node.test)
        if contains(node.body, target):
            return tests
        node = node.orelse.body if isinstance(node.orelse, cst.Else) else node.orelse
    return tests if node is not None else []


def plain_value(node: cst.BaseExpression) -> bool:
    """A value whose evaluation does not fail in practice (:func:`_simple_value`)."""
    return _simple_value(node)


def _own_attribute(node: cst.BaseExpression) -> bool:
    """``self.model``: an attribute of the method's own object (set by the class)."""
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


def _module_chain(node: cst.BaseExpression) -> bool:
    """A name or one of the method's own attributes (``model``, ``self.model``)."""
    return (isinstance(node, cst.Name) and node.value not in CONSTANT_NAMES) or _own_attribute(node)


def _mode_switch(node: cst.BaseExpression) -> bool:
    """``model.eval()``, ``self.model.train(False)`` (:data:`~hooklint.analysis.vocabulary.MODE_SWITCHES`)."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in MODE_SWITCHES
        and _module_chain(node.func.value)
        and len(node.args) <= 1
        and all(a.keyword is None and a.star == "" and _simple_value(a.value) for a in node.args)
    )


def _torch_constant(node: cst.BaseExpression) -> bool:
    """``torch.tensor(0.0)``, ``torch.device("cpu")``: built from literals alone."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in ("tensor", "device")
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value == "torch"
        and len(node.args) == 1
        and node.args[0].keyword is None
        and isinstance(node.args[0].value, (cst.Integer, cst.Float, cst.SimpleString))
    )


def _walk_start(node: cst.BaseExpression) -> bool:
    """``next(model.parameters(), default)``: the first part of a module, or the default
    when it has none (a walk of a module's parts, :data:`~hooklint.analysis.vocabulary.MODULE_PARTS`,
    starts without failing)."""
    if not (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "next"
        and len(node.args) == 2
        and all(a.keyword is None and a.star == "" for a in node.args)
    ):
        return False
    walk, default = node.args[0].value, node.args[1].value
    return (
        isinstance(walk, cst.Call)
        and not walk.args
        and isinstance(walk.func, cst.Attribute)
        and walk.func.attr.value in MODULE_PARTS
        and _module_chain(walk.func.value)
        and _simple_value(default)
    )


def _skeleton(node: cst.ListComp | cst.SetComp | cst.DictComp) -> bool:
    """``{key: [] for key in keys}``, ``[[] for _ in range(n)]``: a comprehension that
    builds empty slots (:func:`_slot`; a dict's keys may be names), over names, literal
    displays or ``range(...)`` of names and literals, without conditions.  A name may
    hold an iterator whose next item runs code (a data loader); a skeleton of empty
    slots is built over the keys a function has at hand, not over one."""
    if isinstance(node, cst.DictComp):
        if not (_simple_value(node.key) and _slot(node.value)):
            return False
    elif not _slot(node.elt):
        return False
    loop = node.for_in
    while loop is not None:
        if loop.ifs or loop.asynchronous is not None or not _plain_iterable(loop.iter):
            return False
        loop = loop.inner_for_in
    return True


def _slot(node: cst.BaseExpression) -> bool:
    """An empty slot a skeleton holds: a literal other than a name (``None``, ``True``
    and ``False`` aside), a display of slots (``[]``, ``{}``, ``[0, 0]``), or a nested
    skeleton.  An item the loop takes (``[b for b in loader]``) is no slot: collecting
    the items runs the iterator."""
    if isinstance(node, cst.Name):
        return node.value in CONSTANT_NAMES
    if isinstance(node, _LITERALS):
        return True
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        return all(_slot(e.value) for e in node.elements)
    if isinstance(node, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _slot(e.key) and _slot(e.value) for e in node.elements)
    if isinstance(node, (cst.ListComp, cst.SetComp, cst.DictComp)):
        return _skeleton(node)
    return False


def _plain_iterable(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Name) or (
        isinstance(node, (cst.List, cst.Tuple, cst.Set)) and _simple_value(node)
    ):
        return True
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "range"
        and all(arg.keyword is None and not arg.star and _simple_value(arg.value) for arg in node.args)
    )


def _defaulted_getattr(node: cst.BaseExpression) -> bool:
    """``getattr(obj, "name", default)`` with ``obj`` a name or attribute chain and a
    plain default: an absent attribute gives the default instead of raising."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "getattr"):
        return False
    args = node.args
    return (
        len(args) == 3
        and all(arg.keyword is None and not arg.star for arg in args)
        and _dotted(args[0].value)
        and isinstance(args[1].value, cst.SimpleString)
        and _simple_value(args[2].value)
    )


def _dotted(node: cst.BaseExpression) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def _keeps_value(small: cst.BaseSmallStatement) -> bool:
    """``store.append(x)`` (any :data:`ITEM_ADDS` method but ``insert``; ``extend`` also
    of a list or tuple display, ``hs.extend([h1, h2])``) or ``store[k] = x`` with
    ``store`` a name or attribute chain and ``k``, ``x`` names or literals: bookkeeping
    that puts a value into a container."""
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        if not (
            isinstance(call.func, cst.Attribute)
            and call.func.attr.value in STORE_METHODS - {"insert"}
            and _dotted(call.func.value)
            and len(call.args) == 1
            and call.args[0].keyword is None
            and not call.args[0].star
        ):
            return False
        value = call.args[0].value
        if call.func.attr.value == "extend":
            return isinstance(value, (cst.List, cst.Tuple)) and all(
                isinstance(e, cst.Element) and _simple_value(e.value) for e in value.elements
            )
        return _simple_value(value)
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
        return (
            isinstance(target, cst.Subscript)
            and _dotted(target.value)
            and len(target.slice) == 1
            and isinstance(target.slice[0].slice, cst.Index)
            and _simple_value(target.slice[0].slice.value)
            and _simple_value(small.value)
        )
    return False


def cannot_raise(statement: cst.CSTNode) -> bool:
    """``pass``, ``break``, ``continue``, a docstring, a module's mode switch
    (``model.eval()``), an ``if`` whose test is a plain value and whose branches cannot
    raise, assignments of names, literals and other plain values
    (:func:`_simple_value`) to names, putting one into a container
    (:func:`_keeps_value`), and a ``def`` whose
    decorators are plain (dotted) names and whose defaults are names or literals
    (defining it runs none of its body); a ``try`` with a handler that catches
    everything (bare, ``Exception``, ``BaseException``) and re-raises nothing, and
    ``else``/``finally`` parts that cannot raise (the handler is written to absorb
    what its body raises: a failure inside it is a second one); and a ``with`` of
    torch's grad-mode contexts (``torch.no_grad()``) whose body cannot raise."""
    if isinstance(statement, cst.FunctionDef):
        return _plain_def(statement)
    if isinstance(statement, cst.Try):
        return _absorbs_everything(statement)
    if isinstance(statement, cst.With):
        return all(_grad_mode_context(item.item) for item in statement.items) and all(
            cannot_raise(s) for s in statement.body.body
        )
    if isinstance(statement, cst.If):
        return (
            _simple_value(statement.test)
            and all(cannot_raise(s) for s in statement.body.body)
            and (statement.orelse is None or all(cannot_raise(s) for s in _else_statements(statement.orelse)))
        )
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, (cst.Pass, cst.Break, cst.Continue)):
            continue
        if isinstance(small, cst.Expr) and _mode_switch(small.value):
            continue
        if isinstance(small, cst.Expr) and isinstance(
            small.value, (cst.SimpleString, cst.ConcatenatedString)
        ):
            continue
        if (
            isinstance(small, cst.Assign)
            and all(isinstance(t.target, cst.Name) for t in small.targets)
            and _simple_value(small.value)
        ):
            continue
        if (
            isinstance(small, cst.AnnAssign)
            and isinstance(small.target, cst.Name)
            and _simple_value(small.value)
        ):
            continue
        if _keeps_value(small):
            continue
        return False
    return True


def _else_statements(orelse: cst.If | cst.Else) -> list:
    """The statements of an ``elif`` (itself, one statement) or an ``else`` block."""
    return [orelse] if isinstance(orelse, cst.If) else list(orelse.body.body)


def _absorbs_everything(statement: cst.Try) -> bool:
    from hooklint.analysis.reachability import catches_everything

    if not any(catches_everything(h) for h in statement.handlers):
        return False
    if any(isinstance(n, cst.Raise) for h in statement.handlers for n in descendants(h.body)):
        return False
    rest = [statement.orelse, statement.finalbody]
    return all(cannot_raise(s) for part in rest if part is not None for s in part.body.body)


def _grad_mode_context(item: cst.BaseExpression) -> bool:
    """``torch.no_grad()``, ``torch.inference_mode()`` (without arguments): entering and
    leaving them switches a thread-local flag."""
    return (
        isinstance(item, cst.Call)
        and not item.args
        and isinstance(item.func, cst.Attribute)
        and isinstance(item.func.value, cst.Name)
        and item.func.value.value == "torch"
        and item.func.attr.value in GRAD_MODE_SWITCHES
    )


def _clock_reading(node: cst.BaseExpression) -> bool:
    """``time.monotonic()``, ``perf_counter()``... without arguments."""
    from hooklint.analysis.names import dotted_name

    return isinstance(node, cst.Call) and not node.args and dotted_name(node.func) in CLOCK_READINGS


def _null_context(item: cst.BaseExpression) -> bool:
    """``contextlib.nullcontext()`` / ``nullcontext()`` without arguments."""
    if not isinstance(item, cst.Call) or item.args:
        return False
    func = item.func
    if isinstance(func, cst.Attribute):
        return (
            func.attr.value == "nullcontext"
            and isinstance(func.value, cst.Name)
            and func.value.value == "contextlib"
        )
    return isinstance(func, cst.Name) and func.value == "nullcontext"


# -- a registration loop's lookups -----------------------------------------------------------
def looks_up_before_registering(
    levels: Sequence[Level], call: cst.Call, function, site: Site | None = None
) -> bool:
    """Whether a ``for`` loop on ``levels`` (a registration's statement path, the last
    level holding the registration ``call``; ``function``: the def it is in) looks up,
    on each pass and before the registration, what the registration uses by a value
    the loop was given, in a way that raises for a value that is not there: the hooks
    the earlier passes put on are then on when the exception leaves the loop.

    The loop iterates what the caller of a public function gave (a parameter or an
    attribute chain of one, their ``.items()``/``.keys()``/``.values()``, or ``sorted``
    and the like of those; a private helper's callers are the file's own code, which
    derives what it passes), not what the function derives (``model.named_modules()``,
    ``range(n)``, a literal) nor what its object keeps (``self.layer_names``: a class
    checks such names once, where it is given them).  The lookup is keyed by one of the loop's variables (or
    an f-string or sum built from one): for the module hooked, any call or subscript
    given it (``model.get_submodule(name)``, ``resolve(model, name)``,
    ``blocks[i]``: what finds a module by a name raises, or hands back ``None``,
    whose ``register_*`` raises); for the hook, a subscript, ``get_submodule``/
    ``get_parameter``/``get_buffer`` or a two-argument ``getattr``.  It sits in the
    registration itself, in a statement before it in the loop that binds what the
    registration reads (through other statements too), or in the test of an ``if``
    around it; an ``if`` that tests the variable and raises counts too.  A lookup
    whose value the loop checks for ``None`` (``if layer is None: continue``, ``if
    layer := find(name):``) answers ``None`` for an unknown key instead of raising,
    and a ``try`` inside the loop around the registration decides for itself (it may
    skip an unknown name)."""
    if function is None or _private(function.name.value):
        return False  # a private helper's callers are this file's code, which derives what it passes
    params = set(parameter_names(function.params))
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    if receiver is not None and site is not None and _comprehension_looks_up(site, receiver, params):
        return True
    for position, level in enumerate(levels[:-1]):
        loop = level.statement
        if not isinstance(loop, cst.For):
            continue
        keys = _given_keys(loop, params)
        inner = levels[position + 1 :]
        if not keys or any(isinstance(lv.statement, (cst.Try, cst.TryStar)) for lv in inner[:-1]):
            continue
        if receiver is not None and _keyed_lookup(receiver, keys, for_receiver=True):
            return True
        if any(_keyed_lookup(arg.value, keys) for arg in call.args):
            return True
        feeds_receiver = names_in(receiver)
        feeds_hook = names_in(call) - feeds_receiver
        # What runs before the registration on a pass, latest first: the statements
        # before it in each block, and the tests of the ``if``s it sits in.
        before: list[cst.CSTNode] = []
        for lv in inner:
            before += lv.block[: lv.index]
            if lv is not inner[-1] and isinstance(lv.statement, cst.If):
                before.append(lv.statement.test)
        # What the loop checks for ``None`` (``if layer is None: continue``, ``if
        # layer := find(name):``) comes from a lookup that answers ``None`` for a key it
        # does not know, rather than raising.
        checked: set[str] = set()
        for node in before:
            checked |= _none_checked(node.test if isinstance(node, cst.If) else node)
        for node in reversed(before):
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                continue  # defining the hook runs none of its body
            if isinstance(node, (cst.Try, cst.TryStar)) and node.handlers:
                continue  # a lookup its handler catches (``except KeyError: continue``)
            if _raises_for_key(node, keys):
                return True
            bound = chains_bound(node)
            if bound & checked:
                continue
            if bound & feeds_receiver:
                if _keyed_lookup(node, keys, for_receiver=True):
                    return True
                feeds_receiver |= names_in(node) - bound
            elif bound & feeds_hook:
                if _keyed_lookup(node, keys):
                    return True
                feeds_hook |= names_in(node) - bound
    return False


def _none_checked(test: cst.CSTNode) -> set[str]:
    """The name an ``if`` test checks for ``None`` or truth: ``x``, ``not x``, ``x is
    None``, ``x is not None``, ``x := ...``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    if isinstance(test, cst.Name):
        return {test.value}
    if isinstance(test, cst.NamedExpr):
        return target_names(test.target)
    if (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        return {test.left.value}
    return set()


def _comprehension_looks_up(site: Site, receiver: cst.BaseExpression, params: set[str]) -> bool:
    """The registration is the element of a comprehension over what the caller gave
    (``[model.get_submodule(n).register_forward_hook(fn) for n in names]``) and its
    ``receiver`` looks the module up by the comprehension's variable; a comprehension
    ``if`` that tests the variable (``if n in modules``) is taken for a guard."""
    for frame in site.frames:
        if frame.kind != "comp":
            continue
        for_in = getattr(frame.node, "for_in", None)
        while for_in is not None:
            keys = _given_keys(for_in, params)
            guarded = any(names_in(clause.test) & keys for clause in for_in.ifs)
            if keys and not guarded and _keyed_lookup(receiver, keys, for_receiver=True):
                return True
            for_in = for_in.inner_for_in
    return False


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _given_keys(loop: cst.For | cst.CompFor, params: set[str]) -> set[str]:
    """The loop's variables that take the values of something the function was given
    (empty when it iterates anything else)."""
    iterable, target = loop.iter, loop.target
    while isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name):
        wrapper = iterable.func.value
        if wrapper not in ITERATING_BUILTINS or not iterable.args or iterable.args[0].keyword:
            return set()
        if wrapper == "enumerate":  # the count is no given value
            if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
                return set()
            target = target.elements[1].value
        iterable = iterable.args[0].value
    if (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Attribute)
        and iterable.func.attr.value in ("items", "keys", "values")
        and not iterable.args
    ):
        iterable = iterable.func.value
    root = iterable
    while isinstance(root, cst.Attribute):
        root = root.value
    if not (isinstance(root, cst.Name) and root.value in params and root.value not in ("self", "cls")):
        return set()
    return target_names(target)


def _looks_up_by_key(call: cst.Call, keys: set[str]) -> bool:
    args = [arg for arg in call.args if not arg.star]
    keyed = [arg for arg in args if _from_key(arg.value, keys)]
    if not keyed:
        return False
    func = call.func
    if isinstance(func, cst.Name) and func.value == "getattr":
        return len(args) == 2 and keyed[0] is args[1]
    if isinstance(func, cst.Attribute):
        return not (names_in(func.value) & keys)  # ``model.find(name)``, not ``name.strip()``
    others = [arg for arg in args if arg not in keyed]
    return any(not isinstance(arg.value, (cst.SimpleString, cst.Integer, cst.Float)) for arg in others)


def _keyed_lookup(node: cst.CSTNode, keys: set[str], *, for_receiver: bool = False) -> bool:
    """A lookup by one of ``keys`` (or a value built from one) in ``node`` (not in a
    nested ``def`` or ``lambda``) that raises for a key that is not there: a subscript
    by it, ``get_submodule``/``get_parameter``/``get_buffer`` or a two-argument
    ``getattr`` of it; ``for_receiver`` (what finds the module hooked): any call given
    it beside what it looks in (``self.find(name)``, ``resolve(model, name)``), not a
    call on the key itself or of it alone (``unwrap(module)``, ``getattr(block,
    "attn")``: the loop's object, not a name looked up)."""
    for current in [node, *descendants(node, into_functions=False)]:
        if isinstance(current, cst.Subscript):
            if len(current.slice) == 1 and _from_key(getattr(current.slice[0].slice, "value", None), keys):
                return True
        elif isinstance(current, cst.Call):
            if for_receiver and _looks_up_by_key(current, keys):
                return True
            func, args = current.func, current.args
            if not args or args[0].keyword:
                continue
            if isinstance(func, cst.Attribute) and func.attr.value in NAME_LOOKUP_METHODS:
                if _from_key(args[0].value, keys):
                    return True
            elif isinstance(func, cst.Name) and func.value == "getattr" and len(args) == 2:
                if _from_key(args[1].value, keys):
                    return True
    return False


def _from_key(node: cst.BaseExpression | None, keys: set[str]) -> bool:
    """``node`` is one of ``keys``, or an f-string or ``+`` of strings built from one."""
    if isinstance(node, cst.Name):
        return node.value in keys
    if isinstance(node, cst.FormattedString):
        return any(
            isinstance(part, cst.FormattedStringExpression) and _from_key(part.expression, keys)
            for part in node.parts
        )
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _from_key(node.left, keys) or _from_key(node.right, keys)
    return False


def _raises_for_key(statement: cst.CSTNode, keys: set[str]) -> bool:
    """``if <test of a key>: raise ...``."""
    return isinstance(statement, cst.If) and bool(names_in(statement.test) & keys) and raises_first(statement)


def _plain_def(node: cst.FunctionDef) -> bool:
    """Decorators that are (dotted) names, defaults that are names or literals
    (annotations are not counted: evaluating one, where it is not deferred, does not
    fail in practice)."""
    params = node.params
    defaults = [p.default for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
    return all(_dotted(d.decorator) for d in node.decorators) and all(
        d is None or _simple_value(d) for d in defaults
    )


def has_multiline_string(facts: ModuleFacts, statements: Sequence[cst.CSTNode]) -> bool:
    """Re-indenting would change a triple-quoted string that spans lines."""
    for statement in statements:
        code = facts.code(statement)
        if ('"""' in code or "'''" in code) and "\n" in code:
            return True
    return False


# -- names ---------------------------------------------------------------------------------------
def names_in(node: cst.CSTNode | None) -> set[str]:
    """Names read in an expression (the ``b`` of ``a.b`` left out)."""
    found: set[str] = set()
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.add(current.value)
        elif isinstance(current, cst.Attribute):
            stack.append(current.value)
        else:
            stack.extend(child_nodes(current))
    return found


def _fresh_value(value: cst.BaseExpression, varying: set[str], imports: dict[str, str]) -> bool:
    """Whether an assigned value is new on every pass: it reads a varying name, or it
    is a call to a ``torch.*`` factory (a tensor created right here)."""
    if names_in(value) & varying:
        return True
    if isinstance(value, cst.Call):
        from hooklint.analysis.names import dotted_name, resolve

        callee = resolve(dotted_name(value.func), imports) or ""
        return callee.startswith("torch.") and not callee.startswith("torch.nn.")
    return False


def varying_names(facts: ModuleFacts, scope: cst.CSTNode, seed: set[str]) -> set[str]:
    """Names that hold something new on each pass through ``scope`` (a loop or a
    function body): ``seed`` (the loop target, the function's argument names) and the
    names bound inside from them, or from a ``torch.*`` factory call."""
    varying = set(seed)
    # Only the binding nodes matter, and ``type(n) is`` rather than ``isinstance``:
    # these classes have no subclasses, and libcst's go through ABCMeta when it fails.
    nodes = [n for n in descendants(scope, into_functions=False) if type(n) in _BINDING]
    for _ in range(2):
        for node in nodes:
            kind = type(node)
            if kind is cst.Assign:
                if _fresh_value(node.value, varying, facts.imports):
                    for target in node.targets:
                        varying |= target_names(target.target)
            elif kind is cst.AnnAssign:
                if node.value is not None and _fresh_value(node.value, varying, facts.imports):
                    varying |= target_names(node.target)
            elif kind is cst.For and node is not scope or kind is cst.CompFor:
                if names_in(node.iter) & varying:
                    varying |= target_names(node.target)
            elif kind is cst.WithItem:
                if node.asname is not None and _fresh_value(node.item, varying, facts.imports):
                    varying |= target_names(node.asname.name)
            elif kind is cst.NamedExpr:
                if _fresh_value(node.value, varying, facts.imports):
                    varying |= target_names(node.target)
    return varying


_BINDING = frozenset({cst.Assign, cst.AnnAssign, cst.For, cst.CompFor, cst.WithItem, cst.NamedExpr})


# -- handles and removals --------------------------------------------------------------------
def container_of(target: str) -> str:
    """The container a subscripted target is an item of: ``self._handles`` for
    ``self._handles[name]`` (the target itself when it is no subscript)."""
    return target.split("[", 1)[0]


def same_function(a: Site, b: Site) -> bool:
    return a.function is b.function and a.is_module_level == b.is_module_level


def removals_of(facts: ModuleFacts, target: str) -> list[CallSite]:
    """``target.remove()`` calls, ``for h in target: h.remove()`` loops, and calls of a
    helper that removes ``target`` (``remove_hooks(target)``, ``self.remove_hooks()``
    when that method removes ``self.*`` handles)."""
    found = list(facts.removals.get(target, ()))
    for call in facts.calls:
        if call.callee and "remove" in call.callee.rsplit(".", 1)[-1].lower() and call.attr != "remove":
            if any(facts.code(a.value) == target for a in call.node.args):
                found.append(call)
    if target.startswith("self."):
        removing_methods = {
            r.site.function.name.value
            for key, calls in facts.removals.items()
            if key == target or key.startswith(target + "[")
            for r in calls
            if r.site.function is not None
        }
        for name in removing_methods:
            for call in facts.calls:
                if call.callee == f"self.{name}" and call not in found:
                    found.append(call)
    return found


def word_count(code: str, name: str) -> int:
    """Occurrences of a name (``h``, ``self.h``) as a whole word, not as ``x.h``."""
    if name and name not in code:
        return 0  # (the rules ask this of every guard and name: most hold none)
    return len(_whole_word(name).findall(code))


@lru_cache(maxsize=4096)
def _whole_word(name: str) -> re.Pattern:
    return re.compile(r"(?<![\w.])" + re.escape(name) + r"(?!\w)")


def enclosing_ifs(site: Site) -> list[cst.If]:
    out = []
    for frame in reversed(site.frames):
        if frame.kind in ("def", "lambda", "class"):
            break
        if frame.kind == "if":
            out.append(frame.node)
    return out  # type: ignore[return-value]


def is_contextmanager(facts: ModuleFacts, function: cst.FunctionDef | None) -> bool:
    if function is None:
        return False
    info = facts.function_for(function)
    return info is not None and any(d in CONTEXTMANAGERS for d in info.decorators)


def registration_statement_alone(registration: Registration) -> bool:
    """The registration is the whole statement: ``h = reg(...)`` or ``reg(...)``."""
    statement = registration.site.statement
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if isinstance(small, cst.Expr):
        return small.value is registration.call
    if isinstance(small, cst.Assign):
        return small.value is registration.call and len(small.targets) == 1
    return False


def only_registers(facts: ModuleFacts, statement: cst.CSTNode) -> bool:
    """The statement is one registration that keeps its handle: ``h = reg(...)``,
    ``hs.append(reg(...))``."""
    for registration in facts.registrations_at(statement):
        if registration_statement_alone(registration) and registration.handle.role == "bound":
            return True
        if (
            registration.handle.role == "appended"
            and isinstance(statement, cst.SimpleStatementLine)
            and len(statement.body) == 1
        ):
            small = statement.body[0]
            value = getattr(small, "value", None)
            if (
                getattr(value, "args", None)
                and len(value.args) == 1
                and value.args[0].value is registration.call
            ):
                return True
    return False


def stored_in(facts: ModuleFacts, registration: Registration) -> list[str]:
    """Where the handle ends up: its bound target, and for a local name, the
    containers it is then appended to in the same function (``h = reg(...);
    self._hooks.append(h)``)."""
    use = registration.handle
    targets = list(use.final.targets if use.role == "collected" else use.targets)
    if use.role == "bound" and len(targets) == 1 and targets[0].isidentifier():
        name = targets[0]
        for call in facts.calls:
            if call.attr in STORE_METHODS and same_function(call.site, registration.site):
                if any(facts.code(a.value) == name for a in call.node.args):
                    targets.append(facts.code(call.node.func.value))  # type: ignore[attr-defined]
    return targets
