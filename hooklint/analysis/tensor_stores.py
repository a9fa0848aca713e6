"""Where a hook stores a tensor it received somewhere that outlives the call (HL006).

A *store* is ``X.append(e)`` / ``X[k] = e`` / ``X.attr = e`` / ``X.update({k: e})``...
on shared state (an attribute, a closure or global container, the hooked module), and
``e`` *carries the graph* when it is a received tensor (the output, an element of the
args, a gradient) or a view/copy of one that keeps its ``grad_fn`` (``o[0]``,
``o.float()``, ``o.cpu()``...), directly or through a local alias, and nothing on the
way detaches it (``.detach()``, ``.data``, ``.item()``, ``.shape``...).

Only the hook's own body is read (nested defs are not entered).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from hooklint.analysis.hook_roles import TUPLE_ROLES, parameter_roles
from hooklint.analysis.names import dotted_name
from hooklint.analysis.vocabulary import STORED_ARGUMENT
from hooklint.analysis.walk import descendants

if TYPE_CHECKING:
    from hooklint.analysis.facts import Registration

#: Roles whose tensors carry the forward graph.
GRAPH_ROLES = frozenset({"output", "args"})

#: Methods that return a tensor still attached to the input's graph.
_GRAPH_KEEPING = frozenset(
    {
        "clone",
        "float",
        "half",
        "bfloat16",
        "double",
        "to",
        "cpu",
        "cuda",
        "view",
        "view_as",
        "reshape",
        "reshape_as",
        "contiguous",
        "squeeze",
        "unsqueeze",
        "flatten",
        "permute",
        "transpose",
        "t",
        "narrow",
        "select",
        "expand",
        "expand_as",
        "mean",
        "sum",
        "abs",
        "pow",
        "norm",
        "softmax",
        "log_softmax",
        "type",
        "type_as",
        "square",
        "sqrt",
        "exp",
        "mul",
        "add",
        "sub",
        "div",
        "matmul",
        "__getitem__",
        "squeeze_",
        "unsqueeze_",
        "sigmoid",
        "tanh",
        "relu",
        "max",
        "min",
        "amax",
        "amin",
        "std",
        "var",
        "masked_fill",
        "index_select",
        "gather",
    }
)
_GRAPH_KEEPING_FUNCTIONS = frozenset(
    {
        "torch.cat",
        "torch.stack",
        "torch.clone",
        "torch.flatten",
        "torch.squeeze",
        "torch.mean",
        "tuple",
        "list",
    }
)
#: Attributes that are plain data (or already detached).
_SAFE_ATTRIBUTES = frozenset(
    {
        "data",
        "shape",
        "dtype",
        "device",
        "ndim",
        "requires_grad",
        "is_cuda",
        "grad_fn",
        "layout",
        "is_leaf",
        "names",
    }
)


_TENSOR = "tensor"
_NONE: frozenset = frozenset()
_TENSOR_SET = frozenset({_TENSOR})
_TUPLE_SET = frozenset({"tuple"})


@dataclass(frozen=True)
class TensorStore:
    """One store of a graph-carrying value: ``node`` is the call or assignment,
    ``value`` the stored expression, ``fixable`` whether appending ``.detach()`` to
    ``value`` is a sensible fix, ``target`` where it goes (``self.acts``, ``feats``,
    ``self.acts[name]``)."""

    node: cst.CSTNode
    value: cst.BaseExpression
    fixable: bool
    target: cst.BaseExpression | None = None


def tensor_stores(registration: Registration, graph_roles=GRAPH_ROLES) -> list[TensorStore]:
    hook = registration.hook
    if hook is None:
        return []
    roles = parameter_roles(registration)
    tensors = {name: role for name, role in roles.items() if role in graph_roles}
    if not tensors:
        return []
    node = hook.node
    module_param = next((n for n, r in roles.items() if r == "module"), None)
    nodes: list[cst.CSTNode] = list(descendants(node.body, into_functions=False))
    if isinstance(node, cst.Lambda):
        nodes.insert(0, node.body)
    analysis = _Body(tensors, module_param, nodes, hook.via == "method", set(roles) - {module_param})
    top = (
        list(node.body.body)
        if isinstance(node, cst.FunctionDef) and isinstance(node.body, cst.IndentedBlock)
        else []
    )
    return [store for store in analysis.stores() if analysis.carries_at(store, top)]


class _Body:
    def __init__(self, tensors: dict[str, str], module_param, nodes, is_method: bool, params: set) -> None:
        self.params = params
        self.tensors = tensors
        self.module_param = module_param
        self.nodes = nodes
        self.aliases: dict[str, list[cst.BaseExpression]] = {}
        self.declared: set[str] = set()
        self.loop_targets: dict[str, cst.BaseExpression] = {}
        self.fixed: dict[str, frozenset] = {}  # a name's kinds while one binding is read
        for current in nodes:
            if isinstance(current, cst.Assign):
                for target in current.targets:
                    if isinstance(target.target, cst.Name):
                        self.aliases.setdefault(target.target.value, []).append(current.value)
                    elif isinstance(target.target, (cst.Tuple, cst.List)):
                        for element in target.target.elements:
                            if isinstance(element.value, cst.Name):
                                self.aliases.setdefault(element.value.value, []).append(
                                    cst.Subscript(
                                        current.value, [cst.SubscriptElement(cst.Index(cst.Integer("0")))]
                                    )
                                )
            elif isinstance(current, (cst.AnnAssign, cst.AugAssign)) and isinstance(current.target, cst.Name):
                if current.value is not None:
                    self.aliases.setdefault(current.target.value, []).append(current.value)
            elif isinstance(current, (cst.Global, cst.Nonlocal)):
                self.declared.update(n.name.value for n in current.names)
            elif isinstance(current, (cst.For, cst.CompFor)) and isinstance(current.target, cst.Name):
                self.loop_targets[current.target.value] = current.iter
                self.aliases.setdefault(current.target.value, [])
            elif isinstance(current, cst.WithItem) and current.asname is not None:
                if isinstance(current.asname.name, cst.Name):
                    self.aliases.setdefault(current.asname.name.value, [])

    # -- straight-line rebinding ------------------------------------------------------
    def carries_at(self, store: TensorStore, top: list[cst.BaseStatement]) -> bool:
        """Whether a stored name still carries the graph where it is stored, when the
        hook rebinds it only in top-level ``name = value`` statements: the bindings
        before the store, in order, decide (``x = x[0]``, then ``x = x.detach()``:
        stored detached), not every binding the name has anywhere in the body."""
        value = store.value
        if not isinstance(value, cst.Name) or not top:
            return True
        name = value.value
        where = _top_index(top, store.node)
        bindings = _top_bindings(top, name)
        if where is None or bindings is None or name in self.loop_targets:
            return True
        if len(bindings) != len(self.aliases.get(name, [])):
            return True  # bound somewhere else too (a branch, a tuple target)
        before = [v for index, v in bindings if index < where]
        if not before:
            return True
        role = self.tensors.get(name)
        current = _NONE if role is None else (_TUPLE_SET if role in TUPLE_ROLES else _TENSOR_SET)
        for bound in before:
            self.fixed[name] = current
            try:
                current = self.kinds(bound)
            finally:
                del self.fixed[name]
        return _TENSOR in current

    # -- does an expression carry a received tensor's graph? -----------------------
    def carries(self, expr: cst.BaseExpression) -> bool:
        """Whether ``expr`` holds a received tensor (or a graph-keeping view of one).
        A whole args tuple stored as it is does not count: it may hold non-tensors, and
        storing it is the one-shot "capture the inputs to replay them" idiom."""
        return _TENSOR in self.kinds(expr)

    def kinds(self, expr: cst.BaseExpression, depth: int = 0, seen: frozenset = frozenset()) -> frozenset:
        """``{"tensor"}``, ``{"tuple"}`` (a whole received tuple), both, or empty."""
        if depth > 8:
            return _NONE
        if isinstance(expr, cst.Name):
            name = expr.value
            if name in self.fixed:
                return self.fixed[name]
            if name in seen or (name not in self.loop_targets and name not in self.aliases):
                # ``output = output[0]``: inside its own rebinding the name is the original.
                role = self.tensors.get(name)
                if role is None:
                    return _NONE
                return _TUPLE_SET if role in TUPLE_ROLES else _TENSOR_SET
            inner = seen | {name}
            if name in self.loop_targets:
                return _TENSOR_SET if self.kinds(self.loop_targets[name], depth + 1, inner) else _NONE
            result: frozenset = _NONE
            for value in self.aliases[name]:
                result |= self.kinds(value, depth + 1, inner)
            return result
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in _SAFE_ATTRIBUTES:
                return _NONE
            return _TENSOR_SET if self.kinds(expr.value, depth + 1, seen) else _NONE
        if isinstance(expr, cst.Subscript):
            inner_kinds = self.kinds(expr.value, depth + 1, seen)
            if not inner_kinds:
                return _NONE
            sliced = any(isinstance(e.slice, cst.Slice) for e in expr.slice)
            return inner_kinds if sliced else _TENSOR_SET
        if isinstance(expr, cst.Call):
            func = expr.func
            callee = dotted_name(func)
            if callee in ("tuple", "list"):
                result = _NONE
                for a in expr.args:
                    result |= self.kinds(a.value, depth + 1, seen)
                return result
            if callee in _GRAPH_KEEPING_FUNCTIONS:
                return _TENSOR_SET if any(self.kinds(a.value, depth + 1, seen) for a in expr.args) else _NONE
            if isinstance(func, cst.Attribute) and func.attr.value in _GRAPH_KEEPING:
                return self.kinds(func.value, depth + 1, seen)
            return _NONE
        parts: list[cst.BaseExpression] = []
        if isinstance(expr, cst.IfExp):
            parts = [expr.body, expr.orelse]
        elif isinstance(expr, (cst.Tuple, cst.List)):
            parts = [e.value for e in expr.elements if isinstance(e, cst.Element)]
        elif isinstance(expr, cst.Dict):
            parts = [e.value for e in expr.elements if isinstance(e, cst.DictElement)]
        elif isinstance(expr, cst.BinaryOperation):
            parts = [expr.left, expr.right]
        elif isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
            elt, target = expr.elt, expr.for_in.target
            if isinstance(elt, cst.Name) and isinstance(target, cst.Name) and elt.value == target.value:
                return _TENSOR_SET if self.kinds(expr.for_in.iter, depth + 1, seen) else _NONE
        result = _NONE
        for part in parts:
            result |= self.kinds(part, depth + 1, seen)
        return result

    def fixable(self, expr: cst.BaseExpression, seen: frozenset = frozenset()) -> bool:
        """Appending ``.detach()`` makes sense: a tensor-valued name/attribute/item/call."""
        if isinstance(expr, cst.Name):
            name = expr.value
            if name in seen or name not in self.aliases:
                return self.tensors.get(name) not in TUPLE_ROLES and name in self.tensors
            if name in self.loop_targets:
                return True
            inner = seen | {name}
            return all(self.fixable(v, inner) or not self.carries(v) for v in self.aliases[name])
        if isinstance(expr, cst.Call):
            callee = dotted_name(expr.func)
            if callee in ("tuple", "list"):
                return False
            return isinstance(expr.func, cst.Attribute) or callee in _GRAPH_KEEPING_FUNCTIONS
        if isinstance(expr, cst.IfExp):
            return self.fixable(expr.body, seen) and self.fixable(expr.orelse, seen)
        return isinstance(expr, (cst.Attribute, cst.Subscript))

    # -- is a target shared state? -----------------------------------------------------
    def shared(self, target: cst.BaseExpression) -> bool:
        root = target
        while isinstance(root, (cst.Attribute, cst.Subscript, cst.Call)):
            root = root.func if isinstance(root, cst.Call) else root.value
        if not isinstance(root, cst.Name):
            return False
        name = root.value
        if name in self.tensors:
            return False
        if name in ("self", "cls") or name == self.module_param or name in self.declared:
            return True
        return name not in self.aliases and name not in self.params

    def stores(self) -> list[TensorStore]:
        found: list[TensorStore] = []
        for current in self.nodes:
            if isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute):
                method = current.func.attr.value
                if method not in STORED_ARGUMENT or not self.shared(current.func.value):
                    continue
                for value in _stored_arguments(current, STORED_ARGUMENT[method]):
                    if self.carries(value):
                        fixable = method not in ("extend", "update") and self.fixable(value)
                        found.append(TensorStore(current, value, fixable, current.func.value))
                        break
            elif isinstance(current, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = (
                    [t.target for t in current.targets]
                    if isinstance(current, cst.Assign)
                    else [current.target]
                )
                value = current.value
                if value is None:
                    continue
                for target in targets:
                    if isinstance(target, cst.Name):
                        is_store = target.value in self.declared
                    else:
                        is_store = isinstance(target, (cst.Attribute, cst.Subscript)) and self.shared(target)
                    if is_store and self.carries(value):
                        fixable = not isinstance(current, cst.AugAssign) and self.fixable(value)
                        found.append(TensorStore(current, value, fixable, target))
                        break
        return found


def _top_index(top: list[cst.BaseStatement], node: cst.CSTNode) -> int | None:
    """The index of the top-level statement that holds ``node``."""
    for index, statement in enumerate(top):
        if statement is node or any(d is node for d in descendants(statement, into_functions=False)):
            return index
    return None


def _top_bindings(top: list[cst.BaseStatement], name: str) -> list[tuple[int, cst.BaseExpression]] | None:
    """``(index, value)`` of every top-level ``name = value`` statement (a single
    target), in order."""
    found = []
    for index, statement in enumerate(top):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and small.targets[0].target.value == name
            ):
                found.append((index, small.value))
    return found


def _stored_arguments(call: cst.Call, index: int | None):
    args = call.args
    if index is None:
        for arg in args:
            if isinstance(arg.value, cst.Dict):
                yield from (e.value for e in arg.value.elements if isinstance(e, cst.DictElement))
            else:
                yield arg.value
        return
    if len(args) > index and args[index].keyword is None:
        yield args[index].value
