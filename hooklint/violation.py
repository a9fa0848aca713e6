"""Violations and fixes as plain data: what rules produce and reporters print.

Positions are 1-based lines and 1-based columns (as ruff reports them), counted in
characters.  A :class:`Fix` is a list of non-overlapping text edits with an
applicability: ``safe`` fixes are applied by ``--fix``, ``unsafe`` ones need
``--unsafe-fixes`` too.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

SAFE = "safe"
UNSAFE = "unsafe"


@dataclass(frozen=True, order=True)
class Location:
    line: int
    column: int


@dataclass(frozen=True, order=True)
class Place(Location):
    """A position in another file (cross-file evidence: a base class, an imported helper)."""

    path: str = ""


@dataclass(frozen=True)
class Edit:
    """Replace the text from ``start`` to ``end`` (exclusive) with ``content``."""

    start: Location
    end: Location
    content: str


@dataclass(frozen=True)
class Fix:
    message: str
    applicability: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Violation:
    code: str
    name: str
    message: str
    path: str
    start: Location
    end: Location
    fix: Fix | None = None
    #: Why a fix exists but is not offered (e.g. it needs a newer torch than the target).
    fix_withheld: str | None = None
    source_line: str = field(default="", compare=False)
    #: Where else the same bug is (the first site is ``start``).
    related: tuple[Location, ...] = ()
    #: For a notebook: the cell (1-based, among all its cells) that ``start`` and ``end`` are in.
    cell: int | None = None

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.start.line, self.start.column, self.code)

    @property
    def where(self) -> str:
        """``line:col``, or ``cell N:line:col`` in a notebook (as ruff writes it)."""
        position = f"{self.start.line}:{self.start.column}"
        return position if self.cell is None else f"cell {self.cell}:{position}"

    def is_fixable(self, unsafe: bool) -> bool:
        return self.fix is not None and (self.fix.applicability == SAFE or unsafe)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Violation:
        fix = data.get("fix")
        if fix is not None:
            fix = Fix(
                fix["message"],
                fix["applicability"],
                tuple(Edit(Location(**e["start"]), Location(**e["end"]), e["content"]) for e in fix["edits"]),
            )
        return cls(
            code=data["code"],
            name=data["name"],
            message=data["message"],
            path=data["path"],
            start=Location(**data["start"]),
            end=Location(**data["end"]),
            fix=fix,
            fix_withheld=data.get("fix_withheld"),
            source_line=data.get("source_line", ""),
            related=tuple(Place(**r) if "path" in r else Location(**r) for r in data.get("related", ())),
            cell=data.get("cell"),
        )
