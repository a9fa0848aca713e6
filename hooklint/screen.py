"""Screen a file on a small part of it before linting it in full.

Most candidate files have no finding, and the evidence for one sits where a token
matched in code: the registration, the function around it, the hook it names.
:func:`screening_source` keeps only that (the rest becomes empty lines, so positions
stay put) and the engine lints it; only a file that shows a finding there is linted
again on :func:`hooklint.sparse.relevant_source`'s text, which is what is reported.

What is kept:

* *seeds*: functions (top-level, or methods of classes at any depth) whose code —
  strings and comments left out — matches a token, whole; module-level statements
  that match one;
* the definitions a seed names (hook functions, hook methods, factories; a class
  named keeps its own statements, ``__init__`` and ``__call__``, not all its methods);
* callers of a seed that passes one of its parameters to a registration (an in-file
  registration wrapper), and what those callers name;
* imports, module-level compound statements, and module-level assignments to names
  a seed mentions; all module-level code when a module-level statement is a seed
  (module-level code is one scope: what runs between a registration and a removal
  there matters).

What is dropped can only *clear* a finding (a removal, a ``with`` in another
method), so a file with a finding shows one here too; ``benchmarks/sparse_parse.py``
checks that on real code.  And since a finding here is confirmed on the fuller text,
nothing dropped can add a false one.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from hooklint.sparse import LINE, WORD, blank

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_CALLABLE_OBJECT = frozenset({"__call__", "__init__"})
#: A name not followed by a call's parenthesis: used as a value.
_REFERENCE = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\b(?!\s*\()")
#: ``name = value`` on one line (not ``==``).
_ASSIGNMENT = re.compile(r"^[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*=(?!=)([^\r\n]*)", re.MULTILINE)
_COMMENT_LINE = re.compile(r"[ \t]*#")
_MODULE_LEVEL_SIMPLE = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Assert, ast.Delete)


@dataclass(eq=False)
class _Unit:
    """A function outside any function (top-level or a method), or a class holding some."""

    node: ast.AST
    name: str
    first: int  # 1-based, decorators included
    last: int
    indent: str
    text: str  # a class's without its members
    nested: bool  # inside a class (a dropped one leaves ``pass``)
    members: list["_Unit"] = field(default_factory=list)

    def code(self, tokens: re.Pattern) -> str:
        """The text with strings and comments blanked, when that can matter."""
        if not tokens.search(self.text):
            return self.text
        return _code(self.text)

    @property
    def is_class(self) -> bool:
        return isinstance(self.node, ast.ClassDef)

    def walk(self):
        yield self
        for member in self.members:
            yield from member.walk()


def screening_source(text: str, tree: ast.Module, tokens: re.Pattern) -> str:
    """``text`` with what cannot hold the evidence for a finding replaced by empty lines."""
    lines = LINE.findall(text)
    tokens = _with_aliases(tree, tokens)
    top = list(_units(tree.body, lines, nested=False))
    units = [u for t in top for u in t.walk()]
    codes = {id(u): u.code(tokens) for u in units}
    seeds = [u for u in units if tokens.search(codes[id(u)])]
    module_level = []
    for statement in tree.body:
        if not isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
            chunk = "".join(lines[statement.lineno - 1 : statement.end_lineno or statement.lineno])
            module_level.append((statement, _code(chunk) if tokens.search(chunk) else chunk))
    module_seeds = [code for _, code in module_level if tokens.search(code)]
    if not seeds and not module_seeds:
        return ""  # the tokens matched only in strings and comments
    words: set[str] = set()  # every name a seed mentions
    hooks: set[str] = set()  # the names that may be a hook, or build one
    for code in [codes[id(u)] for u in seeds] + module_seeds:
        words.update(WORD.findall(code))
        hooks.update(_hook_names(code, tokens))
    wrappers = {u.name for u in seeds if _registers_a_parameter(u, lines, tokens)}
    if wrappers:
        calls = re.compile(tokens.pattern + "|" + "|".join(rf"\b{re.escape(w)}\b" for w in sorted(wrappers)))
        callers = [u for u in units if u not in seeds and wrappers.intersection(WORD.findall(u.text))]
        for unit in callers:
            words.update(WORD.findall(unit.text))
            hooks.update(_hook_names(_code(unit.text), calls))
    else:
        callers = []
    kept = {id(u) for u in seeds + callers}
    kept.update(id(u) for u in units if u.name in hooks)
    for unit in units:  # an instance used as a hook: what it runs and what it sets up
        if unit.is_class and unit.name in hooks:
            kept.update(id(m) for m in unit.members if m.name in _CALLABLE_OBJECT)
    _prune(top, kept, lines)
    for number, line in enumerate(lines):  # comments cost a parse and hold no evidence
        if _COMMENT_LINE.match(line):
            lines[number] = line[len(line.rstrip("\r\n")) :]
    if not module_seeds:
        for statement, _ in module_level:
            if isinstance(statement, _MODULE_LEVEL_SIMPLE) and not words.intersection(_assigned_names(statement)):
                blank(lines, statement.lineno, statement.end_lineno or statement.lineno, None)
    return "".join(lines)


def _units(statements, lines: list[str], nested: bool):
    for statement in statements:
        if not isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
            continue
        first = min([statement.lineno] + [d.lineno for d in statement.decorator_list])
        last = statement.end_lineno or statement.lineno
        line = lines[first - 1]
        indent = line[: len(line) - len(line.lstrip())]
        unit = _Unit(statement, statement.name, first, last, indent, "", nested)
        unit.members = list(_units(statement.body, lines, nested=True)) if unit.is_class else []
        inside = {n for m in unit.members for n in range(m.first, m.last + 1)}
        unit.text = "".join(lines[n - 1] for n in range(first, last + 1) if n not in inside)
        yield unit


def _prune(units: list[_Unit], kept: set[int], lines: list[str]) -> None:
    """Blank what is not kept.  A class stays when something in it is kept, so a
    dropped method needs no ``pass`` in its place."""
    for unit in units:
        if unit.is_class and any(id(u) in kept for u in unit.walk()):
            _prune(unit.members, kept, lines)
        elif id(unit) not in kept:
            blank(lines, unit.first, unit.last, None)


def _hook_names(code: str, registrations: re.Pattern) -> set[str]:
    """Names in ``code`` that may be a hook or build one: every name used as a value
    (``self._capture``, ``partial(record, ...)``), what is called inside a
    registration call (``register_forward_hook(make_hook(name))``), and what is used
    to build a name passed there (``hook = make_hook(name)``)."""
    names = set(_REFERENCE.findall(code))
    passed: set[str] = set()
    for match in registrations.finditer(code):
        arguments = _call_arguments(code, match.end())
        passed.update(WORD.findall(arguments))
    names |= passed
    for target, value in _ASSIGNMENT.findall(code):
        if target in passed:
            names.update(WORD.findall(value))
    return names


def _call_arguments(code: str, start: int) -> str:
    """The text of the call that starts at or after ``start``: from its ``(`` to the
    matching ``)`` (strings are blanked already, so parentheses are code)."""
    opening = code.find("(", start)
    if opening < 0:
        return ""
    depth = 0
    for position in range(opening, min(len(code), opening + 5000)):
        character = code[position]
        if character in "([{":
            depth += 1
        elif character in ")]}":
            depth -= 1
            if depth == 0:
                return code[opening : position + 1]
    return code[opening : opening + 5000]


#: A string literal (with its prefix, if any, in group ``prefix``), or a comment.
_STRING_OR_COMMENT = re.compile(
    r'(?P<prefix>\b[rRbBuUfF]{1,2})?'
    r'(?:"""(?:\\.|[^\\])*?"""' r"|'''(?:\\.|[^\\])*?'''"
    r'|"(?:\\.|[^"\\\n])*"' r"|'(?:\\.|[^'\\\n])*')"
    r"|#[^\r\n]*",
    re.DOTALL,
)
_NOT_A_LINE_BREAK = re.compile(r"[^\r\n]")


def _code(text: str) -> str:
    """``text`` with string literals and comments blanked, line breaks kept; f-strings
    stay (``getattr(m, f"register_{kind}_hook")`` is code)."""
    return _STRING_OR_COMMENT.sub(_blank_literal, text)


def _blank_literal(match: re.Match) -> str:
    if "f" in (match.group("prefix") or "").lower():
        return match.group(0)
    return _NOT_A_LINE_BREAK.sub(" ", match.group(0))


def _with_aliases(tree: ast.Module, tokens: re.Pattern) -> re.Pattern:
    """``tokens`` plus the local names of what a token names in an import
    (``register_module_forward_hook as add_post``: ``add_post(...)`` registers)."""
    aliases = {
        alias.asname
        for node in _module_level_imports(tree.body)
        for alias in node.names
        if alias.asname and tokens.search(alias.name)
    }
    if not aliases:
        return tokens
    return re.compile(tokens.pattern + "|" + "|".join(rf"\b{re.escape(a)}\b" for a in sorted(aliases)))


def _module_level_imports(statements):
    """Imports at module level, also under ``if``/``try`` (an import in a function
    is in its seed with the calls it aliases)."""
    for statement in statements:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            yield statement
        elif isinstance(statement, (ast.If, ast.Try, getattr(ast, "TryStar", ast.Try))):
            for block in (statement.body, statement.orelse, getattr(statement, "finalbody", [])):
                yield from _module_level_imports(block)
            for handler in getattr(statement, "handlers", []):
                yield from _module_level_imports(handler.body)


def _registers_a_parameter(unit: _Unit, lines: list[str], tokens: re.Pattern) -> bool:
    """Whether a seed passes one of its own parameters to a call on a token's line:
    an in-file registration wrapper, whose callers pass the hook."""
    node = unit.node
    if not isinstance(node, _FUNCTIONS):
        return False
    arguments = node.args
    params = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    params -= {"self", "cls"}
    if not params:
        return False
    for call in ast.walk(node):
        if not isinstance(call, ast.Call) or not tokens.search(lines[call.lineno - 1]):
            continue
        values = list(call.args) + [k.value for k in call.keywords]
        if any(isinstance(v, ast.Name) and v.id in params for v in values):
            return True
    return False


def _assigned_names(statement: ast.stmt) -> set[str]:
    targets = []
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        targets = [statement.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
