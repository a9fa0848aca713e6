"""Parse only what can matter: definitions that hold nothing a rule looks for are
blanked out before libcst sees the file.

libcst's parser is the dominant cost of a check (about 7,000 lines a second), and
in large files the hooks usually sit in one or two functions.  CPython's parser,
ten times faster, has already read the file (it guards libcst against deeply nested
input), so its statement spans are free.

A top-level ``def`` or ``class``, or a method of a kept class, is dropped when its
text matches no prefilter token, mentions no hook and no removal (:data:`ALWAYS_KEPT`:
a handle registered elsewhere may be removed, or its hooks disabled, there), and its
name is not mentioned by a relevant definition (a function or method used as a hook
stays), by a method kept for the state it shares with kept code, or as the base of
a kept class (which says whether its ``self`` is an ``nn.Module``), and no kept code
calls it, a few calls deep (a removal helper of a kept teardown stays).  Everything else — imports,
assignments, module-level ``if``/``try`` blocks, class attributes — is kept.  Rules
that reason about every use of a name in the module (``Rule.whole_module``) get the
whole file.

Dropped lines become empty lines (a dropped method leaves a ``pass`` on its first
line, so its class body stays valid), so every kept node keeps its line and column:
positions, fixes and ``# noqa`` work on the original text unchanged.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from hooklint.analysis.vocabulary import TENSOR_HOOK_METHODS
from hooklint.guarded_regex import (
    NO_NAME_OR_SELF_DOT,
    CalledNames,
    Guarded,
    after_no_name_or_dot,
    after_no_self_or_cls,
    names_alternation,
    not_after_word,
)
from hooklint.lexical import logical_lines, split_lines

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
#: Text that keeps a definition whatever the selected rules' tokens are.
ALWAYS_KEPT = ("remove", "hook", "__exit__")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: A name called as a function or as a method of ``self``/``cls``.
_CALLED = CalledNames(NO_NAME_OR_SELF_DOT)
_SELF_ATTRIBUTE = Guarded(r"self\.([A-Za-z_][A-Za-z0-9_]*)", not_after_word)
_HANDS_OUT = re.compile(r"\b(?:return|yield)\b(.*)")
#: Where a line puts a value: ``h = ...``, ``self.hs[k] = ...``, ``hs.append(...)``.
_BOUND = re.compile(
    r"^\s*((?:self\.)?[A-Za-z_][A-Za-z0-9_]*)\s*(?:\[[^\]]*\])?\s*[+]?=[^=]"
    r"|\b((?:self\.)?[A-Za-z_][A-Za-z0-9_]*)\.(?:append|extend|add|insert|update|setdefault)\("
)


def _binds(line: str) -> set[str]:
    """The names ``line`` binds or fills (:data:`_BOUND`: ``h = ...``, ``hs.append(...)``)."""
    return {name for pair in _BOUND.findall(line) for name in pair if name}


def _names_one_of(line: str, names: set[str]) -> bool:
    """Whether ``line`` names one of ``names`` as a whole word (a substring test first:
    most lines name none)."""
    return any(name in line for name in names) and not names.isdisjoint(WORD.findall(line))


def _statements(code: str, registers: re.Pattern) -> list[str]:
    """The lines of ``code`` to read a registration's statement from: its physical
    lines when each line matching ``registers`` binds, fills or returns on that line
    (the common case), else its logical lines (:func:`~hooklint.lexical.logical_lines`:
    ``hooks[k] = (\n    m.register_forward_hook(f),\n)`` is one statement)."""
    lines = split_lines(code)
    if all(_BOUND.search(line) or _HANDS_OUT.search(line) for line in lines if registers.search(line)):
        return lines
    return logical_lines(code)


def hands_out(code: str, registers: re.Pattern, statements: list[str] | None = None) -> bool:
    """Whether ``code`` returns or yields what a line matching ``registers`` produced:
    the registration itself (``return m.register_forward_hook(f)``), or a name or store
    such a line binds or fills (``hs.append(reg(...))`` … ``return hs``).  A function
    that returns something else hands out no handle."""
    bound: set[str] = set()
    outs: list[str] = []
    for line in statements if statements is not None else _statements(code, registers):
        out = _HANDS_OUT.search(line)
        if out is not None:
            outs.append(out.group(1))
        if registers.search(line):
            if out is not None:
                return True
            bound |= _binds(line)
        elif _names_one_of(line, bound):
            # ``handle = reg(...)`` … ``handles.append(handle)``: the store holds it too
            bound |= _binds(line)
    if not bound:
        return False
    named = Guarded(names_alternation(sorted(bound)) + r"\b", after_no_name_or_dot)
    return any(named.search(out) for out in outs)


#: ``module._handle = ...``: a value kept on an attribute of a plain name.
_KEPT_ON_ATTRIBUTE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\.[A-Za-z_][A-Za-z0-9_]*\s*=[^=]")
#: A ``def`` header, to its closing parenthesis.
_HEADER = re.compile(r"\bdef\s+\w+\s*\(([^)]*)\)")


def keeps_on_parameter(
    code: str, registers: re.Pattern, passes: bool = False, statements: list[str] | None = None
) -> bool:
    """Whether a function keeps what a line matching ``registers`` returns on an
    attribute of one of its parameters (``module._handle =
    module.register_forward_hook(fn)``), or puts it into one (``handles.append(
    module.register_forward_hook(fn))``): its callers acquire what the object they
    pass then holds (a pair of helpers, ``attach(m)`` … ``detach(m)``; an installer
    filling the caller's list).  The parameters of its nested defs count (a def that
    ``model.apply(install)`` runs).  ``passes``: ``registers`` matches calls of such
    functions, not registrations (a caller a level up): handing one of them a
    parameter (``attach(module)``, ``module.apply(attach)``) keeps it too."""
    params: set[str] = set()
    for header in _HEADER.finditer(code):  # a nested def's too (``model.apply(attach)`` runs it)
        names = set(WORD.findall(header.group(1)))
        if header.start() > 0 and code[header.start() - 1] != "\n":
            names -= {"self", "cls"}  # a method's instance (a module function's ``self`` is a parameter)
        params |= names
    if not params:
        return False
    bound: set[str] = set()  # ``h = m.register_forward_hook(fn)`` … ``m._h = h``
    for line in statements if statements is not None else _statements(code, registers):
        found = registers.search(line)
        kept = _KEPT_ON_ATTRIBUTE.match(line)
        if found is None:
            if _names_one_of(line, bound):
                if kept is not None and kept.group(1) in params:
                    return True  # ``module._h = h``
                if _binds(line) & params:
                    return True  # ``handles.append(h)``
            continue
        bound |= _binds(line)
        if kept is not None and kept.group(1) in params:
            return True
        if _binds(line) & params:
            return True
        if passes and _PASSES_ON.match(line) and params.intersection(WORD.findall(line)):
            return True  # a filler's call handed a parameter: ``attach(m)``, ``m.apply(attach)``
    return False


#: A call statement whose value is dropped (``attach(module)``, ``model.apply(fn)``).
_PASSES_ON = re.compile(r"^\s*[A-Za-z_][\w.]*\s*\(")


def _constructor_keeps(code: str, registers: re.Pattern) -> bool:
    """Whether a class's code (or its ``__init__``'s) has an ``__init__`` and keeps
    what a line matching ``registers`` returns on ``self`` (``self.handles.append(
    m.register_forward_hook(fn))``, also through a local: ``h = m.register_forward_hook(fn)``
    and a line of ``self`` that names ``h``): building the object acquires hooks, which
    its callers own (a superset: the lines may sit in another method)."""
    if "__init__" not in code:
        return False
    statements = _statements(code, registers)
    local: set[str] = set()
    for line in statements:
        if registers.search(line):
            bound = _binds(line)
            if any(n.startswith("self.") for n in bound):
                return True
            local |= {n for n in bound if n.isidentifier()}
    return bool(local) and any("self." in line and _names_one_of(line, local) for line in statements)


#: ``.apply(`` (``Module.apply`` runs its function on every submodule), or
#: ``.apply(partial(``: what comes next is run, not handed out.
APPLIED = r"\.apply\(\s*(?:(?:functools\.)?partial\(\s*)?"


#: ``fn.__get__(``: ``fn`` bound to an object as its method.
BOUND_METHOD = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\.__get__\(")


def acquiring_calls(patterns: list[str]) -> re.Pattern:
    """What a caller acquires from the definitions ``patterns`` name, it gets by calling
    them (``h = attach(m)``, ``model.apply(attach)``: ``fns = [self.attach]`` hands out a
    function, not its handles)."""
    called = [p for p in patterns if p.endswith(r"\(")]  # a call already
    named = "|".join(p for p in patterns if not p.endswith(r"\("))
    if named:
        called += [f"(?:{named})(?=\\s*\\()", f"{APPLIED}(?:{named})"]
    return re.compile("|".join(called))


def owner_calls(
    name: str, code: str, is_class: bool, registers: re.Pattern, passes: bool = False
) -> str | None:
    """A regex for the calls that make a caller of ``name`` the owner of what its code
    registers, or None: a function or method that returns or yields the handles it
    registers (:func:`hands_out`) or keeps them on its parameter's attribute
    (:func:`keeps_on_parameter`), or a class through ``Cls.apply(...)`` (an
    ``autograd.Function``, whose ``forward`` runs on the caller's arguments) and,
    when its constructor keeps handles on ``self`` (:func:`_constructor_keeps`),
    through ``Cls(...)``.  Such callers are evidence.  ``passes``: see
    :func:`keeps_on_parameter`."""
    if is_class:
        applied = re.escape(name) + r"\.apply\b"
        if _constructor_keeps(code, registers):  # ``probe = Probe(model)`` … ``probe.close()``
            return applied + r"|\b" + re.escape(name) + r"\s*\("
        return applied
    statements = _statements(code, registers)  # read once, for both questions
    if hands_out(code, registers, statements) or keeps_on_parameter(code, registers, passes, statements):
        return r"\b" + re.escape(name) + r"\b"
    return None


@dataclass
class _Definition:
    name: str
    first: int  # 1-based, decorators included
    last: int
    indent: str
    text: str
    is_method: bool
    relevant: bool
    is_class: bool
    bases: tuple[str, ...] = ()  # the names a class's bases mention
    owner: str | None = None  # the class of a method
    decorators: tuple[str, ...] = ()  # the last names of its decorators
    params: frozenset[str] = frozenset()  # a function's parameters, ``self``/``cls`` left out


def _relevant(text: str, tokens: re.Pattern) -> bool:
    return tokens.search(text) is not None or any(word in text for word in ALWAYS_KEPT)


#: A context manager's own halves, which a class extending a token's class (``class
#: Offload(saved_tensors_hooks):``) hands on to its base's with ``super()``.
DELEGATING = frozenset({"__enter__", "__exit__"})


def base_words(node: ast.ClassDef) -> list[str]:
    """The names and attribute names the class's bases are written with (``torch``,
    ``autograd``, ``graph``, ``saved_tensors_hooks``)."""
    return [
        n.id if isinstance(n, ast.Name) else n.attr
        for b in node.bases
        for n in ast.walk(b)
        if isinstance(n, (ast.Name, ast.Attribute))
    ]


def _definitions(
    statements,
    lines: list[str],
    tokens: re.Pattern,
    is_method: bool,
    owner: str | None = None,
    extends: bool = False,
):
    """``extends``: the class being walked extends a token's class (``class
    Offload(saved_tensors_hooks):``), so its ``__enter__``/``__exit__``, which hand on to
    the base's, are relevant."""
    for statement in statements:
        if not isinstance(statement, _DEFINITIONS):
            continue
        first = min([statement.lineno] + [d.lineno for d in statement.decorator_list])
        last = statement.end_lineno or statement.lineno
        text = "".join(lines[first - 1 : last])
        relevant = (extends and statement.name in DELEGATING) or _relevant(text, tokens)
        indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
        is_class = isinstance(statement, ast.ClassDef)
        bases = (
            tuple(n.id for b in statement.bases for n in ast.walk(b) if isinstance(n, ast.Name))
            if is_class
            else ()
        )
        decorators = tuple(last_name(d) for d in statement.decorator_list)
        yield _Definition(
            statement.name,
            first,
            last,
            indent,
            text,
            is_method,
            relevant,
            is_class,
            bases,
            owner,
            decorators,
            frozenset() if is_class else parameters(statement),
        )
        if relevant and isinstance(statement, ast.ClassDef):
            extended = any(tokens.search(word) for word in base_words(statement))
            yield from _definitions(
                statement.body, lines, tokens, is_method=True, owner=statement.name, extends=extended
            )


def relevant_source(text: str, tree: ast.Module, tokens: re.Pattern) -> str:
    """``text`` with irrelevant definitions replaced by empty lines."""
    lines = split_lines(text, keepends=True)
    definitions = list(_definitions(tree.body, lines, tokens, is_method=False))
    candidates = [d for d in definitions if not d.relevant]
    if not candidates:
        return text
    # Keep what the relevant code mentions by name (hook functions, hook methods,
    # helpers), one level deep: a transitive closure would keep most of a large file.
    kept_words: set[str] = set()
    for d in definitions:
        if d.relevant and not d.is_class:  # a class's relevant methods speak for it
            kept_words.update(WORD.findall(d.text))
    for statement in tree.body:  # module-level code may register through aliases
        if not isinstance(statement, _DEFINITIONS):
            chunk = "".join(lines[statement.lineno - 1 : statement.end_lineno or statement.lineno])
            kept_words.update(WORD.findall(chunk))
    # Callers that own what relevant code hands out (the handles a helper returns, an
    # autograd.Function's forward run through ``Cls.apply``) stay; and, for callers that
    # hand them on in turn (a start function over a model), their callers, a few levels up.
    from hooklint.analysis.effects import MAX_DEPTH

    owned: list[str] = []
    level, registers = [d for d in definitions if d.relevant], tokens
    for _ in range(MAX_DEPTH):
        passes = registers is not tokens
        fresh = [p for d in level if (p := owner_calls(d.name, d.text, d.is_class, registers, passes))]
        fresh = [p for p in dict.fromkeys(fresh) if p not in owned]
        if not fresh:
            break
        owned += fresh
        callers = re.compile("|".join(owned))
        level = [d for d in candidates if d.name not in kept_words and callers.search(d.text)]
        kept_words.update(d.name for d in level)
        registers = acquiring_calls(owned)
    # Callers of a function that hooks a tensor it is given (``def watch(t, sink):
    # t.register_hook(...)``): what they pass says whether it is a new activation.
    hooking = [
        d.name
        for d in definitions
        if d.relevant and not d.is_class and not d.params.isdisjoint(_TENSOR_HOOKED.findall(d.text))
    ]
    if hooking:
        calls_them = re.compile(r"\b(?:" + "|".join(map(re.escape, hooking)) + r")\s*\(")
        kept_words.update(d.name for d in candidates if calls_them.search(d.text))
    # The methods of a class that run a registering method of it (``self._watch()``), a
    # few calls up: a loop there decides whether the method's handle store starts anew
    # on every pass (:func:`hooklint.analysis.passes.rebound_per_pass`).
    from hooklint.analysis.passes import REBIND_DEPTH

    frontier = {(d.owner, d.name) for d in definitions if d.relevant and d.is_method}
    for _ in range(REBIND_DEPTH):
        calls: dict[str | None, re.Pattern] = {}  # per class: ``self.m(`` of a frontier method
        for owner in {owner for owner, _ in frontier}:
            called = sorted(name for o, name in frontier if o == owner)
            calls[owner] = re.compile(r"\bself\.(?:" + "|".join(map(re.escape, called)) + r")\s*\(")
        fresh = {
            (d.owner, d.name)
            for d in candidates
            if d.is_method and d.name not in kept_words and d.owner in calls and calls[d.owner].search(d.text)
        }
        if not fresh:
            break
        kept_words.update(name for _, name in fresh)
        frontier = fresh
    # A call on another object (``tap.attach(fn)``) of a method that registers or removes,
    # itself or through what it calls (the handle model's ``other_object_method``): its
    # caller stays, and so does every other definition of that method (which decides
    # the call's target).
    direct = {d.name for d in definitions if not d.is_class and (tokens.search(d.text) or "remove" in d.text)}
    acting = {
        d.name
        for d in definitions
        if d.is_method and (d.name in direct or not direct.isdisjoint(_CALLED.findall(d.text)))
    }
    if acting:
        other = Guarded(
            r"\.\s*" + names_alternation(sorted(acting), capture=True) + r"\s*\(", after_no_self_or_cls
        )
        called_on_others = set(other.findall(text))
        if called_on_others:
            defines = re.compile(
                r"\bdef\s+(?:" + "|".join(re.escape(n) for n in sorted(called_on_others)) + r")\b"
            )
            kept_words |= called_on_others
            kept_words.update(
                d.name for d in candidates if other.search(d.text) or (d.is_class and defines.search(d.text))
            )
    # Functions bound to an object as its methods (``m.stop = stop.__get__(m)``) run as
    # ``m.stop()``, a call the names below do not see: they stay.
    if "__get__" in text:
        kept_words.update(BOUND_METHOD.findall(text))
    # What kept code calls stays too, to MAX_DEPTH calls deep: a hook's state changes may
    # sit in a helper of a helper (hooklint.analysis.effects follows them that far).
    from hooklint.analysis.effects import MAX_DEPTH

    reached = [d for d in candidates if d.name in kept_words]
    for _ in range(MAX_DEPTH - 1):
        called = {w for d in reached for w in _CALLED.findall(d.text)} - kept_words
        kept_words |= called
        reached = [d for d in candidates if d.name in called]
    # A method that touches the state kept code touches (``self.store``) stays: it may
    # consume a capture (a hook kept by name fills the store, and a fix removes the
    # handle where the store is read) or remove a handle kept there.
    shared_state = set()
    for d in definitions:
        if not d.is_class and (d.relevant or d.name in kept_words):
            shared_state.update(_SELF_ATTRIBUTE.findall(d.text))
    candidates = [
        d
        for d in candidates
        if d.name not in kept_words
        and not (d.is_method and shared_state.intersection(_SELF_ATTRIBUTE.findall(d.text)))
    ]
    candidates = _without_lifecycles(definitions, candidates)
    # What a kept class derives from, and the classes a method kept for its state
    # names (``self.head = Layer()`` in ``__init__``), say what its attributes are.
    dropped = {id(d) for d in candidates}
    named: set[str] = set()
    for d in definitions:
        if id(d) not in dropped:
            named.update(d.bases)
            if not d.relevant and not d.is_class and d.is_method:
                named.update(WORD.findall(d.text))
    while named:
        classes = [d for d in candidates if d.is_class and d.name in named]
        if not classes:
            break
        named = {b for d in classes for b in d.bases}
        candidates = [d for d in candidates if d not in classes]
    candidates = _without_callees(definitions, candidates, MAX_DEPTH + 1)
    for d in candidates:
        _blank(lines, d.first, d.last, d.indent if d.is_method else None)
    return "".join(lines)


#: ``t.register_hook(``: a tensor hook put on a name.
_TENSOR_HOOKED = re.compile(
    r"\b([A-Za-z_]\w*)\s*\.\s*(?:" + "|".join(sorted(TENSOR_HOOK_METHODS)) + r")\s*\("
)


def parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """A def's parameters that a call's arguments name (positional and keyword ones),
    ``self``/``cls`` left out."""
    arguments = node.args
    named = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
    return frozenset(a.arg for a in named) - {"self", "cls"}


def _without_callees(
    definitions: list[_Definition], candidates: list[_Definition], depth: int
) -> list[_Definition]:
    """Keep (take out of ``candidates``) what any kept code calls by name, ``depth``
    calls deep (the handle model follows removal helpers one call more than
    ``MAX_DEPTH``): a removal there decides whether a handle is removed, outside
    ``finally`` or not, or leaks.  A kept class's methods speak for it, unless it is
    kept whole."""
    dropped = {id(d) for d in candidates}
    reached = [d for d in definitions if id(d) not in dropped and not (d.is_class and d.relevant)]
    called: set[str] = set()
    for _ in range(depth):
        fresh = {w for d in reached for w in _CALLED.findall(d.text)} - called
        if not fresh:
            break
        called |= fresh
        reached = [d for d in candidates if d.name in fresh]
    return [d for d in candidates if d.name not in called] if called else candidates


def _blank(lines: list[str], first: int, last: int, method_indent: str | None) -> None:
    """Empty lines ``first..last`` (1-based) of ``lines`` (which keep their line
    breaks); a dropped method leaves ``pass`` so that its class stays valid."""
    for index in range(first - 1, last):
        line = lines[index]
        lines[index] = line[len(line.rstrip("\r\n")) :]
    if method_indent is not None:
        lines[first - 1] = method_indent + "pass" + lines[first - 1]


def last_name(node: ast.expr) -> str:
    """The last name of a decorator or callee: ``contextmanager`` of
    ``@contextlib.contextmanager``, ``wraps`` of ``@functools.wraps(f)``."""
    while isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _without_lifecycles(definitions: list[_Definition], candidates: list[_Definition]) -> list[_Definition]:
    """Keep (take out of ``candidates``) what says whether hooks outlive a lifecycle
    (HL016): a ``@contextmanager`` function or a setup method with its teardown in the
    class that mentions kept code (an installer it calls), and the teardown paired with
    a kept method."""
    from hooklint.analysis.vocabulary import lifecycle_partners, lifecycle_teardowns

    dropped = {id(d) for d in candidates}
    kept = [d for d in definitions if id(d) not in dropped and not d.is_class]
    methods: dict[str | None, set[str]] = {}
    for d in definitions:
        if d.is_method:
            methods.setdefault(d.owner, set()).add(d.name)
    names = {d.name for d in kept}
    mentions = Guarded(names_alternation(sorted(names)) + r"\b", not_after_word) if names else None
    keep: set[int] = set()
    for d in candidates:
        if d.is_class or mentions is None:
            continue
        setup = "contextmanager" in d.decorators or (
            d.is_method and not methods.get(d.owner, set()).isdisjoint(lifecycle_teardowns(d.name))
        )
        if setup and mentions.search(d.text):
            keep.add(id(d))
    for d in candidates:
        if d.is_method and id(d) not in keep:
            if any(k.owner == d.owner and d.name in lifecycle_partners(k.name) for k in kept if k.is_method):
                keep.add(id(d))
            elif any(
                id(k) in keep and k.owner == d.owner and d.name in lifecycle_partners(k.name)
                for k in candidates
            ):
                keep.add(id(d))
    return [d for d in candidates if id(d) not in keep]


def _removes(node: ast.AST) -> bool:
    """Whether a definition's code may remove a handle as the handle model reads one:
    ``h.remove`` (called, passed, or ``getattr(h, "remove")``) or a call of a function
    whose name says it removes (``remove_hooks(hs)``, ``self._removeAll()``)."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and inner.attr == "remove":
            return True
        if isinstance(inner, ast.Constant) and inner.value == "remove":
            return True
        if isinstance(inner, ast.Call) and "remove" in last_name(inner.func).lower():
            return True
    return False


#: What a definition may run by name: any call, whatever it is called on (``self.m(``,
#: ``tap.attach(``, ``f(``), a method named on ``self``/``cls`` (``net.apply(self.m)``),
#: and a function handed to ``apply``.
_RUNS = re.compile(
    r"([A-Za-z_][A-Za-z0-9_]*)\s*\(|\b(?:self|cls)\.([A-Za-z_][A-Za-z0-9_]*)|\bapply\(\s*([A-Za-z_][A-Za-z0-9_]*)"
)


def summary_source(
    text: str, tree: ast.Module, hooky: set[tuple[str | None, str]], depth: int, lint_text: str | None = None
) -> str:
    """``text`` narrowed for a module summary's hook facts
    (:func:`hooklint.project.summary._add_hook_facts`), which are read only for the
    ``hooky`` definitions (``(class name or None, name)``, of the module's top level):
    those stay, with every definition of a name they may run (:data:`_RUNS`), ``depth``
    calls deep, every function or method that removes (:func:`_removes`: a class's
    removing methods say which of its stores are emptied), and everything that is not
    a top-level function or a method of a top-level class (imports, assignments, class
    headers and attributes, ``if``/``try`` blocks); the other functions and methods are
    blanked as :func:`relevant_source` blanks them.  Not the lint's text: its relevance
    rules (callers, shared state, lifecycles) keep far more.  ``lint_text``: the lint's
    sparse text of the module (:func:`relevant_source`), what it blanks blanked too (a
    summary's facts have been read from it: a hooky method that it drops, called
    by nothing relevant, gets none)."""
    lines = split_lines(text, keepends=True)
    definitions: list[tuple[str | None, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            definitions.append((None, statement))
        elif isinstance(statement, ast.ClassDef):
            definitions.extend(
                (statement.name, item)
                for item in statement.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            )
    spans = {}
    for _owner, node in definitions:
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        spans[id(node)] = (first, node.end_lineno or node.lineno)
    reached = [node for owner, node in definitions if (owner, node.name) in hooky]
    kept = {id(node) for node in reached}
    names: set[str] = set()
    for _ in range(depth):
        fresh = set()
        for node in reached:
            first, last = spans[id(node)]
            fresh.update(w for groups in _RUNS.findall("".join(lines[first - 1 : last])) for w in groups if w)
        fresh -= names
        if not fresh:
            break
        names |= fresh
        reached = [node for _, node in definitions if node.name in fresh and id(node) not in kept]
        kept.update(id(node) for node in reached)
    for owner, node in definitions:
        if id(node) not in kept and not _removes(node):
            first, last = spans[id(node)]
            indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
            _blank(lines, first, last, indent if owner is not None else None)
    if lint_text is not None:
        # Both keep every line's number: a line that the lint's text changed is its.
        original = split_lines(text, keepends=True)
        lines = [
            theirs if theirs != before else mine
            for before, mine, theirs in zip(
                original, lines, split_lines(lint_text, keepends=True), strict=True
            )
        ]
    return "".join(lines)
