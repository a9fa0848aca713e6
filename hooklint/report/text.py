"""The human formats: ``full`` and ``concise`` (``path:line:col: CODE [*] message``; in a notebook
``path:cell N:line:col: ...``, the line counted in the cell).

``full`` starts each finding with the concise line (so that grep and editors' problem
matchers read both formats alike), then a snippet drawn as ruff 0.17 draws it: the
finding's lines with two lines of context either side (blank lines at the edges
dropped), carets under a one-line finding, and for a finding over several lines a
``/`` ... ``|`` bar down its lines ending in ``|___^`` under its last character; then
``help:`` with the fix, and a ``note:`` when the fix is unsafe.  The file's text
comes from ``sources`` (path -> lines); without it (or when it no longer matches
what was checked) the snippet is the finding's first line alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from hooklint.violation import Violation

Style = Callable[..., str]
CONTEXT = 2


def _plain(text: str, **_: object) -> str:
    return text


def _marker(violation: Violation, unsafe: bool) -> str:
    return " [*]" if violation.is_fixable(unsafe) else ""


def _head(v: Violation, unsafe: bool, style: Style) -> str:
    where = style(f"{v.path}:{v.where}:", bold=True)
    return f"{where} {style(v.code, fg='red', bold=True)}{_marker(v, unsafe)} {v.message}"


def concise(violations: list[Violation], *, unsafe: bool = False, style: Style = _plain, **_: object) -> str:
    return "".join(_head(v, unsafe, style) + "\n" for v in violations)


def _lines_for(v: Violation, sources: Mapping[str, Sequence[str]] | None) -> tuple[int, list[str]] | None:
    """(first line number, lines) to draw: the finding's lines and their context, when
    the file's text is known and still holds the finding's first line as checked."""
    lines = sources.get(v.path) if sources else None
    if not lines or v.cell is not None or not 1 <= v.start.line <= v.end.line <= len(lines):
        return None
    if v.source_line and lines[v.start.line - 1] != v.source_line:
        return None
    first = max(1, v.start.line - CONTEXT)
    last = min(len(lines), v.end.line + CONTEXT)
    while first < v.start.line and not lines[first - 1].strip():
        first += 1
    while last > v.end.line and not lines[last - 1].strip():
        last -= 1
    return first, list(lines[first - 1 : last])


def _snippet(v: Violation, sources, style: Style) -> list[str]:
    found = _lines_for(v, sources)
    if found is None:
        if not v.source_line:
            return []
        first, shown = v.start.line, [v.source_line]
        end_line = v.start.line
    else:
        first, shown = found
        end_line = v.end.line
    width = len(str(first + len(shown) - 1))
    gutter = " " * width
    multi = end_line > v.start.line
    out = [f"{gutter} |"]
    for offset, raw in enumerate(shown):
        number = first + offset
        text = raw.expandtabs(1)  # one column per character, as positions count them
        if not multi:
            out.append(f"{number:>{width}} | {text}".rstrip())
            if number == v.start.line:
                if end_line == v.start.line and v.end.line == v.start.line:
                    span = max(1, v.end.column - v.start.column)
                else:  # only the first line is known: mark it to its end
                    span = max(1, len(text) - v.start.column + 1)
                carets = " " * (v.start.column - 1) + "^" * span
                out.append(f"{gutter} | {style(carets, fg='red')}")
            continue
        if number < v.start.line or number > end_line:
            bar = "  "
        elif number == v.start.line:
            bar = style("/", fg="red") + " "
        else:
            bar = style("|", fg="red") + " "
        out.append(f"{number:>{width}} | {bar}{text}".rstrip())
        if number == end_line:
            last_character = max(1, v.end.column - 1)
            out.append(f"{gutter} | " + style("|" + "_" * last_character + "^", fg="red"))
    out.append(f"{gutter} |")
    return out


def full(
    violations: list[Violation],
    *,
    unsafe: bool = False,
    style: Style = _plain,
    sources: Mapping[str, Sequence[str]] | None = None,
    **_: object,
) -> str:
    blocks = []
    for v in violations:
        lines = [_head(v, unsafe, style), *_snippet(v, sources, style)]
        if v.fix is not None:
            lines.append(f"{style('help', bold=True)}: {v.fix.message}")
            if v.fix.applicability != "safe":
                lines.append(
                    f"{style('note', bold=True)}: This is an unsafe fix and may change runtime behavior"
                    + ("" if v.is_fixable(unsafe) else " (applied with `--unsafe-fixes`)")
                )
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)
