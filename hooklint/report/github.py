"""``--format github``: GitHub Actions workflow-command annotations."""

from __future__ import annotations

from hooklint.violation import Violation


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _position(v: Violation) -> list[str]:
    """The annotation's lines; none in a notebook (a cell's lines are not the
    ``.ipynb`` file's: the annotation is on the file, and its message says where)."""
    if v.cell is not None:
        return []
    return [
        f"line={v.start.line}",
        f"col={v.start.column}",
        f"endLine={v.end.line}",
        f"endColumn={v.end.column}",
    ]


def _in_cell(v: Violation) -> str:
    return "" if v.cell is None else f"{v.where}: "


def render(violations: list[Violation], **_: object) -> str:
    lines = []
    for v in violations:
        properties = ",".join(
            [
                f"title={_property(f'hooklint ({v.code})')}",
                f"file={_property(v.path)}",
                *_position(v),
            ]
        )
        lines.append(f"::error {properties}::{_data(f'{_in_cell(v)}{v.code} {v.message}')}\n")
    return "".join(lines)
