"""Edit primitives that fixes build from CST nodes, resolved to text edits later.

A fix names the nodes it changes; only when a violation is reported does the engine
compute node positions (libcst's ``PositionProvider`` costs a code-generation pass,
so it is paid only for files that have findings) and turn these into
:class:`hooklint.violation.Edit` values.  Every primitive is text-level, so the
formatting and comments around the change are kept byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import libcst as cst

from hooklint.violation import Edit, Location


class Locator(Protocol):
    """What the engine hands primitives to find text: positions and source lines."""

    def start(self, node: cst.CSTNode) -> Location: ...
    def end(self, node: cst.CSTNode) -> Location: ...
    def line(self, number: int) -> str: ...


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
class InsertAfter:
    """Insert text right after a node."""

    node: cst.CSTNode
    text: str

    def resolve(self, at: Locator) -> list[Edit]:
        end = at.end(self.node)
        return [Edit(end, end, self.text)]


@dataclass(frozen=True)
class IndentLines:
    """Indent every non-blank line from ``first``'s line to ``last``'s by ``unit``."""

    first: cst.CSTNode
    last: cst.CSTNode
    unit: str

    def resolve(self, at: Locator) -> list[Edit]:
        edits = []
        for number in range(at.start(self.first).line, at.end(self.last).line + 1):
            if at.line(number).strip():
                here = Location(number, 1)
                edits.append(Edit(here, here, self.unit))
        return edits


@dataclass(frozen=True)
class DeleteLines:
    """Delete the whole lines a statement occupies (it must be alone on them)."""

    node: cst.CSTNode

    def resolve(self, at: Locator) -> list[Edit]:
        first, last = at.start(self.node).line, at.end(self.node).line
        return [Edit(Location(first, 1), Location(last + 1, 1), "")]


def indentation_of(at: Locator, node: cst.CSTNode) -> str:
    """The leading whitespace of the line a node starts on."""
    text = at.line(at.start(node).line)
    return text[: len(text) - len(text.lstrip())]
