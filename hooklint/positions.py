"""Line and column of a few nodes, without paying for every node's.

libcst's ``PositionProvider`` generates the module's code once and records a range
for each of its (hundreds of thousands of) nodes; for a large file that costs more
than parsing it.  A finding needs the positions of a handful of nodes, so this runs
the same code generation with a state that records only those, and stops after the
last of them: the same ranges (``tests/test_engine.py`` compares them with the
provider's), a fraction of the time.

It subclasses libcst's own position-recording state, so it follows libcst's rules for
what a node's range is (syntactic start and end, decorators and hoisted children).
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import contextmanager, nullcontext

import libcst as cst
from libcst._position import CodePosition, CodeRange
from libcst.metadata.position_provider import NEWLINE_RE, PositionProvidingCodegenState

_NOTHING = nullcontext()


class _Recorder:
    """Stands in for the provider: the state writes ranges into ``_computed``."""

    def __init__(self) -> None:
        self._computed: dict[cst.CSTNode, CodeRange] = {}


class _SelectiveState(PositionProvidingCodegenState):
    """Records ranges only for the wanted nodes and what lies inside them (a fix may
    ask for a part of the node it holds), and for the children a wanted range is
    hoisted from."""

    __slots__ = ("wanted", "left", "depth", "recording")

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            segments = NEWLINE_RE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        record = self.depth > 0 or node in self.wanted
        self.recording.append(record)
        if record:
            self.depth += 1
            self._stack.append(CodePosition(self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        if self.recording.pop():
            self.depth -= 1
            start = self._stack.pop()
            if node not in self.provider._computed:
                self.provider._computed[node] = CodeRange(start, CodePosition(self.line, self.column))
            self.left.discard(node)
            if not self.left and self.depth == 0:
                raise _AllRecorded  # the rest of the module holds none of them

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        if self.depth == 0:
            return _NOTHING
        return self._record(node, start_node, end_node)

    @contextmanager
    def _record(self, node, start_node, end_node):
        start = CodePosition(self.line, self.column)
        try:
            yield
        finally:
            end = CodePosition(self.line, self.column)
            computed = self.provider._computed
            start = computed[start_node].start if start_node is not None else start
            end = computed[end_node].end if end_node is not None else end
            computed[node] = CodeRange(start, end)


def positions_of(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[cst.CSTNode, CodeRange]:
    """The ranges ``PositionProvider`` would give ``nodes`` (nodes not in the module
    get none)."""
    recorder = _Recorder()
    state = _SelectiveState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        provider=recorder,  # type: ignore[arg-type]
    )
    state.wanted = set(nodes)
    state.left = set(state.wanted)  # not recorded yet
    state.depth = 0
    state.recording = []
    if state.left:
        try:
            module._codegen(state)
        except _AllRecorded:
            pass
    return recorder._computed


class _AllRecorded(Exception):
    """Every wanted node's range is recorded: the code generation stops there."""
