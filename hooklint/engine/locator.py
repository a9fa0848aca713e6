"""Where the findings are: 1-based lines and columns of the nodes findings and their
fixes name (only those: :mod:`hooklint.positions`), mapped back to the file's lines
when the parsed code was a part of them."""

from __future__ import annotations

from hooklint.lexical import newline_of, split_lines
from hooklint.violation import Location


class _Locator:
    """Positions of nodes, as 1-based lines and columns: computed for the nodes the
    findings name (:mod:`hooklint.positions`), and for the whole module should any
    other be asked for."""

    def __init__(self, module, text: str, nodes, line_numbers: list[int] | None = None) -> None:
        from hooklint.positions import positions_of

        self.module = module
        self.positions = positions_of(module, nodes)
        self.lines = split_lines(text)
        #: The file's line break: every line a fix writes ends with it.
        self.newline = newline_of(text)
        #: For a module parsed from some of ``text``'s lines: each parsed line's number in ``text``.
        self.line_numbers = line_numbers

    def _range(self, node):
        found = self.positions.get(node)
        if found is None:
            self.positions = self.every_position()
            found = self.positions[node]
        return found

    def every_position(self) -> dict:
        from libcst.metadata import MetadataWrapper, PositionProvider

        return dict(MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider))

    def start(self, node) -> Location:
        return self._location(self._range(node).start)

    def end(self, node) -> Location:
        return self._location(self._range(node).end)

    def _location(self, position) -> Location:
        line = position.line
        if self.line_numbers is not None:
            # The end of the last line is the start of the (absent) next one.
            line = (
                self.line_numbers[line - 1] if line <= len(self.line_numbers) else self.line_numbers[-1] + 1
            )
        return Location(line, position.column + 1)

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 1 <= number <= len(self.lines) else ""


def _nodes_named(findings) -> set:
    """The nodes whose positions the findings and their fixes need: every node held
    by a finding's fix primitives (in fields, tuples of them, nested primitives)."""
    import dataclasses

    import libcst

    nodes = set()
    stack = []
    for _, finding in findings:
        nodes.add(finding.node)
        nodes.update(r for r in finding.related if not isinstance(r, Location))
        stack.extend(finding.fix_edits or ())
    while stack:
        value = stack.pop()
        if isinstance(value, libcst.CSTNode):
            nodes.add(value)
        elif isinstance(value, (tuple, list)):
            stack.extend(value)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            stack.extend(getattr(value, f.name) for f in dataclasses.fields(value))
    return nodes
