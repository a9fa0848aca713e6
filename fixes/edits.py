"""Edit primitives that fixes build from CST nodes, resolved to text edits later.

A fix names the nodes it changes; only when a violation is reported does the engine
compute node positions (libcst's ``PositionProvider`` costs a code-generation pass,
so it is paid only for files that have findings) and turn these into
:class:`hooklint.violation.Edit` values.  Every primitive is text-level, so the
formatting and comments around the change are kept byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Protocol

import libcst as cst

from hooklint.lexical import LINE_BREAK
from hooklint.violation import Edit, Location


class Locator(Protocol):
    """What the engine hands primitives to find text: positions, source lines (without
    their line breaks) and the file's line break."""

    newline: str

    def start(self, node: cst.CSTNode) -> Location: ...
    def end(self, node: cst.CSTNode) -> Location: ...
    def line(self, number: int) -> str: ...


def resolve_edits(primitives: Iterable, at: Locator) -> list[Edit]:
    """The text edits of a fix's primitives, every line break they write being the
    file's (primitives write ``\n``; a CRLF file gets ``\r\n``)."""
    newline = getattr(at, "newline", "\n")
    edits = []
    for primitive in primitives:
        for edit in primitive.resolve(at):
            if "\n" in edit.content or "\r" in edit.content:
                edit = replace(edit, content=LINE_BREAK.sub(newline, edit.content))
            edits.append(edit)
    return edits


@dataclass(frozen=True)
class Replace:
    """Replace a node's own text (no leading indentation, no trailing comment)."""

    node: cst.CSTNode
    text: str

    def resolve(self, at: Locator) -> list[Edit]:
        return [Edit(at.start(self.node), at.end(self.node), self.text)]


@dataclass(frozen=True)
class InsertBefore:
    """Insert text right before a node (on its line, after its indentation)."""

    node: cst.CSTNode
    text: str

    def resolve(self, at: Locator) -> list[Edit]:
        start = at.start(self.node)
        return [Edit(start, start, self.text)]


@dataclass(frozen=True)
class InsertLinesBefore:
    """Insert whole lines before a statement, at its indentation (a line may start with
    more indentation of its own: the body of an ``if`` it opens)."""

    node: cst.CSTNode
    lines: tuple[str, ...]

    def resolve(self, at: Locator) -> list[Edit]:
        indent = indentation_of(at, self.node)
        start = at.start(self.node)
        text = "".join(f"{line}\n{indent}" for line in self.lines)
        return [Edit(start, start, text)]


@dataclass(frozen=True)
class InsertAfter:
    """Insert text right after a node."""

    node: cst.CSTNode
    text: str

    def resolve(self, at: Locator) -> list[Edit]:
        end = at.end(self.node)
        return [Edit(end, end, self.text)]


@dataclass(frozen=True)
class InsertLineAfter:
    """Insert a line after the line a statement ends on, at the statement's indentation."""

    node: cst.CSTNode
    text: str

    def resolve(self, at: Locator) -> list[Edit]:
        indent = indentation_of(at, self.node)
        end = at.end(self.node).line
        spot = Location(end, len(at.line(end)) + 1)
        return [Edit(spot, spot, f"\n{indent}{self.text}")]


@dataclass(frozen=True)
class ReplaceWithLines:
    """Replace a statement's text with several lines, each at the statement's indentation."""

    node: cst.CSTNode
    lines: tuple[str, ...]

    def resolve(self, at: Locator) -> list[Edit]:
        indent = indentation_of(at, self.node)
        return [Edit(at.start(self.node), at.end(self.node), ("\n" + indent).join(self.lines))]


@dataclass(frozen=True)
class DeleteAfter:
    """Delete the text from the end of ``previous`` to the end of ``node`` (``, x=1``
    after an argument)."""

    previous: cst.CSTNode
    node: cst.CSTNode

    def resolve(self, at: Locator) -> list[Edit]:
        return [Edit(at.end(self.previous), at.end(self.node), "")]


@dataclass(frozen=True)
class IndentLines:
    """Indent every non-blank line from ``first``'s line to ``last``'s by ``unit``."""

    first: cst.CSTNode
    last: cst.CSTNode
    unit: str

    def resolve(self, at: Locator) -> list[Edit]:
        return indent_edits(at, at.start(self.first).line, at.end(self.last).line, self.unit)


@dataclass(frozen=True)
class WrapLines:
    """Put the lines from ``first``'s to ``last``'s under a new ``header`` line."""

    first: cst.CSTNode
    last: cst.CSTNode
    header: str
    unit: str

    def resolve(self, at: Locator) -> list[Edit]:
        first_line = at.start(self.first).line
        indent = indentation_of(at, self.first)
        here = Location(first_line, 1)
        edits = [Edit(here, here, f"{indent}{self.header}\n{self.unit}")]
        return edits + indent_edits(at, first_line + 1, at.end(self.last).line, self.unit)


def indent_edits(at: Locator, first_line: int, last_line: int, unit: str) -> list[Edit]:
    """Edits that indent every non-blank line from ``first_line`` to ``last_line`` by ``unit``."""
    edits = []
    for number in range(first_line, last_line + 1):
        if at.line(number).strip():
            here = Location(number, 1)
            edits.append(Edit(here, here, unit))
    return edits


@dataclass(frozen=True)
class DeleteLines:
    """Delete the whole lines a statement occupies (it must be alone on them); its
    comments (``# noqa``, ``# type: ignore``) stay, each on a line of its own."""

    node: cst.CSTNode

    def resolve(self, at: Locator) -> list[Edit]:
        first, last = at.start(self.node).line, at.end(self.node).line
        comments = comments_in(first, [at.line(n) for n in range(first, last + 1)])
        indent = indentation_of(at, self.node)
        kept = "".join(f"{indent}{text}\n" for _, _, text in comments)
        return [Edit(Location(first, 1), Location(last + 1, 1), kept)]


def comments_in(first_line: int, lines: list[str]) -> list[tuple[int, int, str]]:
    """The comments in a statement's ``lines`` (``# type: ignore``, ``# pragma: no
    cover``): ``(line, column, text)`` each, 1-based."""
    from hooklint.lexical import COMMENT, scan

    text = "\n".join(lines)
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    found = []
    for span in scan(text):
        if span.kind == COMMENT:
            index = max(i for i, s in enumerate(starts) if s <= span.start)
            found.append((first_line + index, span.start - starts[index] + 1, text[span.start : span.end]))
    return found


def indentation_of(at: Locator, node: cst.CSTNode) -> str:
    """The leading whitespace of the line a node starts on."""
    text = at.line(at.start(node).line)
    return text[: len(text) - len(text.lstrip())]


def is_docstring(statement: cst.CSTNode) -> bool:
    """Whether a statement is a docstring line (new statements go after it)."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
