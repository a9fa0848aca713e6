"""The one pass over a module that builds its :class:`ModuleFacts`.

A hand-written walk over the CST's dataclass fields: libcst's visitor dispatch
(and its ``children`` property) costs about as much as the parse itself, this walk
a fifth of it.  Whitespace and punctuation fields are never entered.

What it records: imports, defs (with their nesting), every call (with its site and
what is done with its value), the hook registrations among them, ``X.remove()``
calls, and simple local assignments (to resolve ``hook = partial(f, ...)``).
After the walk, each registration's hook argument is resolved to a :class:`HookBody`.
"""

from __future__ import annotations

import dataclasses

import libcst as cst

from hooklint.analysis.facts import (
    CallSite,
    Frame,
    FunctionInfo,
    HandleUse,
    HookBody,
    ModuleFacts,
    Registration,
    Site,
)
from hooklint.analysis.names import dotted_name, record_import, resolve, returned_name
from hooklint.analysis.vocabulary import (
    COLLECTION_BUILTINS,
    DYNAMIC_API,
    GLOBAL_APIS,
    METHOD_APIS,
    STORE_METHODS,
)
from hooklint.analysis.walk import NODE, SEQUENCE, fields, value_kind
from hooklint.lexical import names_a_registration

OTHER = HandleUse("other")
DISCARDED = HandleUse("discarded")

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
_PARTIALS = frozenset({"functools.partial", "partial"})


class _Collector:
    def __init__(self, module: cst.Module) -> None:
        self.facts = ModuleFacts(module=module)
        self.frames: list[Frame] = []
        self.statement: cst.CSTNode = module
        self.order = 0
        self.roles: dict[int, HandleUse] = {}
        self.functions: list[FunctionInfo] = []  # the enclosing defs, innermost last
        self.local_values: dict[tuple[int, str], cst.BaseExpression] = {}

    # -- traversal ---------------------------------------------------------------
    def visit(self, node: cst.CSTNode) -> None:
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node)
        else:
            self.children(node)

    def children(self, node: cst.CSTNode) -> None:
        for name in fields(type(node)):
            value = getattr(node, name)
            kind = value_kind(type(value))
            if kind is NODE:
                self.visit(value)
            elif kind is SEQUENCE:
                for item in value:
                    if value_kind(type(item)) is NODE:
                        self.visit(item)

    def visit_all(self, nodes) -> None:
        for node in nodes:
            if node is not None:
                self.visit(node)

    def inside(self, kind: str, node: cst.CSTNode, *parts) -> None:
        self.frames.append(Frame(kind, node))
        try:
            self.visit_all(parts)
        finally:
            self.frames.pop()

    def site(self) -> Site:
        self.order += 1
        return Site(self.order, tuple(self.frames), self.statement)

    def role(self, node: cst.CSTNode | None, use: HandleUse) -> None:
        if node is not None:
            self.roles[id(node)] = use

    # -- statements ----------------------------------------------------------------
    def _statement(self, node: cst.CSTNode, visit) -> None:
        outer, self.statement = self.statement, node
        try:
            visit()
        finally:
            self.statement = outer

    def _simple_statement(self, node: cst.SimpleStatementLine) -> None:
        self._statement(node, lambda: self.children(node))

    def _import(self, node: cst.Import | cst.ImportFrom) -> None:
        record_import(node, self.facts.imports)
        self.facts.import_statements.append((node, self.site()))

    def _class(self, node: cst.ClassDef) -> None:
        def visit() -> None:
            self.visit_all(d.decorator for d in node.decorators)
            self.visit_all(a.value for a in node.bases)
            self.facts.classes.setdefault(node.name.value, node)
            self.inside("class", node, node.body)

        self._statement(node, visit)

    def _function(self, node: cst.FunctionDef) -> None:
        def visit() -> None:
            self.visit_all(d.decorator for d in node.decorators)
            parent = self.functions[-1] if self.functions and self.frames[-1].kind != "class" else None
            class_def = self.frames[-1].node if self.frames and self.frames[-1].kind == "class" else None
            class_name = class_def.name.value if class_def is not None else None  # type: ignore[attr-defined]
            if parent is not None:
                qualname = f"{parent.qualname}.<locals>.{node.name.value}"
            elif class_name is not None:
                qualname = f"{class_name}.{node.name.value}"
            else:
                qualname = node.name.value
            decorators = tuple(
                resolve(dotted_name(_decorator_callee(d.decorator)), self.facts.imports) or ""
                for d in node.decorators
            )
            info = FunctionInfo(node, node.name.value, qualname, class_name, parent, decorators, self.site())
            self.facts.functions.append(info)
            if parent is not None:
                parent.nested[info.name] = info
            self.functions.append(info)
            try:
                self.visit_all(p.default for p in _all_params(node.params))
                self.inside("def", node, node.body)
            finally:
                self.functions.pop()

        self._statement(node, visit)

    def _lambda(self, node: cst.Lambda) -> None:
        self.inside("lambda", node, node.body)

    def _raise(self, node: cst.Raise | cst.Assert) -> None:
        if self.functions:
            self.facts.raising.add(id(self.functions[-1].node))
        self.children(node)

    def _for(self, node: cst.For) -> None:
        def visit() -> None:
            self.visit_all((node.iter, node.target))
            self.inside("for", node, node.body)
            self.visit_all((node.orelse,))

        self._statement(node, visit)

    def _while(self, node: cst.While) -> None:
        def visit() -> None:
            self.inside("while", node, node.test, node.body)
            self.visit_all((node.orelse,))

        self._statement(node, visit)

    def _if(self, node: cst.If) -> None:
        def visit() -> None:
            self.visit(node.test)
            self.inside("if", node, node.body)
            if node.orelse is not None:
                self.inside("if", node, node.orelse)

        self._statement(node, visit)

    def _try(self, node: cst.Try | cst.TryStar) -> None:
        def visit() -> None:
            self.inside("try", node, node.body)
            for handler in node.handlers:
                self.inside("except", handler, handler.type, handler.body)
            if node.orelse is not None:
                self.inside("else", node.orelse, node.orelse)
            if node.finalbody is not None:
                self.inside("finally", node.finalbody, node.finalbody)

        self._statement(node, visit)

    def _with(self, node: cst.With) -> None:
        def visit() -> None:
            for item in node.items:
                self.role(item.item, HandleUse("with", _asname(item)))
                self.visit(item.item)
            self.inside("with", node, node.body)

        self._statement(node, visit)

    # -- what happens to values ------------------------------------------------------
    def _expr(self, node: cst.Expr) -> None:
        self.role(node.value, DISCARDED)
        self.visit(node.value)

    def _assign(self, node: cst.Assign) -> None:
        targets = tuple(t.target for t in node.targets)
        self.role(node.value, HandleUse("bound", targets, module=self.facts.module))
        if self.functions and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.local_values[(id(self.functions[-1].node), node.targets[0].target.value)] = node.value
        self.children(node)

    def _ann_assign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self.role(node.value, HandleUse("bound", (node.target,), module=self.facts.module))
        self.children(node)

    def _aug_assign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign):
            self.role(node.value, HandleUse("appended", (node.target,), module=self.facts.module))
        self.children(node)

    def _return(self, node: cst.Return) -> None:
        self.role(node.value, HandleUse("returned"))
        if node.value is not None and self.functions:
            self.facts.returning.add(id(self.functions[-1].node))
        self.children(node)

    def _yield(self, node: cst.Yield) -> None:
        if isinstance(node.value, cst.BaseExpression):
            self.role(node.value, HandleUse("yielded"))
        self.children(node)

    def _collection(self, node: cst.List | cst.Tuple | cst.Set) -> None:
        outer = self.roles.pop(id(node), OTHER)
        for element in node.elements:
            self.role(element.value, HandleUse("collected", outer=outer))
        self.children(node)

    def _conditional(self, node: cst.IfExp) -> None:
        """``a.register_...(f) if pre else a.register_...(g)``: either branch's handle
        goes where the whole expression's value goes."""
        use = self.roles.pop(id(node), None)
        if use is not None:
            self.role(node.body, use)
            self.role(node.orelse, use)
        self.children(node)

    def _comprehension(self, node) -> None:
        outer = self.roles.pop(id(node), OTHER)
        element = node.value if isinstance(node, cst.DictComp) else node.elt
        self.role(element, HandleUse("collected", outer=outer))
        self.visit(node.for_in)
        self.inside("comp", node, element)

    def _call(self, node: cst.Call) -> None:
        use = self.roles.pop(id(node), OTHER)
        func = node.func
        attr = func.attr.value if isinstance(func, cst.Attribute) else None
        callee = resolve(dotted_name(func), self.facts.imports)
        site = self.site()
        call = CallSite(node, callee, attr, site, use)
        self.facts.calls.append(call)

        if attr in STORE_METHODS:
            arg_use = HandleUse("appended", (func.value,), module=self.facts.module)  # type: ignore[union-attr]
        elif isinstance(func, cst.Name) and func.value in COLLECTION_BUILTINS:
            arg_use = use  # ``set(reg(m) for m in ms)``: the set is where the handles go
        elif isinstance(func, cst.Name) and func.value == "map" and _maps_lambda(node):
            # ``map(lambda m: reg(m), ms)``: what the lambda returns is each element, as
            # in ``(reg(m) for m in ms)``
            lambda_ = node.args[0].value
            self.role(lambda_.body, HandleUse("collected", outer=use))  # type: ignore[attr-defined]
            arg_use = HandleUse("argument", (callee or "",))
        elif attr == "enter_context":
            arg_use = HandleUse("exit_stack", (func.value,), module=self.facts.module)  # type: ignore[union-attr]
        else:
            arg_use = HandleUse("argument", (callee or "",))
        for arg in node.args:
            self.role(arg.value, arg_use)

        if attr == "remove" and not node.args:
            self.facts.removals.setdefault(self.facts.code(func.value), []).append(call)  # type: ignore[union-attr]
            loop_source = self._loop_source(func.value)  # type: ignore[union-attr]
            if loop_source is not None:
                self.facts.removals.setdefault(loop_source, []).append(call)
        self._registration(node, func, attr, callee, site, use)
        self.visit(func)
        self.visit_all(a.value for a in node.args)

    def _loop_source(self, target: cst.BaseExpression) -> str | None:
        """For ``for h in handles: h.remove()``, the code of ``handles``."""
        if not isinstance(target, cst.Name):
            return None
        for frame in reversed(self.frames):
            node = frame.node
            if (
                frame.kind == "for"
                and isinstance(node.target, cst.Name)
                and node.target.value == target.value
            ):  # type: ignore[attr-defined]
                return _iterated(self.facts, node.iter)  # type: ignore[attr-defined]
            if frame.kind == "comp":
                for_in = node.for_in  # type: ignore[attr-defined]
                if isinstance(for_in.target, cst.Name) and for_in.target.value == target.value:
                    return _iterated(self.facts, for_in.iter)
        return None

    def _registration(self, node, func, attr, callee, site: Site, use: HandleUse) -> None:
        receiver = None
        api = None
        named_by: tuple = ()
        if attr is not None and attr in METHOD_APIS:
            api = METHOD_APIS[attr]
            receiver = func.value
        elif callee is not None and callee.rsplit(".", 1)[-1] in GLOBAL_APIS:
            api = GLOBAL_APIS[callee.rsplit(".", 1)[-1]]
        elif _is_getattr_dispatch(func):
            api = DYNAMIC_API
            receiver = func.args[0].value
        elif isinstance(func, cst.Name) and self.functions:
            named_by = _registration_methods(
                self.local_values.get((id(self.functions[-1].node), func.value)), self.facts
            )
            if named_by:
                api = METHOD_APIS[named_by[0].attr.value]
                receiver = named_by[0].value
        if api is None or not node.args:
            return  # torch's registrations all take the hook: ``x.register_hook()`` is another method
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if len(positional) > api.positional or not keywords.keys() <= api.keywords:
            return  # more than torch's signature takes, or a keyword it lacks: another library's method
        hook_index = 1 if api.kind == "multi_grad" else 0
        hook_arg = keywords.get("hook", keywords.get("fn"))
        if hook_arg is None and len(positional) > hook_index:
            hook_arg = positional[hook_index]
        self.facts.registrations.append(
            Registration(
                call=node,
                api=api,
                receiver=receiver,
                receiver_code=self.facts.code(receiver) if receiver is not None else None,
                hook_arg=hook_arg,
                keywords=keywords,
                has_star_kwargs=any(a.star == "**" for a in node.args),
                site=site,
                handle=use,
                named_by=named_by,
            )
        )


def _registration_methods(value: cst.BaseExpression | None, facts: ModuleFacts) -> tuple:
    """The registration methods a local name was bound to (its last plain assignment
    seen so far in the function): ``m.register_forward_hook``, or both branches of
    ``m.register_forward_hook if forward else m.register_backward_hook`` (one object);
    empty for anything else."""
    branches = (value.body, value.orelse) if isinstance(value, cst.IfExp) else (value,)
    if not all(isinstance(b, cst.Attribute) and b.attr.value in METHOD_APIS for b in branches):
        return ()
    if len({facts.code(b.value) for b in branches}) != 1:  # type: ignore[union-attr]
        return ()
    return branches


def _decorator_callee(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.func if isinstance(expr, cst.Call) else expr


def _all_params(params: cst.Parameters):
    yield from params.posonly_params
    yield from params.params
    yield from params.kwonly_params


def _asname(item: cst.WithItem) -> tuple[str, ...]:
    if item.asname is not None and isinstance(item.asname.name, cst.Name):
        return (item.asname.name.value,)
    return ()


def _iterated(facts: ModuleFacts, iterable: cst.BaseExpression) -> str:
    """``handles`` for ``handles``, ``handles.values()``, ``list(handles)``..."""
    if isinstance(iterable, cst.Call):
        if isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value in ("values", "copy"):
            return facts.code(iterable.func.value)
        if (
            isinstance(iterable.func, cst.Name)
            and iterable.args
            and iterable.func.value in ("list", "tuple", "reversed")
        ):
            return facts.code(iterable.args[0].value)
    return facts.code(iterable)


def _is_getattr_dispatch(func: cst.BaseExpression) -> bool:
    """``getattr(module, f"register_{kind}_hook")``, ``getattr(module, "register_forward_hook")``
    (:func:`hooklint.lexical.names_a_registration`: a string holding whitespace names no
    attribute)."""
    if not (isinstance(func, cst.Call) and isinstance(func.func, cst.Name) and func.func.value == "getattr"):
        return False
    if len(func.args) < 2:
        return False
    name = func.args[1].value
    if isinstance(name, cst.SimpleString):
        return names_a_registration(name.value)
    if isinstance(name, cst.FormattedString):
        text = "".join(p.value for p in name.parts if isinstance(p, cst.FormattedStringText))
        return "register_" in text and "hook" in text
    return False


# -- resolving hook callables ----------------------------------------------------------
class _HookResolver:
    def __init__(self, facts: ModuleFacts, local_values) -> None:
        self.facts = facts
        self.local_values = local_values

    def resolve(self, expr: cst.BaseExpression | None, site: Site, depth: int = 0) -> HookBody | None:
        if expr is None or depth > 4:
            return None
        if isinstance(expr, cst.Lambda):
            return HookBody(expr, "<lambda>", "lambda", imports=self.facts.imports)
        if isinstance(expr, cst.IfExp):
            # ``pre = gather if full else patch``: one of two hooks, by configuration.
            # Both must be hooks this file defines; the first is read for both (what
            # either does on every call is what a rule asks about).
            first = self.resolve(expr.body, site, depth + 1)
            second = self.resolve(expr.orelse, site, depth + 1)
            if first is None or second is None:
                return None
            return dataclasses.replace(
                first, alternatives=(*first.alternatives, second, *second.alternatives)
            )
        if isinstance(expr, cst.Name):
            return self._name(expr.value, site, depth)
        if (
            isinstance(expr, cst.Attribute)
            and isinstance(expr.value, cst.Name)
            and expr.value.value in ("self", "cls")
        ):
            class_def = site.class_def
            if class_def is not None:
                method = self.facts.method(class_def.name.value, expr.attr.value)
                if method is not None:
                    return self._body(method, "method")
            return None
        if (
            isinstance(expr, cst.Attribute)
            and isinstance(expr.value, cst.Name)
            and expr.value.value in self.facts.classes
        ):
            return self._class_attribute(expr.value.value, expr.attr.value)
        if isinstance(expr, cst.Call):
            callee = resolve(dotted_name(expr.func), self.facts.imports)
            if callee in _PARTIALS and expr.args:
                inner = self.resolve(expr.args[0].value, site, depth + 1)
                if inner is None:
                    return None
                positional = tuple(a.value for a in expr.args[1:] if a.keyword is None and not a.star)
                keywords = tuple(a.keyword.value for a in expr.args[1:] if a.keyword is not None)
                return dataclasses.replace(
                    inner,
                    via="partial",
                    bound_args=inner.bound_args + positional,
                    bound_keywords=inner.bound_keywords + keywords,
                )
            factory = self._callable_function(expr.func, site)
            if factory is not None:
                returned = returned_name(factory.node)
                if returned is not None and returned in factory.nested:
                    return self._body(factory.nested[returned], "factory")
        return None

    def _callable_function(self, func: cst.BaseExpression, site: Site) -> FunctionInfo | None:
        if isinstance(func, cst.Name):
            return self._function_named(func.value, site)
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == "self"
        ):
            class_def = site.class_def
            if class_def is not None:
                return self.facts.method(class_def.name.value, func.attr.value)
        return None

    def _function_named(self, name: str, site: Site) -> FunctionInfo | None:
        for frame in reversed(site.frames):
            if frame.kind == "def":
                info = self.facts.function_for(frame.node)
                if info is not None and name in info.nested:
                    return info.nested[name]
        return self.facts.module_function(name)

    def _name(self, name: str, site: Site, depth: int) -> HookBody | None:
        info = self._function_named(name, site)
        if info is not None:
            return self._body(info, "function")
        for frame in reversed(site.frames):
            if frame.kind == "def":
                value = self.local_values.get((id(frame.node), name))
                if value is not None:
                    return self.resolve(value, site, depth + 1)
        return None

    def _class_attribute(self, class_name: str, name: str) -> HookBody | None:
        """``Cls.name`` for a class of this file: a ``@staticmethod`` is a plain
        function; a ``@classmethod`` is bound (its ``cls`` is the class); a plain method
        taken from the class is unbound, so its first parameter receives the module."""
        info = self.facts.method(class_name, name)
        if info is None:
            return None
        decorators = {d.rsplit(".", 1)[-1] for d in info.decorators}
        if "classmethod" in decorators:
            return self._body(info, "method")
        return self._body(info, "function")

    def _body(self, info: FunctionInfo, via: str) -> HookBody:
        return HookBody(
            info.node, info.name, via, function=info, imports=self.facts.imports, is_method=via == "method"
        )


#: Node type -> the :class:`_Collector` method that handles it (plain functions, so
#: that a collector holds no bound methods of itself: no reference cycle keeps its
#: tree alive for the garbage collector to find).
_HANDLERS = {
    cst.Import: _Collector._import,
    cst.ImportFrom: _Collector._import,
    cst.ClassDef: _Collector._class,
    cst.FunctionDef: _Collector._function,
    cst.Lambda: _Collector._lambda,
    cst.For: _Collector._for,
    cst.While: _Collector._while,
    cst.If: _Collector._if,
    cst.Try: _Collector._try,
    cst.TryStar: _Collector._try,
    cst.With: _Collector._with,
    cst.SimpleStatementLine: _Collector._simple_statement,
    cst.Expr: _Collector._expr,
    cst.Assign: _Collector._assign,
    cst.AnnAssign: _Collector._ann_assign,
    cst.AugAssign: _Collector._aug_assign,
    cst.Return: _Collector._return,
    cst.Raise: _Collector._raise,
    cst.Assert: _Collector._raise,
    cst.Yield: _Collector._yield,
    cst.Call: _Collector._call,
    cst.List: _Collector._collection,
    cst.Tuple: _Collector._collection,
    cst.Set: _Collector._collection,
    cst.IfExp: _Collector._conditional,
}
for _comp in _COMPREHENSIONS:
    _HANDLERS[_comp] = _Collector._comprehension


def collect(module: cst.Module, registration_wrappers: tuple[str, ...] = (), project=None) -> ModuleFacts:
    """Walk ``module`` once and return its facts.

    ``registration_wrappers``: names of functions that register the hook they are
    given (the ``registration-wrappers`` setting); calls to them, and to wrappers
    inferred in the file, are recorded as registrations too.  ``project``: the
    other files' summaries as this file sees them (:mod:`hooklint.project`), for
    wrappers and removal helpers defined there.
    """
    from hooklint.analysis.wrappers import promote_wrapper_calls

    collector = _Collector(module)
    collector.visit_all(module.body)
    facts = collector.facts
    facts.project = project
    resolver = _HookResolver(facts, collector.local_values)
    promote_wrapper_calls(facts, registration_wrappers, resolver.resolve)
    for registration in facts.registrations:
        if registration.hook is None:
            registration.hook = resolver.resolve(registration.hook_arg, registration.site)
        if registration.hook is None and project is not None and registration.hook_arg is not None:
            from hooklint.project.queries import imported_hook

            found = imported_hook(project, registration.hook_arg, registration.site)
            if found is not None:
                registration.hook, where = found
                registration.evidence = (*registration.evidence, where)
    return facts


def _maps_lambda(node: cst.Call) -> bool:
    """``map(lambda ...: ..., iterable)``: a lambda first, no keywords or stars."""
    return (
        len(node.args) >= 2
        and isinstance(node.args[0].value, cst.Lambda)
        and all(a.keyword is None and not a.star for a in node.args)
    )
