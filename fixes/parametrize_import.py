"""Fixes for HL012, HL013, HL014 and HL015 (hook semantics, second half).

Each function returns edit primitives (:mod:`hooklint.fixes.edits`) or an empty list
when no fix can be built; none of them decides whether code is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import libcst as cst
from hooklint.fixes.edits import DeleteLines, InsertAfter, Replace, indentation_of

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.module_kinds import is_known_module
from hooklint.analysis.walk import descendants
from hooklint.violation import Edit, Location


@dataclass(frozen=True)
class InsertStatementBefore:
    """Insert a statement on its own line before ``node`` (a statement), at its indentation."""

    node: cst.CSTNode
    text: str

    def resolve(self, at) -> list[Edit]:
        start = at.start(self.node)
        indent = indentation_of(at, self.node)
        return [Edit(start, start, f"{self.text}\n{indent}")]


@dataclass(frozen=True)
class ReplaceStatementWithLines:
    """Replace a statement's text with several statements, one per line, at its indentation."""

    node: cst.CSTNode
    lines: tuple[str, ...]

    def resolve(self, at) -> list[Edit]:
        indent = indentation_of(at, self.node)
        return [Edit(at.start(self.node), at.end(self.node), ("\n" + indent).join(self.lines))]


@dataclass(frozen=True)
class DeleteStatementLine:
    """Delete the whole line(s) of a simple statement line."""

    node: cst.CSTNode

    def resolve(self, at) -> list[Edit]:
        first, last = at.start(self.node).line, at.end(self.node).line
        return [Edit(Location(first, 1), Location(last + 1, 1), "")]


# -- HL014 -----------------------------------------------------------------------------
def call_module_instead_of_forward(facts: ModuleFacts, call: cst.Call, class_def: cst.ClassDef | None) -> list:
    """``x.forward(a)`` → ``x(a)``, only where ``x`` is known, in this file, to be an
    ``nn.Module`` (``class_def``: the class the call is in): ``x(a)`` runs
    ``Module.__call__``, which runs ``forward``; on anything else it runs whatever
    ``__call__`` is (or nothing), and ``self(...)`` in a class that is no module may
    recurse."""
    func = call.func
    if not isinstance(func, cst.Attribute) or not is_known_module(facts, func.value, class_def):
        return []
    return [Replace(func, facts.code(func.value))]


# -- HL012 -----------------------------------------------------------------------------
def _positional_params(node: cst.FunctionDef | cst.Lambda) -> list[cst.Param]:
    return list(node.params.posonly_params) + list(node.params.params)


def accept_both_arities(node: cst.FunctionDef | cst.Lambda, skip: int) -> list:
    """``def hook(module, args, kwargs, output):`` → ``def hook(module, args, *rest):``
    plus a first statement that unpacks ``rest`` whether torch passed three arguments
    (the always_call exception path) or four.  ``skip`` counts leading bound params
    (``self``)."""
    if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock):
        return []
    params = node.params
    positional = _positional_params(node)
    if params.posonly_params or params.kwonly_params or not isinstance(params.star_arg, cst.MaybeSentinel):
        return []
    if params.star_kwarg is not None or len(positional) != skip + 4:
        return []
    if any(p.default is not None for p in positional):
        return []
    kwargs_param, output_param = positional[skip + 2], positional[skip + 3]
    kwargs, output = kwargs_param.name.value, output_param.name.value
    rest = "rest" if "rest" not in (p.name.value for p in positional) else "_hook_rest"
    first = node.body.body[0]
    body_statements = node.body.body
    anchor = first
    if _is_docstring(first) and len(body_statements) > 1:
        anchor = body_statements[1]
    unpack = (
        f"{kwargs}, {output} = ({rest}[0], {rest}[1]) if len({rest}) == 2 else ({{}}, {rest}[0])"
        "  # torch 2.6-2.13 call always_call hooks with 3 arguments on the exception path"
    )
    edits: list = [Replace(kwargs_param.name, f"*{rest}")]
    # Drop ", output" (the comma after kwargs up to the end of the output param).
    edits.append(_RemoveParamAfter(kwargs_param, output_param))
    if anchor is first and _is_docstring(first):
        # a docstring-only body: put the unpacking after it
        edits.append(_InsertStatementAfter(first, unpack))
    else:
        edits.append(InsertStatementBefore(anchor, unpack))
    return edits


@dataclass(frozen=True)
class _RemoveParamAfter:
    """Delete from the end of ``kept``'s name/annotation to the end of ``removed``."""

    kept: cst.Param
    removed: cst.Param

    def resolve(self, at) -> list[Edit]:
        start_node = self.kept.annotation if self.kept.annotation is not None else self.kept.name
        return [Edit(at.end(start_node), at.end(self.removed.annotation or self.removed.name), "")]


@dataclass(frozen=True)
class _InsertStatementAfter:
    node: cst.CSTNode
    text: str

    def resolve(self, at) -> list[Edit]:
        end = at.end(self.node)
        return [Edit(end, end, f"\n{indentation_of(at, self.node)}{self.text}")]


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


# -- HL013 -----------------------------------------------------------------------------
PARAMETRIZE = "torch.nn.utils.parametrize"


def import_parametrize_module(
    facts: ModuleFacts,
    statement: cst.SimpleStatementLine,
    node: cst.ImportFrom,
    stale: dict[str, str],
    scope: cst.CSTNode,
    module_name: str,
    already_imported: bool = False,
) -> tuple[list, str | None]:
    """Replace the stale names by attributes of the module.

    ``stale`` maps each bound name to the attribute it stands for (``{"enabled":
    "_cache_enabled"}``); ``scope`` is where the import binds them (the module or one
    def).  Returns the edits and, when no fix can be built, the reason."""
    keep = [a for a in node.names if _bound(a) not in stale]  # type: ignore[union-attr]
    if len(statement.body) != 1:
        return [], "the import shares its line with other statements"
    lines = []
    if keep:
        names = ", ".join(facts.code(a.name) + (f" as {_bound(a)}" if a.asname else "") for a in keep)
        lines.append(f"from {PARAMETRIZE} import {names}")
    if already_imported:
        pass
    elif module_name == "parametrize":
        lines.append("from torch.nn.utils import parametrize")
    else:
        lines.append(f"import {PARAMETRIZE} as {module_name}")
    edits: list = [ReplaceStatementWithLines(node, tuple(lines)) if lines else DeleteLines(statement)]
    shadowed: list[str] = []
    for name_node, kind in _name_uses(scope, set(stale)):
        if kind == "use":
            edits.append(Replace(name_node, f"{module_name}.{stale[name_node.value]}"))
        elif kind == "global":
            edits.extend(_drop_from_global(name_node, set(stale)))
        elif kind == "global_line":
            edits.append(DeleteLines(name_node))
        else:
            shadowed.append(name_node.value)
    if shadowed:
        return [], f"`{shadowed[0]}` is also bound locally"
    return edits, None


def _bound(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return alias.name.value if isinstance(alias.name, cst.Name) else ""


def _name_uses(scope: cst.CSTNode, names: set[str]) -> Iterable[tuple[cst.CSTNode, str]]:
    """Every Name in ``scope`` that reads or writes one of ``names``: ``use`` (to be
    replaced by the attribute), ``global`` (a ``global`` statement naming it: the node
    is the Global), ``shadow`` (a local binding that is not declared global)."""
    skipped: set[int] = set()
    globals_in: dict[int, set[str]] = {}
    for node in descendants(scope):
        if isinstance(node, cst.Attribute):
            skipped.add(id(node.attr))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            skipped.add(id(node.keyword))
        elif isinstance(node, (cst.ImportFrom, cst.Import)):
            for sub in descendants(node):
                skipped.add(id(sub))
        elif isinstance(node, cst.Param):
            if node.name.value in names:
                yield node.name, "shadow"
            skipped.add(id(node.name))
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            skipped.add(id(node.name))
            if isinstance(node, cst.FunctionDef):
                declared = set()
                for sub in descendants(node.body, into_functions=False):
                    if isinstance(sub, cst.Global):
                        declared |= {n.name.value for n in sub.names}
                globals_in[id(node)] = declared
                for sub in descendants(node.body, into_functions=False):
                    target = None
                    if isinstance(sub, (cst.AssignTarget,)) or isinstance(sub, (cst.AugAssign, cst.AnnAssign)):
                        target = sub.target
                    if isinstance(target, cst.Name) and target.value in names and target.value not in declared:
                        yield target, "shadow"
        elif (
            isinstance(node, cst.SimpleStatementLine)
            and len(node.body) == 1
            and isinstance(node.body[0], cst.Global)
            and all(n.name.value in names for n in node.body[0].names)
        ):
            yield node, "global_line"
            for n in node.body[0].names:
                skipped.add(id(n.name))
            skipped.add(id(node.body[0]))
        elif isinstance(node, cst.Global) and id(node) not in skipped:
            if any(n.name.value in names for n in node.names):
                yield node, "global"
            for n in node.names:
                skipped.add(id(n.name))
        elif isinstance(node, cst.Name) and node.value in names and id(node) not in skipped:
            yield node, "use"


def _drop_from_global(node: cst.Global, names: set[str]) -> list:
    left = [n.name.value for n in node.names if n.name.value not in names]
    if left:
        return [Replace(node, "global " + ", ".join(left))]
    return [Replace(node, "pass")]


# -- HL015 -----------------------------------------------------------------------------
def add_with_kwargs(
    facts: ModuleFacts,
    registration_call: cst.Call,
    hook_node: cst.FunctionDef | cst.Lambda,
    args_param: cst.Param,
    index_nodes: list[cst.Subscript],
    kwargs_name: str,
) -> list:
    """Register with ``with_kwargs=True``, add a ``kwargs`` parameter after the args
    parameter, and read ``args[0]`` from the first keyword argument when the module was
    called by keyword."""
    last = registration_call.args[-1]
    edits: list = [InsertAfter(last.value, ", with_kwargs=True")]
    anchor = args_param.annotation if args_param.annotation is not None else args_param.name
    edits.append(InsertAfter(anchor, f", {kwargs_name}"))
    name = args_param.name.value
    for subscript in index_nodes:
        edits.append(
            Replace(subscript, f"({name}[0] if {name} else next(iter({kwargs_name}.values())))")
        )
    return edits
