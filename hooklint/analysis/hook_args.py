"""How a forward (pre-)hook reads its positional-arguments parameter (HL015).

:func:`positional_reads` finds ``args[i]`` subscripts and ``x, = args`` unpackings
in a hook's body, unless the hook checks ``args`` first: ``if not args: return``,
``if len(args) == 0``, a compound guard (``if not args or args[0] is None``), a
conditional expression (``args[0] if args else ...``), ``assert args``.
"""

from __future__ import annotations

import libcst as cst

from hooklint.analysis.walk import descendants


def _is_name(node: cst.CSTNode, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def index_value(sub: cst.Subscript) -> int | None:
    """``0`` for ``args[0]``, ``-1`` for ``args[-1]``, None for anything else."""
    if len(sub.slice) != 1:
        return None
    index = sub.slice[0].slice
    if not isinstance(index, cst.Index):
        return None
    value = index.value
    if isinstance(value, cst.Integer):
        return int(value.value, 0)
    if (
        isinstance(value, cst.UnaryOperation)
        and isinstance(value.operator, cst.Minus)
        and isinstance(value.expression, cst.Integer)
    ):
        return -int(value.expression.value, 0)
    return None


def checks_emptiness(test: cst.BaseExpression, name: str) -> bool:
    """The test looks at ``name`` itself (``args``, ``not args``, ``len(args)``,
    ``args == ()``, in any ``and``/``or``), not only at its items."""
    items: set[int] = set()
    for node in [test, *descendants(test)]:
        if isinstance(node, cst.Subscript):
            items.add(id(node.value))
        elif isinstance(node, cst.Attribute):
            items.add(id(node.value))  # args.count(...) is no emptiness check
        elif isinstance(node, cst.Name) and node.value == name and id(node) not in items:
            return True
    return False


def positional_reads(
    node: cst.FunctionDef | cst.Lambda, name: str
) -> tuple[list[cst.Subscript], list[cst.CSTNode]]:
    """``args[i]`` subscripts and ``x, = args`` unpackings, unless the hook checks ``args`` first."""
    indexed: list[cst.Subscript] = []
    unpacked: list[cst.CSTNode] = []
    body = node.body
    for sub in descendants(body) if isinstance(body, cst.CSTNode) else ():
        if isinstance(sub, cst.Subscript) and _is_name(sub.value, name):
            if index_value(sub) is not None:
                indexed.append(sub)
        elif isinstance(sub, cst.Assign) and _is_name(sub.value, name):
            if any(isinstance(t.target, (cst.Tuple, cst.List)) for t in sub.targets):
                unpacked.append(sub)
        elif (
            isinstance(sub, cst.Call)
            and _is_name(sub.func, "len")
            and sub.args
            and _is_name(sub.args[0].value, name)
        ):
            return [], []
        elif isinstance(sub, (cst.If, cst.IfExp, cst.While, cst.Assert)) and checks_emptiness(sub.test, name):
            return [], []
    return indexed, unpacked


def uses_name(node: cst.FunctionDef | cst.Lambda, name: str) -> bool:
    if any(p.name.value == name for p in node.params.params):
        return True
    return any(isinstance(n, cst.Name) and n.value == name for n in descendants(node.body))


def param_named(node: cst.FunctionDef | cst.Lambda, name: str) -> cst.Param | None:
    for param in list(node.params.posonly_params) + list(node.params.params):
        if param.name.value == name:
            return param
    return None


def has_star_args(node: cst.FunctionDef | cst.Lambda) -> bool:
    return isinstance(node.params.star_arg, cst.Param)
