"""The guard in front of libcst's native parser: code nested deeper than it can
parse is refused with one message instead of crashing the process."""

from __future__ import annotations

import ast

from hooklint.lexical import line_starts

#: The deepest expression libcst is given.  Its native parser recurses once per level
#: and overflows the C stack (a segfault, not an exception) near 7,000 levels on an
#: 8 MB stack; the analysis in Python gives up near 500 anyway.
MAX_NESTING = 1000


class TooDeeplyNested(RecursionError):
    """Code nested deeper than :data:`MAX_NESTING` as libcst counts (one message)."""

    def __init__(self, line: int) -> None:
        super().__init__(
            f"too deeply nested for the analyzer (over {MAX_NESTING} levels, line {line}); not analysed"
        )
        self.line = line


def check_nesting(tree: ast.Module, text: str) -> None:
    """Raise :class:`TooDeeplyNested` when an expression in ``tree`` is nested deeper
    than libcst can parse.  CPython's own guards do not see every case: ``ast``
    flattens ``a and b and c`` into one node where libcst nests a node per operator.

    Each level takes at least one character of source, so only expressions spanning
    half of :data:`MAX_NESTING` characters or more (a margin for columns counted in
    UTF-8 bytes) are walked: none in most files."""
    least = MAX_NESTING // 2
    if len(text) < least:
        return
    starts = line_starts(text)

    def span(node) -> int:
        first = (
            node.decorator_list[0] if getattr(node, "decorator_list", None) else node
        )  # ``lineno`` is the ``def``'s
        return (
            starts[node.end_lineno - 1]
            - starts[first.lineno - 1]
            + node.end_col_offset
            - first.col_offset
            + 1
        )

    blocks = (ast.stmt, ast.excepthandler, ast.match_case)
    stack: list = list(tree.body)
    while stack:
        node = stack.pop()
        if span(node) < least:
            continue  # most statements
        if not hasattr(node, "body"):  # a simple statement
            if _depth(node) > MAX_NESTING:
                raise TooDeeplyNested(node.lineno)
            continue
        for name in node._fields:  # a block: its header's expressions, its statements
            value = getattr(node, name, None)
            for child in value if isinstance(value, list) else (value,):
                if isinstance(child, blocks):
                    stack.append(child)
                elif type(child) is ast.arguments:
                    if any(
                        span(d) >= least and _depth(d) > MAX_NESTING
                        for d in (*child.defaults, *child.kw_defaults)
                        if d is not None
                    ):
                        raise TooDeeplyNested(node.lineno)
                elif (
                    isinstance(child, ast.AST)
                    and (not hasattr(child, "end_lineno") or span(child) >= least)
                    and _depth(child) > MAX_NESTING
                ):
                    raise TooDeeplyNested(getattr(child, "lineno", node.lineno))


def _depth(root: ast.AST) -> int:
    """How deep libcst will nest ``root``: a node per level, and ``a and b and c``
    (one ``ast.BoolOp``) as a chain of ``len(values) - 1`` operations."""
    deepest = 0
    stack = [(root, 1)]
    node_type = ast.AST
    while stack:
        node, depth = stack.pop()
        if type(node) is ast.BoolOp:
            depth += len(node.values) - 1
        if depth > deepest:
            deepest = depth
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                stack.extend((child, depth + 1) for child in value if isinstance(child, node_type))
            elif isinstance(value, node_type):
                stack.append((value, depth + 1))
    return deepest
