"""A fast walk over libcst nodes through their dataclass fields.

libcst's visitor dispatch and ``CSTNode.children`` cost about as much as the parse;
reading the fields directly, and never entering whitespace or punctuation, costs a
fifth of that.  The facts collector and the hook-body queries share this walk.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator

import libcst as cst

SKIPPED_FIELDS = frozenset(
    {
        "whitespace", "whitespace_before", "whitespace_after", "lpar", "rpar", "comma",
        "header", "footer", "leading_lines", "trailing_whitespace", "semicolon",
        "lines_after_decorators", "whitespace_after_def", "whitespace_before_params",
        "whitespace_before_colon", "whitespace_after_colon", "whitespace_before_indent",
        "whitespace_after_indent", "newline", "equal", "colon", "dot", "star", "lbracket",
        "rbracket", "lbrace", "rbrace", "operator", "indent", "whitespace_after_star",
        "whitespace_after_arg", "asynchronous", "whitespace_after_at",
        "whitespace_before_from", "whitespace_after_import", "whitespace_after_from",
    }
)
LEAVES = (
    cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary, cst.Comment, cst.Newline,
    cst.EmptyLine, cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace,
    cst.Pass, cst.Break, cst.Continue, cst.Ellipsis,
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def fields(node_type: type) -> tuple[str, ...]:
    """The fields of a node type that can hold code (whitespace and punctuation left out)."""
    names = _FIELDS.get(node_type)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(node_type) if f.name not in SKIPPED_FIELDS)
        _FIELDS[node_type] = names
    return names


def child_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The code-bearing children of ``node``."""
    for name in fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            if not isinstance(value, LEAVES):
                yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                if isinstance(item, cst.CSTNode) and not isinstance(item, LEAVES):
                    yield item


def descendants(node: cst.CSTNode, *, into_functions: bool = True) -> Iterator[cst.CSTNode]:
    """Every code-bearing node below ``node`` (pre-order).  With ``into_functions=False``
    the bodies of nested ``def``/``lambda``/``class`` are not entered."""
    stack = list(child_nodes(node))
    stack.reverse()
    while stack:
        current = stack.pop()
        yield current
        if not into_functions and isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        children = list(child_nodes(current))
        children.reverse()
        stack.extend(children)
