"""A module's summary: what other modules need to know about it, as plain data.

Computed from the module alone and serialisable as JSON (it is cached by content,
:mod:`hooklint.project.store`)::

    {"imports":   {local name: [module, name or None, level]},   # "*1": a star import
     "classes":   {name: {"line": n, "bases": [dotted name, ...], "methods": {name: FUNCTION}}},
     "functions": {name: FUNCTION}}

    FUNCTION = {"line": n, "params": [...]}        # ``self``/``cls`` left out for methods
               + "wrapper": {"hook": i, "hook_param": p, "target": j or None, "api": name or None}
                 (registers the hook passed at parameter ``i`` and returns or stores the handle)
               + "removes": {"params": [...], "attrs": ["self._hooks", ...]}
                 (removes what those parameters or ``self`` attributes hold, helpers included)
               + "returns_handles": true   (returns the handles it registers, not a wrapper)
               + "fills": ["self.handles", ...]
                 (a method that keeps every handle it registers in these ``self`` stores)

The outline (imports, classes, bases, methods) comes from CPython's AST of the whole
module, which costs a fraction of a libcst parse; the hook facts come from the facts
layer (:func:`hooklint.analysis.collector.collect` and the handle model), run only on
modules that contain a registration or a ``.remove(`` token, only on the definitions
those facts read (:func:`hooklint.sparse.summary_source`), and written only on the
entries marked hooky.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from hooklint.guarded_regex import Guarded, names_alternation, not_after_word
from hooklint.lexical import split_lines

#: Bumped when the summary's shape or meaning changes (part of the cache key).
VERSION = 7

#: A module can register or remove hooks only if one of these occurs in it (a handle's
#: ``remove()`` takes no argument: ``os.remove(path)``, ``items.remove(x)`` are not one).
_HOOK_TEXT = re.compile(r"register_\w*hook|register_\{|\.remove\([\s\\]*\)")
#: Its two halves, each starting with literal text the regex engine skips ahead to
#: (the alternation as a whole tries every position of the text).
_REGISTRATION_TEXT = re.compile(r"register_(?:\w*hook|\{)")
_REMOVAL_TEXT = re.compile(r"\.remove\([\s\\]*\)")


def has_hook_text(text: str) -> bool:
    """Whether :data:`_HOOK_TEXT` occurs in ``text`` (each of its matches holds one of
    the two words looked for first: most modules hold neither)."""
    return ("register_" in text and _REGISTRATION_TEXT.search(text) is not None) or (
        ".remove(" in text and _REMOVAL_TEXT.search(text) is not None
    )


#: What blanking turns into spaces: printable ASCII (line breaks, other whitespace
#: and non-ASCII characters stay, so each line keeps its length in characters and in
#: UTF-8 bytes, which CPython's column offsets count).
_BLANKED = str.maketrans({chr(c): " " for c in range(0x21, 0x7F)})


def hook_code(text: str, spans=None) -> str:
    """``text`` as the ``hooky`` marks read it: comments and *prose* strings blanked.

    A prose string holds whitespace (a message, documentation:
    :func:`hooklint.lexical.is_prose`); the facts read a plain string as code only as
    the attribute name of ``getattr(m, "register_forward_hook")``, which never holds
    any.  F-strings are kept (``getattr(m, f"register_{kind}_hook")``), and so are
    plain strings without whitespace.  So a def whose only registration token is in
    a warning's text or a comment is not hooky, and its module's hook facts are not
    computed for it.  ``spans``: :func:`hooklint.lexical.scan` of ``text`` when the
    caller has it."""
    from hooklint.lexical import COMMENT, STRING, is_prose, scan

    pieces: list[str] = []
    cursor = 0
    for span in scan(text) if spans is None else spans:
        literal = text[span.start : span.end]
        if span.kind == COMMENT or (span.kind == STRING and is_prose(literal)):
            pieces.append(text[cursor : span.start])
            pieces.append(literal.translate(_BLANKED))
            cursor = span.end
    if not pieces:
        return text
    pieces.append(text[cursor:])
    return "".join(pieces)


def mark_lines(text: str, spans=None) -> list[str]:
    """The lines of :func:`hook_code`, which the outline's ``hooky`` marks read."""
    return split_lines(hook_code(text, spans), keepends=True)


def summarise(text: str, hook_facts: bool = True) -> dict:
    """The summary of one module's source ``text``; an empty summary when it does not
    parse.  ``hook_facts=False``: the outline alone, each function whose code holds a
    registration or removal token (comments and prose strings left out:
    :func:`hook_code`) marked ``"hooky": true`` (what resolution needs
    first; the hook facts are computed only for a module whose hooky function a
    checked file reaches).

    The outline alone is read from the text when
    :mod:`hooklint.project.text_outline` is sure of it, without a parse; for a module
    with hook text its ``hooky`` marks then include every mark the parse gives and
    may add a few (a name defined twice, one body with a token: say): such a
    mark only makes :meth:`~hooklint.project.resolve.FileView.facts_of` compute the
    hook facts, which come from the parse and say the def is not hooky."""
    from hooklint.engine import python_ast

    hook_text = has_hook_text(text)
    if not (hook_text and hook_facts):  # the outline alone: read from the text
        found = outline_from_text(text, hook_text)
        if found is not None:
            return found
    try:
        tree = python_ast(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {"imports": {}, "classes": {}, "functions": {}}
    summary = _outline(tree, mark_lines(text) if hook_text else None)
    if hook_facts and hook_text:
        try:
            _add_hook_facts(text, tree, summary)
        except (RecursionError, ValueError, MemoryError):
            pass  # the outline alone: what cannot be analysed is unknown, never a finding
        except Exception as exc:  # libcst's parser errors
            if type(exc).__name__ != "ParserSyntaxError":
                raise
    return summary


def outline_from_text(text: str, hook_text: bool | None = None) -> dict | None:
    """The outline :mod:`hooklint.project.text_outline` reads from ``text``, with
    ``hooky`` marks when it holds hook text (``hook_text``: :func:`has_hook_text` of
    it, when the caller knows); None when the reader is not sure of it."""
    from hooklint.project.text_outline import text_outline

    return text_outline(text, marks=has_hook_text(text) if hook_text is None else hook_text)


def is_summary(data) -> bool:
    """Whether ``data`` (read back from the cache) has a summary's shape, field by field."""
    if not isinstance(data, dict) or set(data) != {"imports", "classes", "functions"}:
        return False
    imports, classes, functions = data["imports"], data["classes"], data["functions"]
    if not (isinstance(imports, dict) and isinstance(classes, dict) and isinstance(functions, dict)):
        return False
    for value in imports.values():
        if not (
            isinstance(value, list)
            and len(value) == 3
            and isinstance(value[0], str)
            and (value[1] is None or isinstance(value[1], str))
            and type(value[2]) is int
        ):
            return False
    for entry in classes.values():
        if not (
            isinstance(entry, dict)
            and type(entry.get("line")) is int
            and isinstance(entry.get("bases"), list)
            and all(isinstance(b, str) for b in entry["bases"])
            and isinstance(entry.get("methods"), dict)
            and all(_is_function(f) for f in entry["methods"].values())
        ):
            return False
    return all(_is_function(f) for f in functions.values())


def _is_function(entry) -> bool:
    if not (
        isinstance(entry, dict) and type(entry.get("line")) is int and isinstance(entry.get("params"), list)
    ):
        return False
    if not all(isinstance(p, str) for p in entry["params"]):
        return False
    if any(entry.get(flag, True) is not True for flag in ("hooky", "returns_handles")):
        return False  # absent or true (``1 == True``: compared by identity)
    wrapper = entry.get("wrapper")
    if wrapper is not None and not (
        isinstance(wrapper, dict)
        and type(wrapper.get("hook")) is int
        and isinstance(wrapper.get("hook_param"), str)
        and (wrapper.get("target") is None or type(wrapper.get("target")) is int)
        and (wrapper.get("api") is None or isinstance(wrapper.get("api"), str))
    ):
        return False
    fills = entry.get("fills")
    if fills is not None and not (isinstance(fills, list) and all(isinstance(x, str) for x in fills)):
        return False
    removes = entry.get("removes")
    if removes is not None and not (
        isinstance(removes, dict)
        and all(
            isinstance(removes.get(k), list) and all(isinstance(x, str) for x in removes[k])
            for k in ("params", "attrs")
        )
    ):
        return False
    return True


def outline_of(text: str, tree: ast.Module | None = None, spans=None) -> dict:
    """The outline alone (imports, classes, methods): what the checked file itself
    contributes to resolution, its hook facts being the file's own analysis
    (``tree``: CPython's AST of ``text`` when the caller has it; ``spans``: its
    comments and strings, :func:`hooklint.lexical.scan`)."""
    if tree is None:
        return summarise(text, hook_facts=False)
    return _outline(tree, mark_lines(text, spans) if has_hook_text(text) else None)


# -- the outline (CPython's AST) -----------------------------------------------------------
def _hooky(node, lines: list[str] | None) -> bool:
    """Whether the code of ``node``'s body (its signature and docstring left out: a
    ``def register_forward_hook`` that only stores the hook registers nothing) holds
    a registration or removal token (``lines``: of :func:`hook_code`)."""
    if lines is None:
        return False
    return has_hook_text(_body_text(node, lines))


def _body_text(node, lines: list[str]) -> str:
    body = node.body
    if (
        len(body) > 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]  # the docstring
    first = body[0]
    head = lines[first.lineno - 1]
    if head.isascii():  # col_offset counts UTF-8 bytes: on another line, the whole line
        head = head[first.col_offset :]
    return head + "".join(lines[first.lineno : node.end_lineno or first.lineno])


def _entry(node, lines: list[str] | None, method: bool) -> dict:
    entry = {"line": node.lineno, "params": _params(node, method=method)}
    if _hooky(node, lines):
        entry["hooky"] = True
    return entry


def _outline(tree: ast.Module, lines: list[str] | None = None) -> dict:
    imports: dict[str, list] = {}
    classes: dict[str, dict] = {}
    functions: dict[str, dict] = {}
    for node in _top_level(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    imports[alias.asname] = [alias.name, None, 0]
                else:
                    top = alias.name.split(".", 1)[0]
                    imports[top] = [top, None, 0]
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":  # re-exports everything: keyed "*1", "*2", ... in order
                    imports[f"*{sum(1 for k in imports if k.startswith('*')) + 1}"] = [
                        node.module or "",
                        "*",
                        node.level,
                    ]
                else:
                    imports[alias.asname or alias.name] = [node.module or "", alias.name, node.level]
        elif isinstance(node, ast.ClassDef):
            defs = [item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
            methods = {item.name: _entry(item, lines, method=True) for item in defs}
            _spread_hooky(defs, methods, lines)
            bases = [name for name in (_dotted(b) for b in node.bases) if name]
            classes[node.name] = {"line": node.lineno, "bases": bases, "methods": methods}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[node.name] = _entry(node, lines, method=False)
    defs = [n for n in _top_level(tree.body) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    _spread_hooky(defs, functions, lines)
    return {"imports": imports, "classes": classes, "functions": functions}


def calls_of(names) -> Guarded:
    """A search for a call of one of ``names`` by its name (``attach(``, not
    ``reattach(``): what spreads a ``hooky`` mark one call deep, in both readers."""
    return Guarded(names_alternation(names) + r"\s*\(", not_after_word)


def _spread_hooky(defs, entries: dict[str, dict], lines: list[str] | None) -> None:
    """A function that calls a hooky function of the same class or module is hooky too
    (a wrapper that registers through its class's dispatch helper), one call deep."""
    if lines is None:
        return
    hooky = [name for name, entry in entries.items() if entry.get("hooky")]
    if not hooky:
        return
    calls = calls_of(hooky)
    for node in defs:
        entry = entries.get(node.name)
        if entry is not None and not entry.get("hooky") and calls.search(_body_text(node, lines)):
            entry["hooky"] = True


def _top_level(body):
    """Module-level statements, through ``if``/``try`` blocks (``TYPE_CHECKING``,
    optional imports)."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_level(node.body)
            for handler in node.handlers:
                yield from _top_level(handler.body)
            yield from _top_level(node.orelse)
        else:
            yield node


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Subscript):  # Generic[T], nn.ModuleList[...]
        node = node.value
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _params(node, method: bool) -> list[str]:
    args = node.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    is_static = any(_dotted(d) == "staticmethod" for d in node.decorator_list)
    if method and not is_static and names:
        names = names[1:]
    return names


# -- hook facts (the facts layer) ----------------------------------------------------------
def _add_hook_facts(text: str, tree: ast.Module, summary: dict, narrow: bool = True) -> None:
    """Wrappers and removal helpers of the module's hooky functions (the only entries
    :meth:`~hooklint.project.resolve.FileView.facts_of` reads), from the facts of
    those definitions and what they call: the lint's sparse text narrowed further
    (:func:`hooklint.sparse.summary_source`), so the rest of a large module is never
    parsed by libcst.  ``narrow=False``: from the lint's sparse text itself (the
    equivalence tests compare the two)."""
    from hooklint.analysis.collector import collect
    from hooklint.analysis.handles import handle_model
    from hooklint.engine import _without_blank_lines, parse_module
    from hooklint.lexical import lex
    from hooklint.sparse import relevant_source, summary_source

    if narrow:
        from hooklint.analysis.effects import MAX_DEPTH
        from hooklint.analysis.handles import HELPER_DEPTH

        hooky = {(None, n) for n, e in summary["functions"].items() if e.get("hooky")}
        hooky.update(
            (c, n) for c, k in summary["classes"].items() for n, e in k["methods"].items() if e.get("hooky")
        )
        lint_text = relevant_source(text, tree, _HOOK_TEXT)
        sparse = summary_source(text, tree, hooky, max(HELPER_DEPTH, MAX_DEPTH) + 1, lint_text)
    else:
        sparse = relevant_source(text, tree, _HOOK_TEXT)
    code, _ = _without_blank_lines(sparse, lex(text))
    facts = collect(parse_module(code))
    from hooklint.analysis.wrappers import infer_wrappers

    inferred = infer_wrappers(facts)
    calls: dict[int, list] = {}
    for call in facts.calls:
        calls.setdefault(id(call.site.function), []).append(call)
    registered = {id(r.call) for r in facts.registrations}
    defined = {info.name for info in facts.functions}
    model = None
    for info in facts.functions:
        if info.parent is not None:
            continue
        if info.class_name is not None:
            entry = summary["classes"].get(info.class_name, {}).get("methods", {}).get(info.name)
        else:
            entry = summary["functions"].get(info.name)
        if entry is None or not entry.get("hooky"):
            continue  # only a hooky entry's facts are read (``FileView.facts_of``)
        own = calls.get(id(info.node), [])
        if any(id(c.node) in registered or isinstance(c.node.func, cst.Name) for c in own):
            wrapper = _wrapper(facts, info, inferred, own, registered)
            if wrapper is not None:
                entry["wrapper"] = wrapper
        # Only a function that removes, or calls a same-file function that may, can remove.
        if any(c.attr == "remove" or (c.attr or c.callee) in defined for c in own):
            model = model or handle_model(facts)
            params, attrs = model.removed_by(info)
            if params or attrs:
                entry["removes"] = {"params": sorted(params), "attrs": sorted(attrs)}
        # Only a function that registers, or calls a same-file function that may, acquires.
        if any(id(c.node) in registered or (c.attr or c.callee) in defined for c in own):
            model = model or handle_model(facts)
            if "wrapper" not in entry and model.returns_handles(info):
                entry["returns_handles"] = True
            elif info.class_name is not None:
                fills = model.own_stores_filled(info)
                if fills:
                    entry["fills"] = sorted(fills)


_KEEPING_ROLES = ("returned", "bound", "appended", "exit_stack")


def _wrapper(facts, info, inferred_wrappers, own_calls, registered: set[int]) -> dict | None:
    """How ``info`` registers the hook it is given, when it does: a parameter passed
    as the hook of a registration (directly, or called inside a nested ``def`` that
    is the registered hook), the handle returned or stored.  A registration through
    a local name bound to a same-class method that returns
    ``getattr(target, f"register_{kind}_hook")`` counts (llm-compressor's
    ``HooksMixin`` shape)."""
    params = _own_params(info)
    inferred = inferred_wrappers.get(info.name)
    if inferred is not None and inferred.class_name == info.class_name:
        return {
            "hook": inferred.hook_index,
            "hook_param": inferred.hook_param,
            "target": inferred.target_index,
            "api": inferred.api.name if inferred.api is not None else None,
        }
    registrars = _local_registrars(facts, info)
    for call in own_calls:
        node = call.node
        direct = id(node) in registered
        target = None
        if not direct:
            if not (isinstance(node.func, cst.Name) and node.func.value in registrars):
                continue
            target = registrars[node.func.value]
        if call.use.final.role not in _KEEPING_ROLES:
            continue
        for arg in node.args:
            if arg.keyword is not None or arg.star:
                continue
            hook_param = _hook_param(info, arg.value, params)
            if hook_param is not None:
                return {
                    "hook": params.index(hook_param),
                    "hook_param": hook_param,
                    "target": target,
                    "api": None,
                }
    return None


def _own_params(info) -> list[str]:
    params = info.params
    if info.class_name is not None and "staticmethod" not in info.decorators and params:
        params = params[1:]
    return params


def _hook_param(info, value, params: list[str]) -> str | None:
    """The parameter that ``value`` (a registration's hook argument) stands for."""
    import libcst as cst

    from hooklint.analysis.walk import descendants

    if not isinstance(value, cst.Name):
        return None
    if value.value in params:
        return value.value
    nested = info.nested.get(value.value)
    if nested is None:
        return None
    for node in descendants(nested.node):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in params:
            return node.func.value
    return None


def _local_registrars(facts, info) -> dict[str, int | None]:
    """Local names of ``info`` bound to ``self.m(...)`` where method ``m`` of the same
    class returns a ``getattr(x, "register_..."``) dispatch; each with the position
    (among ``info``'s parameters) of the target it was given, when it is one."""
    import libcst as cst

    from hooklint.analysis.walk import descendants

    found: dict[str, int | None] = {}
    if info.class_name is None:
        return found
    params = _own_params(info)
    for node in descendants(info.node, into_functions=False):
        if not (
            isinstance(node, cst.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0].target, cst.Name)
        ):
            continue
        value = node.value
        if not (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and isinstance(value.func.value, cst.Name)
            and value.func.value.value == "self"
        ):
            continue
        method = facts.method(info.class_name, value.func.attr.value)
        if method is None or not _returns_dispatch(method):
            continue
        target = None
        if value.args and isinstance(value.args[0].value, cst.Name) and value.args[0].value.value in params:
            target = params.index(value.args[0].value.value)
        found[node.targets[0].target.value] = target
    return found


def _returns_dispatch(method) -> bool:
    import libcst as cst

    from hooklint.analysis.walk import descendants

    for node in descendants(method.node, into_functions=False):
        if not (isinstance(node, cst.Return) and isinstance(node.value, cst.Call)):
            continue
        call = node.value
        if isinstance(call.func, cst.Name) and call.func.value == "getattr" and len(call.args) >= 2:
            name = call.args[1].value
            if (
                isinstance(name, cst.FormattedString)
                and name.parts
                and isinstance(name.parts[0], cst.FormattedStringText)
            ):
                if name.parts[0].value.startswith("register_"):
                    return True
    return False
