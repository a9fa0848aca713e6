"""Registration wrappers: functions that register the hook they are given.

Many code bases register hooks through a helper, e.g. llm-compressor's
``HooksMixin.register_hook(module, hook, "forward_pre", with_kwargs=True)``, which
calls ``getattr(module, f"register_{hook_type}_hook")(wrapped, **kwargs)`` and keeps
the handle in ``self._hooks``.  A call to such a helper is a registration too.

Wrappers are found two ways, after the facts pass (nothing here re-walks the module):

* *inferred*: a function or method of the same file whose body passes one of its own
  parameters as the hook of a registration and returns or stores the handle (a
  ``self.name(...)`` call runs the method its class, or the nearest of its bases in the
  file, defines; when that one is abstract, the overrides of the file's subclasses,
  whose APIs, when they differ, leave the registration's kind unknown);
* *configured*: the names in the ``registration-wrappers`` setting (last dotted part
  matched: ``HooksMixin.register_hook`` and ``register_hook`` both match
  ``self.register_hook(...)``), for wrappers that live in other files or packages.

``X.register_hook(a, b, ...)`` with two or more positional arguments cannot be
``Tensor.register_hook`` (it takes one), so it is read as a wrapper call too.

A wrapper call becomes a :class:`Registration` with ``wrapper`` set: its hook is the
argument at the wrapper's hook parameter (configured wrappers: the first argument that
resolves to a hook body), its receiver the first other positional argument, and its
API the one named by a string argument (``"forward_pre"`` →
``register_forward_pre_hook``) when there is one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import libcst as cst

from hooklint.analysis.facts import ModuleFacts, Registration
from hooklint.analysis.vocabulary import DYNAMIC_API, METHOD_APIS, HookApi

WRAPPER_API = HookApi("register_<wrapper>_hook", "wrapper", "module")


@dataclass(frozen=True)
class Wrapper:
    """A registration wrapper: its name, and (when inferred) the positions of its
    hook and target parameters among the call's arguments (``self`` left out)."""

    name: str
    hook_index: int | None = None
    hook_param: str | None = None
    target_index: int | None = None
    api: HookApi | None = None
    class_name: str | None = None
    #: Where a wrapper of another file is defined (:mod:`hooklint.project`).
    evidence: tuple = ()


def infer_wrappers(facts: ModuleFacts) -> dict[str, Wrapper]:
    """In-file wrappers, keyed by function name (of same-named methods of several
    classes, the last)."""
    return {name: wrapper for (_, name), wrapper in _wrappers_by_owner(facts).items()}


def _wrappers_by_owner(facts: ModuleFacts) -> dict[tuple[str | None, str], Wrapper]:
    """In-file wrappers, keyed by ``(class name or None, function name)``."""
    found: dict[tuple[str | None, str], Wrapper] = {}
    for registration in facts.registrations:
        hook_arg = registration.hook_arg
        if not isinstance(hook_arg, cst.Name):
            continue
        node = registration.site.function
        if node is None:
            continue
        info = facts.function_for(node)
        if info is None or info.parent is not None:
            continue
        params = info.params
        if info.class_name is not None and "staticmethod" not in info.decorators and params:
            params = params[1:]
        if hook_arg.value not in params:
            continue
        final = registration.handle.final
        if final.role not in ("returned", "bound", "appended", "exit_stack"):
            continue
        target_index = None
        if isinstance(registration.receiver, cst.Name) and registration.receiver.value in params:
            target_index = params.index(registration.receiver.value)
        found[(info.class_name, info.name)] = Wrapper(
            info.name,
            params.index(hook_arg.value),
            hook_arg.value,
            target_index,
            registration.api if registration.api is not DYNAMIC_API else None,
            info.class_name,
        )
    return found


def promote_wrapper_calls(
    facts: ModuleFacts,
    configured: Iterable[str],
    resolve_hook: Callable[[cst.BaseExpression, object], object],
) -> None:
    """Add (or correct) the registrations made through wrapper calls."""
    by_owner = _wrappers_by_owner(facts)
    wrappers = {name: wrapper for (_, name), wrapper in by_owner.items()}
    configured_names = {name.rsplit(".", 1)[-1] for name in configured if name}
    existing = {id(r.call): r for r in facts.registrations}
    for call in facts.calls:
        node = call.node
        name = _called_name(node.func)
        if name is None:
            continue
        wrapper = wrappers.get(name)
        registration = existing.get(id(node))
        if (
            wrapper is None
            and facts.project is not None
            and (registration is None or registration.wrapper is None)
        ):
            wrapper = _external_wrapper(facts, call, registration)
        if wrapper is not None and wrapper.evidence:
            pass  # another file's wrapper (resolved through imports and bases)
        elif wrapper is not None:
            if registration is not None and registration.wrapper is None and registration.api.name == name:
                continue  # a real torch API shadowed by a same-named in-file function: keep both readings apart
            if wrapper.class_name is not None and not _is_self_call(node.func):
                continue
            if wrapper.class_name is not None:
                wrapper = _dispatched_wrapper(facts, by_owner, call.site.class_name, name)
                if wrapper is None:
                    continue  # ``self.name`` runs a method that registers nothing
            if (
                call.site.function is not None
                and facts.function_for(call.site.function) is not None
                and (
                    facts.function_for(call.site.function).name == name  # the wrapper's own recursion
                )
            ):
                continue
        elif name in configured_names or _is_multi_arg_register_hook(node, name):
            wrapper = Wrapper(name)
        else:
            continue
        promoted = _registration(facts, call, wrapper, resolve_hook)
        if promoted is None:
            continue
        if registration is not None:
            index = facts.registrations.index(registration)
            facts.registrations[index] = promoted
        else:
            facts.registrations.append(promoted)
    facts.registrations.sort(key=lambda r: r.site.order)


def _external_wrapper(facts: ModuleFacts, call, registration) -> Wrapper | None:
    """Another file's wrapper that ``call`` reaches; a real torch API call stays one
    (``self.register_hook(...)`` of a class whose base defines it is the base's)."""
    if (
        registration is not None
        and registration.api.name == _called_name(call.node.func)
        and not _is_self_call(call.node.func)
    ):
        return None
    from hooklint.project.queries import external_wrapper

    return external_wrapper(facts.project, call)


def _dispatched_wrapper(facts: ModuleFacts, by_owner, class_name: str | None, name: str) -> Wrapper | None:
    """The wrapper a ``self.name(...)`` call in ``class_name`` runs: the method it
    resolves to (the class's own, else its bases' in this file), or, when that is
    abstract or missing, the overrides of the file's subclasses.  None when one of
    those methods registers nothing.  Overrides that register different APIs make a
    registration of unknown kind (``api`` None)."""
    own = _method_class(facts, class_name, name)
    candidates = [own] if own is not None else []
    if own is None or is_abstract(facts.method(own, name).node):
        candidates = [c for c in _subclasses(facts, class_name) if facts.method(c, name) is not None]
    wrappers = []
    for candidate in candidates:
        wrapper = by_owner.get((candidate, name))
        if wrapper is None:
            if not is_abstract(facts.method(candidate, name).node):
                return None
            continue
        wrappers.append(wrapper)
    if not wrappers:
        return None
    if len({w.api for w in wrappers}) > 1:
        return dataclasses.replace(wrappers[0], api=None)
    return wrappers[0]


def _method_class(facts: ModuleFacts, class_name: str | None, name: str) -> str | None:
    """The class of this file whose method ``name`` a ``self.name(...)`` call in
    ``class_name`` finds first: the class itself, else its bases in this file, in order."""
    for current in _lineage(facts, class_name):
        if facts.method(current, name) is not None:
            return current
    return None


def _lineage(facts: ModuleFacts, class_name: str | None) -> list[str]:
    """``class_name`` and its bases that are classes of this file, nearest first."""
    order: list[str] = []
    todo = [class_name] if class_name is not None else []
    while todo:
        current = todo.pop(0)
        if current in order or current not in facts.classes:
            continue
        order.append(current)
        todo.extend(_base_names(facts.classes[current]))
    return order


def _base_names(class_def: cst.ClassDef) -> list[str]:
    return [b.value.value for b in class_def.bases if isinstance(b.value, cst.Name) and b.keyword is None]


def _subclasses(facts: ModuleFacts, class_name: str | None) -> list[str]:
    """The classes of this file that have ``class_name`` among their bases (directly or
    through other classes of the file)."""
    if class_name is None:
        return []
    return [c for c in facts.classes if c != class_name and class_name in _lineage(facts, c)]


def is_abstract(node: cst.FunctionDef) -> bool:
    """A method with no body of its own: a docstring, ``pass``, ``...`` or ``raise
    NotImplementedError``, or decorated ``@abstractmethod``."""
    for decorator in node.decorators:
        if _called_name(decorator.decorator) == "abstractmethod":
            return True
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else [node.body]
    for statement in body:
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            if isinstance(small, cst.Pass):
                continue
            if isinstance(small, cst.Expr) and isinstance(
                small.value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)
            ):
                continue
            if isinstance(small, cst.Raise) and small.exc is not None:
                exc = small.exc.func if isinstance(small.exc, cst.Call) else small.exc
                if _called_name(exc) == "NotImplementedError":
                    continue
            return False
    return True


def _called_name(func: cst.BaseExpression) -> str | None:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


def _is_self_call(func: cst.BaseExpression) -> bool:
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.value.value in ("self", "cls", "super")
    )


def _is_multi_arg_register_hook(node: cst.Call, name: str) -> bool:
    if name != "register_hook":
        return False
    return sum(1 for a in node.args if a.keyword is None and not a.star) >= 2


def _registration(facts: ModuleFacts, call, wrapper: Wrapper, resolve_hook) -> Registration | None:
    node: cst.Call = call.node
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    hook_arg = None
    hook_body = None
    if wrapper.hook_index is not None:
        if wrapper.hook_param in keywords:
            hook_arg = keywords.pop(wrapper.hook_param)
        elif wrapper.hook_index < len(positional):
            hook_arg = positional[wrapper.hook_index]
    else:
        for candidate in positional + [keywords.get("hook"), keywords.get("fn")]:
            if candidate is None or isinstance(
                candidate, (cst.SimpleString, cst.FormattedString, cst.Integer)
            ):
                continue
            body = resolve_hook(candidate, call.site)
            if body is not None:
                hook_arg, hook_body = candidate, body
                break
        for name in ("hook", "fn"):
            if hook_arg is not None and keywords.get(name) is hook_arg:
                del keywords[name]
    if hook_arg is None:
        return None
    receiver = None
    if wrapper.target_index is not None and wrapper.target_index < len(positional):
        receiver = positional[wrapper.target_index]
    else:
        for candidate in positional:
            if candidate is not hook_arg and not isinstance(
                candidate, (cst.SimpleString, cst.FormattedString)
            ):
                receiver = candidate
                break
    api = wrapper.api or _api_from_strings(positional + list(keywords.values())) or WRAPPER_API
    return Registration(
        call=node,
        api=api,
        receiver=receiver,
        receiver_code=facts.code(receiver) if receiver is not None else None,
        hook_arg=hook_arg,
        keywords={k: v for k, v in keywords.items()},
        has_star_kwargs=any(a.star == "**" for a in node.args),
        site=call.site,
        handle=call.use,
        hook=hook_body,
        wrapper=wrapper.name,
        evidence=wrapper.evidence,
    )


def _api_from_strings(values) -> HookApi | None:
    """``"forward_pre"`` → ``register_forward_pre_hook``."""
    for value in values:
        if isinstance(value, cst.SimpleString):
            kind = value.evaluated_value
            if isinstance(kind, str):
                api = METHOD_APIS.get(f"register_{kind}_hook")
                if api is not None:
                    return api
    return None
