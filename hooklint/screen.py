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
    lines: list[str] = field(repr=False)
    members: list["_Unit"] = field(default_factory=list)

    def code(self, tokens: re.Pattern) -> str:
        """The text with strings and comments blanked, when that can matter (it costs
        a walk of the definition's syntax tree)."""
        if not tokens.search(self.text):
            return self.text
        inside = {n for m in self.members for n in range(m.first, m.last + 1)}
        return _code(self.node, self.lines, skip_lines=inside)

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
            module_level.append((statement, _code(statement, lines) if tokens.search(chunk) else chunk))
    module_seeds = [code for _, code in module_level if tokens.search(code)]
    if not seeds and not module_seeds:
        return ""  # the tokens matched only in strings and comments
    words: set[str] = set()
    for code in [codes[id(u)] for u in seeds] + module_seeds:
        words.update(WORD.findall(code))
    wrappers = {u.name for u in seeds if _registers_a_parameter(u, lines, tokens)}
    callers = [u for u in units if u not in seeds and wrappers.intersection(WORD.findall(u.text))]
    for unit in callers:
        words.update(WORD.findall(unit.text))
    kept = {id(u) for u in seeds + callers}
    kept.update(id(u) for u in units if u.name in words)
    for unit in units:  # an instance used as a hook: what it runs and what it sets up
        if unit.is_class and unit.name in words:
            kept.update(id(m) for m in unit.members if m.name in _CALLABLE_OBJECT)
    _prune(top, kept, lines)
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
        unit = _Unit(statement, statement.name, first, last, indent, "", nested, lines)
        unit.members = list(_units(statement.body, lines, nested=True)) if unit.is_class else []
        inside = {n for m in unit.members for n in range(m.first, m.last + 1)}
        unit.text = "".join(lines[n - 1] for n in range(first, last + 1) if n not in inside)
        yield unit


def _prune(units: list[_Unit], kept: set[int], lines: list[str]) -> None:
    for unit in units:
        if unit.is_class and any(id(u) in kept for u in unit.walk()):
            _prune(unit.members, kept, lines)  # the class stays, with the methods kept
        elif id(unit) not in kept:
            blank(lines, unit.first, unit.last, unit.indent if unit.nested else None)


def _code(node: ast.AST, lines: list[str], skip_lines: set[int] = frozenset()) -> str:
    """The node's source lines with string literals and comments blanked (f-strings
    stay: ``getattr(m, f"register_{kind}_hook")`` is code)."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    last = node.end_lineno or node.lineno
    chunk = {n: lines[n - 1] for n in range(first, last + 1) if n not in skip_lines}
    for string in _strings(node):
        for number in range(string.lineno, (string.end_lineno or string.lineno) + 1):
            if number not in chunk:
                continue
            line = chunk[number]
            start = _column(line, string.col_offset) if number == string.lineno else 0
            end = _column(line, string.end_col_offset) if number == string.end_lineno else len(line.rstrip("\r\n"))
            chunk[number] = line[:start] + " " * (end - start) + line[end:]
    return "".join(_without_comment(chunk[n]) for n in sorted(chunk))


def _strings(node: ast.AST):
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.JoinedStr):
            continue
        if isinstance(current, ast.Constant) and isinstance(current.value, (str, bytes)):
            yield current
            continue
        stack.extend(ast.iter_child_nodes(current))


def _column(line: str, utf8_offset: int | None) -> int:
    """ast's UTF-8 byte offset as a character index into ``line``."""
    if utf8_offset is None:
        return 0
    if line.isascii():
        return utf8_offset
    return len(line.encode("utf-8")[:utf8_offset].decode("utf-8", errors="ignore"))


def _without_comment(line: str) -> str:
    """Strings are blanked already, so a ``#`` left starts a comment."""
    hash_at = line.find("#")
    if hash_at < 0:
        return line
    return line[:hash_at] + line[len(line.rstrip("\r\n")) :]


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
