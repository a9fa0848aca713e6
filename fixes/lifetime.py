"""Fixes for HL003, HL004, HL009 and HL011: give a hook a lifetime the code can see.

Each fix rewrites a run of whole lines of one block: a registration becomes a
``with`` statement over the statements that need the hook, or the span between a
registration and its removal goes into ``try``/``finally``.  The rewrite is one text
edit over those lines (statements are re-indented by the module's indentation unit),
so comments inside the span are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst
from hooklint.fixes.edits import Locator, comments_in, indentation_of

from hooklint.analysis.facts import ModuleFacts, Registration
from hooklint.analysis.lifetime import cannot_raise, has_multiline_string, statement_path
from hooklint.analysis.statements import chains_bound, chains_read
from hooklint.violation import Edit, Location

#: A part of a rewrite: ("text", str) a new line at the block's indentation;
#: ("indent", first, last) the original lines of those statements, one level deeper;
#: ("drop", first, last) those statements removed; ("with", call) ``with <call>:``.
Part = tuple


@dataclass(frozen=True)
class RewriteBlock:
    """Rewrite the lines from the first to the last statement named in ``parts``."""

    parts: tuple[Part, ...]
    unit: str
    newline: str

    def resolve(self, at: Locator) -> list[Edit]:
        nodes = [p for p in self.parts if p[0] not in ("text", "with")]
        first_line = at.start(nodes[0][1]).line
        last_line = at.end(nodes[-1][2]).line
        indent = indentation_of(at, nodes[0][1])
        out: list[str] = []
        cursor = first_line  # the next original line not yet placed
        dropped_comments: list[str] = []  # of a dropped statement, for the line after it
        for number, part in enumerate(self.parts):
            previous = self.parts[number - 1] if number else None
            if part[0] == "text":
                out.append(indent + part[1])
                continue
            if part[0] == "with":  # ("with", call): its original text, continuation lines kept as they are
                comments = [c for c in dropped_comments if not _inside(at, part[1], c)]
                # The call's own trailing comment (`# type: ignore`) stays with it; the
                # other dropped statements' comments keep lines of their own above it.
                call_lines = range(at.start(part[1]).line, at.end(part[1]).line + 1)
                trailing = [c for c in comments if c[0] in call_lines]
                out += [indent + c[2] for c in comments if c[0] not in call_lines]
                out.append(
                    indent
                    + "with "
                    + _source_of(at, part[1], self.newline)
                    + ":"
                    + "".join("  " + c[2] for c in trailing)
                )
                dropped_comments = []
                continue
            out += [indent + c[2] for c in dropped_comments]  # a comment outlives its statement
            dropped_comments = []
            op, first, last = part
            start, end = at.start(first).line, at.end(last).line
            gap = [at.line(n) for n in range(cursor, start)]  # comments and blank lines
            lines = [at.line(n) for n in range(start, end + 1)]
            cursor = end + 1
            if previous is not None and previous[0] in ("text", "with") and out:
                # Blank lines above the statement stay above the new header line.
                blank = 0
                while blank < len(gap) and not gap[blank].strip():
                    blank += 1
                out[-1:-1] = gap[:blank]
                gap = gap[blank:]
            if op == "indent":
                out += [self.unit + line if line.strip() else line for line in gap + lines]
            else:  # drop: keep the comments above and in it, lose the statement
                out += [line for line in gap if line.strip()]
                dropped_comments = comments_in(start, lines)
        out += [indent + c[2] for c in dropped_comments]
        end_column = len(at.line(last_line)) + 1
        return [
            Edit(
                Location(first_line, 1),
                Location(last_line, end_column),
                self.newline.join(out),
            )
        ]


def _inside(at: Locator, node: cst.CSTNode, comment: tuple[int, int, str]) -> bool:
    """Whether a comment lies within a node's text (which is kept with the node)."""
    start, end = at.start(node), at.end(node)
    return (start.line, start.column) <= comment[:2] < (end.line, end.column)


def _source_of(at: Locator, node: cst.CSTNode, newline: str) -> str:
    """A node's text exactly as written (``code_for_node`` loses the indentation of
    continuation lines)."""
    start, end = at.start(node), at.end(node)
    if start.line == end.line:
        return at.line(start.line)[start.column - 1 : end.column - 1]
    lines = [at.line(start.line)[start.column - 1 :]]
    lines += [at.line(n) for n in range(start.line + 1, end.line)]
    lines.append(at.line(end.line)[: end.column - 1])
    return newline.join(lines)


def _unit(facts: ModuleFacts) -> str:
    return facts.module.default_indent


def with_over_rest(
    facts: ModuleFacts,
    statement: cst.CSTNode,
    call: cst.CSTNode,
    rest: Sequence[cst.CSTNode],
    drop: Sequence[cst.CSTNode] = (),
) -> list:
    """``statement`` becomes ``with <call>:`` over ``rest``; ``drop`` statements
    (following ``rest``, contiguous) are removed."""
    parts: list[Part] = [
        ("drop", statement, statement),
        ("with", call),
        ("indent", rest[0], rest[-1]),
    ]
    if drop:
        parts.append(("drop", drop[0], drop[-1]))
    return [RewriteBlock(tuple(parts), _unit(facts), facts.module.default_newline)]


def with_over_rest_of_block(facts: ModuleFacts, registration: Registration) -> list:
    """The registration's statement becomes ``with <registration>:`` over the rest of
    its block; no edits when there is no rest, or re-indenting it would change a
    multi-line string."""
    path = statement_path(facts, registration.site)
    if path is None:
        return []
    level = path[-1]
    rest = level.block[level.index + 1 :]
    if not rest or has_multiline_string(facts, rest):
        return []
    return with_over_rest(facts, level.statement, registration.call, rest)


def try_finally(
    facts: ModuleFacts,
    body: Sequence[cst.CSTNode],
    cleanup: Sequence[cst.CSTNode],
    acquire: cst.CSTNode | None = None,
) -> list:
    """Put ``body`` in ``try:`` and the ``cleanup`` statements that follow it in ``finally:``.

    A statement of ``body`` that binds a name the cleanup reads (``hooks = [h]`` before
    ``hooks[0].remove()``) stays above ``try``, with the statements before it: a
    ``finally`` reached before it ran would find the name unbound, or holding an older
    value, and raise in place of the error it should let through.  Those statements
    must not raise, except ``acquire``, a statement that only registers (if it raises,
    nothing is registered); when one could, there is no fix (no edits).
    """
    if not body or not cleanup:
        return []  # nothing runs between the two at this level: no `try` to add here
    reads = set().union(*(chains_read(s) for s in cleanup))
    last = max((i for i, s in enumerate(body) if chains_bound(s) & reads), default=-1)
    if last >= 0:
        if any(s is not acquire and not cannot_raise(s) for s in body[: last + 1]):
            return []
        body = body[last + 1 :]
        if not body:
            return []
    parts: tuple[Part, ...] = (
        ("text", "try:"),
        ("indent", body[0], body[-1]),
        ("text", "finally:"),
        ("indent", cleanup[0], cleanup[-1]),
    )
    return [RewriteBlock(parts, _unit(facts), facts.module.default_newline)]


@dataclass(frozen=True)
class _TryFromEarlier:
    """Start ``try_node`` at ``first``: a ``try:`` line above it, the lines from it to
    the old ``try:`` line one level deeper, that line gone."""

    first: cst.CSTNode
    try_node: cst.CSTNode
    unit: str

    def resolve(self, at: Locator) -> list[Edit]:
        first_line = at.start(self.first).line
        try_line = at.start(self.try_node).line
        out = [indentation_of(at, self.first) + "try:"]
        for number in range(first_line, try_line):
            line = at.line(number)
            out.append(self.unit + line if line.strip() else line)
        return [Edit(Location(first_line, 1), Location(try_line, len(at.line(try_line)) + 1), "\n".join(out))]


def try_from_earlier(facts: ModuleFacts, moved: Sequence[cst.CSTNode], try_node: cst.Try) -> list:
    """Move ``moved`` (the statements just above ``try_node``, in its block) into the
    start of its ``try`` body, so that its ``finally`` covers them too.  No edits when
    the ``try`` has ``except`` handlers (they would catch what the moved statements
    raise, which now reaches the caller) or an ``else``, its ``try:`` line holds a
    comment, one of them binds a name the ``finally`` reads (found unbound when it
    raised), or re-indenting them would change a multi-line string."""
    if not moved or try_node.handlers or try_node.orelse is not None or try_node.finalbody is None:
        return []
    if try_node.body.header.comment is not None or has_multiline_string(facts, moved):
        return []
    reads = chains_read(try_node.finalbody)
    if any(chains_bound(s) & reads for s in moved):
        return []
    return [_TryFromEarlier(moved[0], try_node, _unit(facts))]


def with_replacing(
    facts: ModuleFacts,
    opening: Sequence[cst.CSTNode],
    call: cst.CSTNode,
    body: Sequence[cst.CSTNode],
    closing: Sequence[cst.CSTNode],
) -> list:
    """``opening`` statements become ``with <call>:`` over ``body``; ``closing`` goes."""
    parts: tuple[Part, ...] = (
        ("drop", opening[0], opening[-1]),
        ("with", call),
        ("indent", body[0], body[-1]),
        ("drop", closing[0], closing[-1]),
    )
    return [RewriteBlock(parts, _unit(facts), facts.module.default_newline)]
