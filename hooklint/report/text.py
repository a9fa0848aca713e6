"""The human formats: ``full`` (ruff-like, with the source line and a caret) and
``concise`` (``path:line:col: CODE [*] message``; in a notebook
``path:cell N:line:col: ...``, the line counted in the cell)."""

from __future__ import annotations

from typing import Callable

from hooklint.violation import Violation

Style = Callable[..., str]


def _plain(text: str, **_: object) -> str:
    return text


def _marker(violation: Violation, unsafe: bool) -> str:
    return " [*]" if violation.is_fixable(unsafe) else ""


def _head(v: Violation, unsafe: bool, style: Style) -> str:
    where = style(f"{v.path}:{v.where}:", bold=True)
    return f"{where} {style(v.code, fg='red', bold=True)}{_marker(v, unsafe)} {v.message}"


def concise(violations: list[Violation], *, unsafe: bool = False, style: Style = _plain) -> str:
    return "".join(_head(v, unsafe, style) + "\n" for v in violations)


def full(violations: list[Violation], *, unsafe: bool = False, style: Style = _plain) -> str:
    blocks = []
    for v in violations:
        lines = [_head(v, unsafe, style)]
        if v.source_line:
            number = str(v.start.line)
            gutter = " " * len(number)
            source = v.source_line.expandtabs(1)
            width = (v.end.column - v.start.column) if v.end.line == v.start.line else len(source) - v.start.column + 1
            caret = " " * (v.start.column - 1) + "^" * max(1, width)
            lines += [
                f"{gutter} |",
                f"{number} | {source}",
                f"{gutter} | {style(caret, fg='red')} {style(v.code, fg='red')}",
                f"{gutter} |",
            ]
            if v.fix is not None:
                lines.append(f"{gutter} = help: {v.fix.message}" + ("" if v.is_fixable(unsafe) else " (unsafe fix)"))
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)
