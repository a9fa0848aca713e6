"""Dotted names and import aliases, resolved without libcst's metadata providers.

libcst's ``QualifiedNameProvider`` costs several times a parse; hooklint needs only
the few names that lead to torch hook APIs, ``functools.partial`` and local defs,
so it reads the import statements itself.
"""

from __future__ import annotations

import libcst as cst


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def resolve(dotted: str | None, imports: dict[str, str]) -> str | None:
    """Replace the first segment of ``dotted`` by what it was imported as."""
    if dotted is None:
        return None
    head, sep, rest = dotted.partition(".")
    origin = imports.get(head)
    if origin is None:
        return dotted
    return origin + sep + rest


def _module_name(node: cst.BaseExpression | None) -> str:
    if node is None:
        return ""
    return dotted_name(node) or ""


def record_import(node: cst.Import | cst.ImportFrom, imports: dict[str, str]) -> None:
    """Add the names bound by an import statement to ``imports``."""
    if isinstance(node, cst.Import):
        for alias in node.names:
            full = _module_name(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                imports[alias.asname.name.value] = full
            else:
                head = full.split(".")[0]
                imports[head] = head
        return
    if isinstance(node.names, cst.ImportStar):
        return
    base = "." * len(node.relative) + _module_name(node.module)
    for alias in node.names:
        name = _module_name(alias.name)
        bound = name
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            bound = alias.asname.name.value
        imports[bound] = f"{base}.{name}" if base and not base.endswith(".") else base + name


def returned_name(node: cst.FunctionDef) -> str | None:
    """The name a factory returns: ``return inner``, as its last statement."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    if body and isinstance(body[-1], cst.SimpleStatementLine):
        last = body[-1].body[0]
        if isinstance(last, cst.Return) and isinstance(last.value, cst.Name):
            return last.value.value
    return None


def names_imported_from(node: cst.CSTNode, module: str) -> list[tuple[str, str]]:
    """``(bound, name)`` for each name an absolute ``from module import name [as bound]``
    statement imports (empty for any other statement, a relative import or ``*``)."""
    if not isinstance(node, cst.ImportFrom) or node.relative or isinstance(node.names, cst.ImportStar):
        return []
    if node.module is None or dotted_name(node.module) != module:
        return []
    found = []
    for alias in node.names:
        name = alias.name.value if isinstance(alias.name, cst.Name) else ""
        bound = name
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            bound = alias.asname.name.value
        found.append((bound, name))
    return found


def literal_getattr(value: cst.BaseExpression) -> cst.Attribute | None:
    """``getattr(x, "name")`` / ``getattr(x, "name", default)`` as the attribute
    ``x.name`` it reads (a node for keys only: not in the tree); None for any other
    expression, a name that is not a string literal or not an identifier."""
    if not (
        isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "getattr"
    ):
        return None
    args = value.args
    if len(args) not in (2, 3) or any(a.keyword is not None or a.star for a in args):
        return None
    name = args[1].value
    if not isinstance(name, cst.SimpleString):
        return None
    text = name.evaluated_value
    if not isinstance(text, str) or not text.isidentifier():
        return None
    return cst.Attribute(value=args[0].value, attr=cst.Name(text))


def is_attribute(node: cst.CSTNode, owner: str, attr: str) -> bool:
    """``node`` is ``<owner>.<attr>`` (``self.net``)."""
    return (
        isinstance(node, cst.Attribute)
        and node.attr.value == attr
        and isinstance(node.value, cst.Name)
        and node.value.value == owner
    )


def is_super_call(func: cst.BaseExpression) -> bool:
    """``super().name`` (the callee of ``super().name(...)``), ``super`` called bare."""
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Call)
        and not func.value.args
        and isinstance(func.value.func, cst.Name)
        and func.value.func.value == "super"
    )


def argument_for(call: cst.Call, params: list[str], name: str) -> cst.BaseExpression | None:
    """What ``call`` passes for the parameter ``name`` of ``params`` (None: the default,
    or unknown).  A keyword argument ``name=`` is what it passes, star arguments or
    not; a star argument leaves the positions from its own on in doubt."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    positional = []
    for arg in call.args:
        if arg.star:
            if name not in params or params.index(name) >= len(positional):
                return None
            break
        if arg.keyword is None:
            positional.append(arg.value)
    index = params.index(name) if name in params else len(positional)
    return positional[index] if index < len(positional) else None


def isinstance_of(test: cst.BaseExpression, name: str) -> list[str] | None:
    """The class names (last parts: ``ReLU`` of ``nn.ReLU``) ``isinstance(name, ...)``
    tests against, a tuple of them included; None for any other test."""
    if not (
        isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
    ):
        return None
    if len(test.args) != 2 or not (
        isinstance(test.args[0].value, cst.Name) and test.args[0].value.value == name
    ):
        return None
    kinds = test.args[1].value
    items = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
    found = []
    for item in items:
        dotted = dotted_name(item)
        if dotted is None:
            return None
        found.append(dotted.rsplit(".", 1)[-1])
    return found
