"""Whether an object a function hooks is one its caller handed it (HL016's and HL019's
question about constructors).

An expression is *given* when it is a parameter of the function, or is reached from
one: an attribute, item or method result of it (``model.layer4``, ``model.blocks[0]``,
``dict(model.named_children())``, ``getattr(model, name)``), a loop or comprehension
variable over something given (``for name, mod in model.named_modules()``), a local
assigned from something given, or ``self.<attr>`` that the class's ``__init__`` sets
from something given (``self.model = model``).  In an *installer* (a same-file function
the code calls, directly or through ``X.apply(fn)``), a parameter is given when what the
call passes for it is.  ``self`` itself, and what the object builds (``nn.Linear(...)``),
are not given: an object hooking itself or its own parts takes the hooks with it.
"""

from __future__ import annotations

import libcst as cst

from hooklint.analysis.facts import CallSite, FunctionInfo, ModuleFacts, Site
from hooklint.analysis.handles import HandleModel
from hooklint.analysis.names import argument_for
from hooklint.analysis.scopes import loop_iterable
from hooklint.analysis.vocabulary import PASS_THROUGH_BUILTINS
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
        if isinstance(node, cst.Call):
            if isinstance(node.func, cst.Attribute):
                return self.given(node.func.value, info, site, at, via, depth)
            if isinstance(node.func, cst.Name) and node.func.value in PASS_THROUGH_BUILTINS and node.args:
                return self.given(node.args[0].value, info, site, at, via, depth)
            return False
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
            if value is not None:
                return self.given(value, info, site, at, via, depth + 1)
        return False

    def _parameter(self, name: str, info: FunctionInfo, via: tuple[CallSite, ...], depth: int) -> bool:
        """A parameter of the constructor is given; one of an installer is given when its
        call passes something given for it."""
        if not via:
            return True
        call = via[-1]
        caller = self.model.info(self.model.scope_id(call.site))
        if caller is None:
            return False
        params = [p for p in info.params if p not in ("self", "cls")] if info.class_name else info.params
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
        init = self.facts.method(method.class_name, "__init__") if method is not None else None  # type: ignore[arg-type]
        if init is None:
            return False
        for node in descendants(init.node.body, into_functions=False):
            if not isinstance(node, cst.Assign):
                continue
            for target in node.targets:
                chain = target.target
                if (
                    isinstance(chain, cst.Attribute)
                    and chain.attr.value == attr
                    and isinstance(chain.value, cst.Name)
                    and chain.value.value == "self"
                    and self.given(node.value, init, None, None, (), depth + 1)
                ):
                    return True
        return False
