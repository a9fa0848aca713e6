"""A fast walk over libcst nodes through their dataclass fields.

libcst's visitor dispatch and ``CSTNode.children`` cost about as much as the parse;
reading the fields directly, and never entering whitespace or punctuation, costs a
fifth of that.  The facts collector and the hook-body queries share this walk.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst

SKIPPED_FIELDS = frozenset(
    {
        "whitespace",
        "whitespace_before",
        "whitespace_after",
        "lpar",
        "rpar",
        "comma",
        "header",
        "footer",
        "leading_lines",
        "trailing_whitespace",
        "semicolon",
        "lines_after_decorators",
        "whitespace_after_def",
        "whitespace_before_params",
        "whitespace_before_colon",
        "whitespace_after_colon",
        "whitespace_before_indent",
        "whitespace_after_indent",
        "newline",
        "equal",
        "colon",
        "dot",
        "star",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "operator",
        "indent",
        "whitespace_after_star",
        "whitespace_after_arg",
        "asynchronous",
        "whitespace_after_at",
        "whitespace_before_from",
        "whitespace_after_import",
        "whitespace_after_from",
    }
)
LEAVES = (
    cst.SimpleString,
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.Comment,
    cst.Newline,
    cst.EmptyLine,
    cst.SimpleWhitespace,
    cst.ParenthesizedWhitespace,
    cst.TrailingWhitespace,
    cst.Pass,
    cst.Break,
    cst.Continue,
    cst.Ellipsis,
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def fields(node_type: type) -> tuple[str, ...]:
    """The fields of a node type that can hold code (whitespace and punctuation left out)."""
    names = _FIELDS.get(node_type)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(node_type) if f.name not in SKIPPED_FIELDS)
        _FIELDS[node_type] = names
    return names


#: What a field value is, for the walk: a node to enter, a sequence of them, or
#: something to skip (a leaf, a string, None).  Cached per type: ``isinstance`` on
#: libcst's abstract node classes goes through ``ABCMeta`` and is slow.
NODE, SEQUENCE, SKIP = "node", "sequence", "skip"
_KINDS: dict[type, str] = {}


def value_kind(value_type: type) -> str:
    kind = _KINDS.get(value_type)
    if kind is None:
        if issubclass(value_type, LEAVES):
            kind = SKIP
        elif issubclass(value_type, cst.CSTNode):
            kind = NODE
        elif issubclass(value_type, (tuple, list)):
            kind = SEQUENCE
        else:
            kind = SKIP
        _KINDS[value_type] = kind
    return kind


def child_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The code-bearing children of ``node``."""
    return iter(_children(node))


def _children(node: cst.CSTNode) -> list[cst.CSTNode]:
    found = []
    kinds = _KINDS
    for name in fields(type(node)):
        value = getattr(node, name)
        kind = kinds.get(type(value)) or value_kind(type(value))
        if kind is NODE:
            found.append(value)
        elif kind is SEQUENCE:
            for item in value:
                if (kinds.get(type(item)) or value_kind(type(item))) is NODE:
                    found.append(item)
    return found


#: Where a walk with ``into_functions=False`` stops (parsed trees hold these exact
#: types: a set lookup, not three ``isinstance`` calls through ``ABCMeta``).
_SCOPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef})


def contains(node: cst.CSTNode, target: cst.CSTNode, *, into_functions: bool = True) -> bool:
    """Whether ``target`` is a node below ``node`` (:func:`descendants`, by identity)."""
    return any(n is target for n in descendants(node, into_functions=into_functions))


def descendants(node: cst.CSTNode, *, into_functions: bool = True) -> Iterator[cst.CSTNode]:
    """Every code-bearing node below ``node`` (pre-order).  With ``into_functions=False``
    the bodies of nested ``def``/``lambda``/``class`` are not entered."""
    stack = _children(node)
    stack.reverse()
    scopes = () if into_functions else _SCOPES
    pop, extend = stack.pop, stack.extend
    while stack:
        current = pop()
        yield current
        if type(current) in scopes:
            continue
        children = _children(current)
        if children:
            children.reverse()
            extend(children)
