"""Whether an object a function hooks is one its caller handed it (HL016's and HL019's
question about constructors).

An expression is *given* when it is a parameter of the function, or is reached from
one: an attribute, item or method result of it (``model.layer4``, ``model.blocks[0]``,
``dict(model.named_children())``, ``getattr(model, name)``), a loop or comprehension
variable over something given (``for name, mod in model.named_modules()``), a
comprehension that collects such variables (``[m for m in model.modules() if ...]``), a local
assigned from something given, or ``self.<attr>`` that the class's ``__init__`` sets
from something given (``self.model = model``).  In an *installer* (a same-file function
the code calls, directly or through ``X.apply(fn)``), a parameter is given when what the
call passes for it is.  ``self`` itself, and what the object builds (``nn.Linear(...)``),
are not given: an object hooking itself or its own parts takes the hooks with it.
"""

from __future__ import annotations

import libcst as cst

from hooklint.analysis.facts import CallSite, FunctionInfo, ModuleFacts, Site
from hooklint.analysis.handles import HandleModel, returned_parameter
from hooklint.analysis.names import argument_for, is_attribute
from hooklint.analysis.scopes import assigned_values, loop_iterable, target_names
from hooklint.analysis.vocabulary import PART_LOOKUPS, PASS_THROUGH_BUILTINS
from hooklint.analysis.walk import descendants

#: How many steps (a name to its value, an installer's parameter to its argument) are followed.
_DEPTH = 8


def is_given(
    facts: ModuleFacts,
    model: HandleModel,
    node: cst.BaseExpression | None,
    site: Site,
    at: cst.Call,
    via: tuple[CallSite, ...] = (),
) -> bool:
    """Whether ``node`` (in the function of ``site``, evaluated at the call ``at``) is
    something the code's caller handed in; ``via`` is the chain of calls from the
    function the caller called to the installer ``node`` sits in."""
    info = model.info(model.scope_id(site))
    if info is None:
        return False
    return _Given(facts, model).given(node, info, site, at, via, 0)


class _Given:
    def __init__(self, facts: ModuleFacts, model: HandleModel) -> None:
        self.facts = facts
        self.model = model

    def given(self, node, info: FunctionInfo, site: Site | None, at, via, depth: int) -> bool:
        if node is None or depth > _DEPTH:
            return False
        if isinstance(node, cst.Attribute):
            if isinstance(node.value, cst.Name) and node.value.value == "self":
                return self._self_attribute(node.attr.value, info, depth)
            return self.given(node.value, info, site, at, via, depth)
        if isinstance(node, cst.Subscript):
            return self.given(node.value, info, site, at, via, depth)
        if isinstance(node, cst.IfExp):  # either branch may be what the caller handed in
            return self.given(node.body, info, site, at, via, depth) or self.given(
                node.orelse, info, site, at, via, depth
            )
        if isinstance(node, cst.Call):
            if isinstance(node.func, cst.Attribute):
                return self.given(node.func.value, info, site, at, via, depth)
            if (
                isinstance(node.func, cst.Name)
                and (node.func.value in PASS_THROUGH_BUILTINS or node.func.value in PART_LOOKUPS)
                and node.args
            ):
                return self.given(node.args[0].value, info, site, at, via, depth)
            return False
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            return self._comprehension(node, info, site, at, via, depth)
        if not isinstance(node, cst.Name) or node.value in ("self", "cls"):
            return False
        name = node.value
        iterable = loop_iterable(site, name) if site is not None else None
        if iterable is not None:
            return self.given(iterable, info, site, at, via, depth + 1)
        if name in info.params:
            return self._parameter(name, info, via, depth)
        if at is not None:
            value = self.model.value_at(node, at, id(info.node))
            if value is not None and _part_of(value, name):
                return self._descended(name, info, site, at, via, depth)
            if isinstance(value, (cst.List, cst.Set)) and not value.elements:
                return self._filled_with_given(name, info, via, depth)
            if value is not None:
                return self.given(value, info, site, at, via, depth + 1)
        return False

    def _comprehension(self, node, info: FunctionInfo, site, at, via, depth: int) -> bool:
        """A comprehension whose elements (a dict's keys or values) are a variable of its own
        ``for`` clauses, or a part of one, over something given (``[m for m in
        model.modules() if ...]``, ``{m: n for n, m in model.named_modules()}``), also
        through an earlier clause's variable (``for b in model.blocks for m in b.children()``)."""
        bound: dict[str, cst.BaseExpression] = {}
        clause = node.for_in
        while clause is not None:
            for name in target_names(clause.target):
                bound.setdefault(name, clause.iter)
            clause = clause.inner_for_in
        if isinstance(node, cst.DictComp):  # iterated for its keys, looked up for its values
            return any(self._collected(e, bound, info, site, at, via, depth) for e in (node.key, node.value))
        return self._collected(node.elt, bound, info, site, at, via, depth)

    def _collected(self, element, bound: dict, info: FunctionInfo, site, at, via, depth: int) -> bool:
        """``element`` of a comprehension is one of its variables (``bound``: each to
        what its clause iterates), or a part of one, over something given."""
        root = _root(element)
        seen: set[str] = set()
        while isinstance(root, cst.Name) and root.value in bound and root.value not in seen:
            seen.add(root.value)
            iterable = bound[root.value]
            inner = _root(iterable)
            if isinstance(inner, cst.Name) and inner.value in bound:
                root = inner  # over an earlier clause's variable: what that one iterates
                continue
            return self.given(iterable, info, site, at, via, depth + 1)
        return False

    def _filled_with_given(self, name: str, info: FunctionInfo, via, depth: int) -> bool:
        """A list the function starts empty and fills (``layers.append(m)``,
        ``.add``, ``.insert``, ``.extend``) only with things given to it: what a loop
        over it hooks is given."""
        fills = [
            c
            for c in self.model.calls_in(id(info.node))
            if c.attr in _FILLS and isinstance(c.receiver, cst.Name) and c.receiver.value == name
        ]
        return bool(fills) and all(
            len(c.node.args) == _FILLS[c.attr] + 1
            and self.given(c.node.args[-1].value, info, c.site, c.node, via, depth + 1)
            for c in fills
        )

    def _descended(self, name: str, info: FunctionInfo, site, at, via, depth: int) -> bool:
        """``name`` walks down into its own parts (``target = target._modules[part]`` in
        a loop over a path): it is given when every other value it gets is."""
        values = assigned_values(info.node, name)
        starts = [v for v in values or () if not _part_of(v, name)]
        return bool(starts) and all(self.given(v, info, site, at, via, depth + 1) for v in starts)

    def _parameter(self, name: str, info: FunctionInfo, via: tuple[CallSite, ...], depth: int) -> bool:
        """A parameter of the constructor is given; one of an installer is given when its
        call passes something given for it."""
        if not via:
            return True
        call = via[-1]
        caller = self.model.info(self.model.scope_id(call.site))
        if caller is None:
            return False
        params = info.called_params
        if self.model.applied(call) is info:
            # ``X.apply(fn)``: ``fn``'s first parameter is each submodule of ``X``.
            if not params or params[0] != name:
                return False
            return self.given(call.node.func.value, caller, call.site, call.node, via[:-1], depth + 1)  # type: ignore[attr-defined]
        argument = argument_for(call.node, params, name)
        return self.given(argument, caller, call.site, call.node, via[:-1], depth + 1)

    def _self_attribute(self, attr: str, info: FunctionInfo, depth: int) -> bool:
        """``self.<attr>`` that the class's ``__init__`` sets from something given."""
        method = info
        while method is not None and method.class_name is None:
            method = method.parent
        if method is None:
            return False
        return self._set_in_init(method.class_name, attr, (), depth, set())  # type: ignore[arg-type]

    def _set_in_init(self, class_name: str, attr: str, via: tuple, depth: int, seen: set) -> bool:
        """``__init__`` of ``class_name`` sets ``self.<attr>`` from something given: by a
        plain assignment, as an element unpacked from a same-file function that hands
        back what it is given in that place (``self.net, self.n = _split(net)`` with
        ``return net, len(net)``), or in the ``__init__`` of the same-file base that
        ``super().__init__(net)`` runs, for what this one passes.  ``via``: the
        ``super().__init__`` calls that led here."""
        init = self.facts.method(class_name, "__init__")
        if init is None or class_name in seen or depth > _DEPTH:
            return False
        seen.add(class_name)
        for node in self.facts.body_nodes(init.node):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    value = _assigned_to(target.target, attr, node.value)
                    if value is None:
                        value = self._unpacked_from_helper(target.target, attr, node.value, init)
                    if value is not None and self.given(value, init, None, None, via, depth + 1):
                        return True
            elif isinstance(node, cst.Call):
                base = self._base_init(node, class_name)
                if base is not None:
                    call = self._call_site(node)
                    if call is not None and self._set_in_init(base, attr, (*via, call), depth + 1, seen):
                        return True
                elif _super_init(node):
                    values = self._passed_to_base_elsewhere(node, class_name, attr)
                    if any(self.given(v, init, None, None, via, depth + 1) for v in values):
                        return True
        return False

    def _passed_to_base_elsewhere(self, node: cst.Call, class_name: str, attr: str) -> list:
        """What ``super().__init__(...)`` passes for the parameters that the ``__init__``
        of a base class in another file (cross-file analysis) binds to ``self.<attr>``,
        as they are or a part of them, also in a branch of a conditional (``self.model =
        model.net if wrapped else model``)."""
        if self.facts.project is None:
            return []
        from hooklint.project.queries import base_method

        base = base_method(self.facts.project, class_name, "__init__", after_own=True)
        if base is None:
            return []
        params = base.params[1:]
        for statement in descendants(base.node.body, into_functions=False):
            if isinstance(statement, cst.Assign) and any(
                _assigned_to(t.target, attr, t) is not None for t in statement.targets
            ):
                return [argument_for(node, params, name) for name in _parameters_in(statement.value, params)]
        return []

    def _unpacked_from_helper(self, target, attr: str, value, init: FunctionInfo):
        """For ``self.a, self.b = helper(x, ...)`` and ``attr`` one of them: the argument
        the call passes for the parameter that every ``return`` of the same-file
        function ``helper`` puts in that place (``return x, len(x)``); else None."""
        if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, cst.Call):
            return None
        places = [
            i for i, e in enumerate(target.elements) if _assigned_to(e.value, attr, e.value) is not None
        ]
        if len(places) != 1 or any(isinstance(e, cst.StarredElement) for e in target.elements):
            return None
        if not isinstance(value.func, cst.Name):
            return None
        helper = self.facts.module_function(value.func.value)
        if helper is None:
            return None
        handed = returned_parameter(self.facts, helper, places[0], len(target.elements))
        return argument_for(value, helper.params, handed) if handed is not None else None

    def _base_init(self, node: cst.Call, class_name: str) -> str | None:
        """The same-file base whose ``__init__`` ``super().__init__(...)`` runs: the
        class's first base, when that is a class of this file."""
        if not _super_init(node):
            return None
        bases = self.facts.classes.get(class_name)
        first = bases.bases[0].value if bases is not None and bases.bases else None
        if isinstance(first, cst.Name) and first.value in self.facts.classes:
            return first.value
        return None

    def _call_site(self, node: cst.Call) -> CallSite | None:
        index = self.facts.memo("_call_sites_by_node", lambda facts: {id(c.node): c for c in facts.calls})
        return index.get(id(node))


def _parameters_in(value: cst.BaseExpression, params: list[str]) -> list[str]:
    """The parameters ``value`` is, or is a part of (``model``, ``model.net``,
    ``model.get_submodule(p)``), in either branch of a conditional."""
    if isinstance(value, cst.IfExp):
        return _parameters_in(value.body, params) + _parameters_in(value.orelse, params)
    root = _root(value)
    return [root.value] if isinstance(root, cst.Name) and root.value in params else []


def _super_init(node: cst.Call) -> bool:
    """``node`` is ``super().__init__(...)`` (not ``super(Cls, self)``: which class it
    starts after is another question)."""
    func = node.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "__init__"):
        return False
    owner = func.value
    return (
        isinstance(owner, cst.Call)
        and isinstance(owner.func, cst.Name)
        and owner.func.value == "super"
        and not owner.args
    )


#: How a list is filled, and the position of the argument that holds what goes in, the
#: last one (``extend``: the items of its iterable, given when the iterable is).
_FILLS = {"append": 0, "add": 0, "extend": 0, "insert": 1}


def _root(value: cst.BaseExpression) -> cst.BaseExpression:
    """What a chain of attributes, subscripts and method calls starts from (``model`` of
    ``model._modules[k].get_submodule(p)``)."""
    while True:
        if isinstance(value, (cst.Attribute, cst.Subscript)):
            value = value.value
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            value = value.func.value
        else:
            return value


def _part_of(value: cst.BaseExpression, name: str) -> bool:
    """``value`` is a part of what ``name`` holds: an attribute, subscript or method
    result reached from ``name`` itself (``name._modules[k]``, ``name.get_submodule(p)``)."""
    root = _root(value)
    return isinstance(root, cst.Name) and root.value == name


def _assigned_to(target, attr: str, value):
    """``value`` when ``target`` is ``self.<attr>``; else None."""
    return value if is_attribute(target, "self", attr) else None
