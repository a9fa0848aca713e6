"""Jupyter notebooks (``.ipynb``): their code cells as one module, and back.

A notebook is read with the standard library's ``json`` (never ``nbformat``).  Its
code cells are joined into one module, each cell followed by a separator comment
line (``# hooklint-cell: N``), so that cell boundaries survive the linting and the
fixing: positions map back to ``(cell, line, column)`` (:meth:`Notebook.locate`,
cells numbered from 1 among all the notebook's cells, as ruff and editors count
them), and a fix that would move code across a boundary (an indented or moved
separator) is rolled back (:meth:`Notebook.keeps_cells`).

IPython syntax is masked so that the module parses, one line for one line, the
columns of every other line kept: ``%time CODE`` and ``%timeit CODE`` keep their code
(one complete line of it), in its columns, as ``pass; CODE``; other line magics
(``%matplotlib inline``), shell escapes (``!pip list``, ``files = !ls``), help
(``obj?``, ``?obj``), and their backslash continuations become ``pass`` (or
``name = None``; a continuation line, a comment), each with a marker comment; a cell
whose first line is a cell magic with a non-Python body (``%%bash``) is left out.
Masked lines are never rewritten: :meth:`Notebook.render` puts each back as it was
(with the new indentation, should a fix have re-indented it).

:meth:`Notebook.render` writes fixed cells into the notebook's own JSON text: only
the ``source`` values of the changed cells are replaced, in the notebook's own style
(a list of lines or one string; an item of an unchanged line keeps its exact text),
so outputs, metadata, indentation, key order and the final newline stay byte for
byte.
"""

from __future__ import annotations

import bisect
import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from hooklint.lexical import split_lines
from hooklint.violation import Edit, Fix, Location, Violation

SUFFIX = ".ipynb"
#: Cell magics whose body is Python (linted); any other cell magic's cell is left out.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
_SEPARATOR = "# hooklint-cell: {}\n"
_SEPARATOR_LINE = re.compile(r"# hooklint-cell: (\d+)\n\Z")
_MASK = "  # hooklint-masked: {}"
_MASKED_LINE = re.compile(
    r"(?P<indent>[ \t]*)(?:[^\r\n]*?  )?# hooklint-masked: (?P<n>\d+)(?P<end>\r\n|\r|\n|)\Z"
)
#: ``%time CODE`` / ``%timeit CODE`` (no options): the code is kept, as ``pass; CODE``.
_TIMED = re.compile(r"(?P<indent>[ \t]*)(?P<magic>%timeit|%time)(?P<gap>[ \t]+)(?P<code>[^-\s][^\r\n]*)")
#: ``name = !cmd``, ``a, b = %magic ...``: the assignment is kept, its value masked.
_ASSIGNED_MAGIC = re.compile(
    r"(?P<target>[ \t]*[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=)[ \t]*[%!]"
)


class NotebookError(ValueError):
    """A notebook that cannot be read; the message is the one-line diagnostic."""


@dataclass
class _Cell:
    number: int  # 1-based, among all cells
    source_span: tuple[int, int]  # the ``source`` value's span in the JSON text
    items: list[tuple[str, tuple[int, int]]] | None  # source as a list: each line and its item's span
    text: str  # the cell's code
    masked: list[str]  # its lines (with breaks) as linted
    first_line: int = 0  # where it starts in the joined code (1-based)


@dataclass
class Notebook:
    """A parsed notebook: its JSON text and the code of its code cells."""

    text: str
    cells: list[_Cell]
    #: Every masked line's original text, by the number in its marker.
    masks: list[str] = field(default_factory=list)
    code: str = ""
    ascii_only: bool = False

    # -- positions ---------------------------------------------------------------
    def locate(self, location: Location) -> tuple[int | None, Location]:
        """A position in :attr:`code` as ``(cell number, position in the cell)``."""
        if not self.cells:
            return None, location
        starts = [cell.first_line for cell in self.cells]
        index = max(0, bisect.bisect_right(starts, location.line) - 1)
        cell = self.cells[index]
        return cell.number, Location(location.line - cell.first_line + 1, location.column)

    def where(self, location: Location) -> str:
        """``cell N:line:col`` of a position in :attr:`code`."""
        cell, here = self.locate(location)
        return f"cell {cell}:{here.line}:{here.column}"

    def map_violation(self, violation: Violation) -> Violation:
        """A violation found in :attr:`code`, with its positions in its cell.  A fix
        that also edits other cells (HL001: the hook in one cell, its registration in
        another) is still applied by ``--fix`` (each edit stays in its cell), but its
        edits are not listed: an edit's position names no cell."""
        if violation.cell is not None:
            return violation  # mapped already (the run index holds mapped results)
        cell, start = self.locate(violation.start)
        end_cell, end = self.locate(violation.end)
        if end_cell != cell:  # ends at the separator after its cell: the cell's end
            end = Location(len(self._cell(cell).masked) + 1, 1)
        fix = violation.fix
        if fix is not None:
            edits = []
            for edit in fix.edits:
                (a, edit_start), (b, edit_end) = self.locate(edit.start), self.locate(edit.end)
                if a != cell or b != cell:
                    edits = []
                    break
                edits.append(Edit(edit_start, edit_end, edit.content))
            fix = Fix(fix.message, fix.applicability, tuple(edits))
        related = tuple(self.locate(r)[1] for r in violation.related)
        lines = split_lines(self._cell(cell).text) if cell is not None else []
        source_line = lines[start.line - 1] if 1 <= start.line <= len(lines) else violation.source_line
        return Violation(
            violation.code,
            violation.name,
            violation.message,
            violation.path,
            start,
            end,
            fix,
            violation.fix_withheld,
            source_line,
            related,
            cell=cell,
        )

    def _cell(self, number: int | None) -> _Cell:
        return next(c for c in self.cells if c.number == number)

    # -- fixing ------------------------------------------------------------------
    def keeps_cells(self, code: str) -> bool:
        """Whether fixed ``code`` still has every cell separator, unmoved and in order."""
        return self._split(code) is not None

    def _split(self, code: str) -> list[list[str]] | None:
        """Fixed ``code``'s lines, cell by cell; None when a separator is missing,
        moved, re-indented or out of order, or a left-out cell got code."""
        if not self.cells:
            return [] if not code.strip() else None
        parts: list[list[str]] = [[]]
        expected = iter([cell.number for cell in self.cells[:-1]])
        for line in split_lines(code, keepends=True):
            if "# hooklint-cell: " in line:
                match = _SEPARATOR_LINE.match(line)
                if match is None or int(match.group(1)) != next(expected, None):
                    return None
                parts.append([])
            else:
                parts[-1].append(line)
        if len(parts) != len(self.cells):
            return None
        if any(part and not cell.masked for cell, part in zip(self.cells, parts)):
            return None
        return parts

    def render(self, code: str) -> str | None:
        """The notebook's JSON text with its code cells replaced by fixed ``code``
        (None if ``code`` lost a cell boundary)."""
        parts = self._split(code)
        if parts is None:
            return None
        replacements = []
        for cell, lines in zip(self.cells, parts):
            text = "".join(self._unmask(line) for line in lines)
            if not cell.text.endswith(("\n", "\r")) and text.endswith("\n"):
                text = text[:-1]
            if text != cell.text and cell.masked:
                replacements.append((cell.source_span, self._source_json(cell, text)))
        result = self.text
        for (start, end), value in sorted(replacements, reverse=True):
            result = result[:start] + value + result[end:]
        return result

    def _unmask(self, line: str) -> str:
        match = _MASKED_LINE.match(line) if "# hooklint-masked: " in line else None
        if match is None:
            return line
        original = self.masks[int(match.group("n"))]
        body = original.rstrip("\r\n")
        stripped = body.lstrip(" \t")
        indent = body[: len(body) - len(stripped)]
        if match.group("indent") != indent:
            body = match.group("indent") + stripped
        return body + match.group("end")

    def _dumps(self, value: str) -> str:
        return json.dumps(value, ensure_ascii=self.ascii_only)

    def _source_json(self, cell: _Cell, text: str) -> str:
        """``text`` as a ``source`` value in the style of the cell's current one."""
        if cell.items is None:
            return self._dumps(text)
        start, end = cell.source_span
        old = self.text[start:end]
        new_lines = split_lines(text, keepends=True)
        old_lines = [line for line, _ in cell.items]
        tokens = []
        matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
        for tag, a0, a1, b0, b1 in matcher.get_opcodes():
            if tag == "equal":
                tokens.extend(self.text[s:e] for _, (s, e) in cell.items[a0:a1])
            else:
                tokens.extend(self._dumps(line) for line in new_lines[b0:b1])
        if not tokens:
            return "[]"
        if cell.items and len(cell.items) > 1:  # the separator between two items, as written
            first_end, second_start = cell.items[0][1][1], cell.items[1][1][0]
            between = self.text[first_end:second_start]
        else:
            between = None
        opening = old[1 : cell.items[0][1][0] - start] if cell.items else ""
        closing = old[cell.items[-1][1][1] - start : -1] if cell.items else ""
        if between is None:  # one item before: a separator in the style of the opening
            between = "," + (opening if "\n" in opening else " ")
        return "[" + opening + between.join(tokens) + closing + "]"

    # -- diffs -------------------------------------------------------------------
    def cell_texts(self) -> dict[int, str]:
        return {cell.number: cell.text for cell in self.cells}


def diff(path: str, original: str, fixed: str) -> list[str]:
    """Unified diffs of each changed code cell (``--- path:cell N``), as ruff shows them."""
    before, after = parse(original).cell_texts(), parse(fixed).cell_texts()
    lines: list[str] = []
    for number, text in before.items():
        new = after.get(number, text)
        if new != text:
            name = f"{path}:cell {number}"
            old_lines, new_lines = split_lines(text, keepends=True), split_lines(new, keepends=True)
            for lines_ in (old_lines, new_lines):
                if lines_ and not lines_[-1].endswith(("\n", "\r")):
                    lines_[-1] += "\n"
            lines.extend(difflib.unified_diff(old_lines, new_lines, fromfile=name, tofile=name))
    return lines


# -- reading ---------------------------------------------------------------------
def parse(text: str) -> Notebook:
    """A notebook's JSON text as a :class:`Notebook`; :class:`NotebookError` (one line)
    when it is not JSON or not shaped as nbformat 4 describes."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(
            f"not a valid notebook: invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise NotebookError("not a valid notebook: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise NotebookError("not a valid notebook: the JSON is not an object")
    if "cells" not in data and "worksheets" in data:
        raise NotebookError(
            "not a valid notebook: nbformat 3 notebooks are not supported (convert with `jupyter nbconvert --to notebook`)"
        )
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise NotebookError("not a valid notebook: no `cells` list")
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise NotebookError(
                f"not a valid notebook: cell {number} is not a cell object with a `cell_type`"
            )
        source = cell.get("source", "")
        if not (
            isinstance(source, str) or isinstance(source, list) and all(isinstance(s, str) for s in source)
        ):
            raise NotebookError(
                f"not a valid notebook: cell {number}'s `source` is not a string or a list of strings"
            )
    notebook = Notebook(text, [], ascii_only=_ascii_only(text))
    if not _is_python(data.get("metadata")):
        return notebook  # an R or Julia notebook: nothing to lint
    spans = _source_spans(text)
    for number, cell in enumerate(cells, start=1):
        if cell["cell_type"] != "code" or number - 1 not in spans:
            continue
        source_span, item_spans = spans[number - 1]
        source = cell.get("source", "")
        code = "".join(source) if isinstance(source, list) else source
        items = list(zip(source, item_spans)) if isinstance(source, list) else None
        _add_cell(notebook, _Cell(number, source_span, items, code, _mask(code, notebook.masks)))
    return notebook


def from_cells(cells: list[tuple[int, str]]) -> Notebook:
    """A notebook from its code cells' numbers and texts (an editor's notebook
    document: the language server); it has no JSON to :meth:`~Notebook.render` into."""
    notebook = Notebook("", [])
    for number, code in cells:
        _add_cell(notebook, _Cell(number, (0, 0), None, code, _mask(code, notebook.masks)))
    return notebook


def _add_cell(notebook: Notebook, cell: _Cell) -> None:
    """Append a code cell to the joined code, after a separator line."""
    cell.first_line = 1
    if notebook.cells:
        last = notebook.cells[-1]
        notebook.code += _SEPARATOR.format(last.number)
        cell.first_line = last.first_line + len(last.masked) + 1
    notebook.code += "".join(cell.masked)
    notebook.cells.append(cell)


def _is_python(metadata) -> bool:
    if not isinstance(metadata, dict):
        return True
    for key, name in (("language_info", "name"), ("kernelspec", "language")):
        value = metadata.get(key)
        if isinstance(value, dict) and isinstance(value.get(name), str):
            return value[name].lower() == "python"
    return True


def _ascii_only(text: str) -> bool:
    """Whether the file escapes non-ASCII characters (``json.dumps``'s default) rather
    than writing them (nbformat's way)."""
    return text.isascii() and re.search(r"\\u(?:00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])", text) is not None


_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _source_spans(text: str) -> dict[int, tuple[tuple[int, int], list[tuple[int, int]]]]:
    """For each cell (0-based) whose ``source`` is in the JSON text: that value's span,
    and the spans of its items when it is a list.  Parsed with ``json``'s own scanner
    (``raw_decode``), so values are read as ``json.loads`` read them; the last of
    duplicated keys wins, as there."""
    decoder = json.JSONDecoder()
    from json.decoder import scanstring

    def skip(position: int) -> int:
        return _WHITESPACE.match(text, position).end()

    def members(position: int):
        """(key, value start, value end) of the object at ``position``, and its end."""
        found = []
        position = skip(position + 1)
        if text[position] == "}":
            return found, position + 1
        while True:
            key, position = scanstring(text, position + 1)
            position = skip(skip(position) + 1)  # past ':'
            _, end = decoder.raw_decode(text, position)
            found.append((key, position, end))
            position = skip(end)
            if text[position] == "}":
                return found, position + 1
            position = skip(position + 1)  # past ','

    def items(position: int) -> list[tuple[int, int]]:
        spans = []
        position = skip(position + 1)
        if text[position] == "]":
            return spans
        while True:
            _, end = decoder.raw_decode(text, position)
            spans.append((position, end))
            position = skip(end)
            if text[position] == "]":
                return spans
            position = skip(position + 1)

    result = {}
    top, _ = members(skip(0))
    cells = [(start, end) for key, start, end in top if key == "cells"][-1:]
    for start, _ in cells:
        for index, (cell_start, _) in enumerate(items(start)):
            sources = [(s, e) for key, s, e in members(cell_start)[0] if key == "source"]
            if sources:
                s, e = sources[-1]
                result[index] = ((s, e), items(s) if text[s] == "[" else [])
    return result


# -- masking IPython syntax -------------------------------------------------------
def _mask(code: str, masks: list[str]) -> list[str]:
    """The cell's lines as linted: IPython-only lines masked (see the module's
    docstring), each line ending in a line break."""
    lines = split_lines(code, keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("%%"):
        magic = first[2:].split(None, 1)[0] if first[2:].split() else ""
        if magic not in PYTHON_CELL_MAGICS:
            return []  # %%bash, %%writefile...: not Python
        start = next(i for i, line in enumerate(lines) if line.strip())
        lines[start] = _masked(lines[start], masks)
    state = _LineState()
    continued = False
    for index, line in enumerate(lines):
        if continued or (state.at_statement_start() and _is_ipython(line, state)):
            body = line.rstrip("\r\n")
            lines[index] = _masked(line, masks, comment=continued)
            continued = body.endswith("\\")
        elif "# hooklint-masked: " not in line:
            state.feed(line)
    return lines


def _is_ipython(line: str, state: _LineState) -> bool:
    stripped = line.strip()
    if not stripped:
        return False
    if stripped[0] in "%!?":
        return not stripped.startswith("!=")
    if _ASSIGNED_MAGIC.match(line):
        return True
    code = state.code_of(line).rstrip()
    return code.endswith("?")


def _masked(line: str, masks: list[str], comment: bool = False) -> str:
    """A masked line: ``pass`` (``name = None`` for an assigned magic), or for the
    continuation of one, a comment; each with a marker to restore it by."""
    body = line.rstrip("\r\n")
    end = line[len(body) :]
    indent = body[: len(body) - len(body.lstrip(" \t"))]
    assigned = _ASSIGNED_MAGIC.match(body)
    masks.append(line)
    marker = _MASK.format(len(masks) - 1)
    if comment:
        return indent + marker.lstrip() + end
    timed = _TIMED.fullmatch(body)
    if timed is not None and _complete(timed.group("code")):  # the columns of CODE are kept
        head = "pass;".ljust(len(timed.group("magic")) + len(timed.group("gap")))
        return timed.group("indent") + head + timed.group("code") + marker + end
    if assigned is not None:
        return assigned.group("target").rstrip().rstrip("=").rstrip() + " = None" + marker + end
    return indent + "pass" + marker + end


def _complete(code: str) -> bool:
    """Whether one line of code closes every bracket and string it opens."""
    state = _LineState()
    state.feed(code)
    return state.at_statement_start()


class _LineState:
    """Where a line starts: inside brackets, a triple-quoted string, or after a
    backslash continuation (then it cannot be an IPython line), or at a statement."""

    def __init__(self) -> None:
        self.depth = 0
        self.string: str | None = None  # the open triple quote
        self.continued = False

    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.string is None and not self.continued

    def code_of(self, line: str) -> str:
        """The line up to its comment (for a line that starts at a statement)."""
        probe = _LineState()
        return line[: probe.feed(line)]

    def feed(self, line: str) -> int:
        """Read one line; returns where its comment starts (or its length)."""
        i, n = 0, len(line)
        comment = n
        self.continued = False
        while i < n:
            if self.string is not None:
                end = line.find(self.string, i)
                while end != -1 and _escaped(line, end):
                    end = line.find(self.string, end + 1)
                if end == -1:
                    return comment
                i = end + len(self.string)
                self.string = None
                continue
            char = line[i]
            if char == "#":
                return i
            if char in "'\"":
                quote = line[i : i + 3] if line[i : i + 3] in ("'''", '"""') else char
                if len(quote) == 3:
                    self.string = quote
                    i += 3
                    continue
                end = i + 1
                while end < n and line[end] != quote and line[end] not in "\r\n":
                    end += 2 if line[end] == "\\" else 1
                i = end + 1
                continue
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(0, self.depth - 1)
            elif char == "\\" and line[i + 1 : i + 2] in ("\n", "\r", ""):
                self.continued = True
            i += 1
        return comment


def _escaped(line: str, position: int) -> bool:
    backslashes = 0
    while position - backslashes - 1 >= 0 and line[position - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def read_notebook(path: Path, raw: bytes):
    """A notebook file's :class:`hooklint.files.SourceFile`: ``text`` is the joined
    code of its code cells, ``notebook`` the :class:`Notebook`."""
    from hooklint.files import SourceError, SourceFile

    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        text = raw[3:].decode("utf-8") if bom else raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(
            f"not a valid notebook: not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from None
    try:
        notebook = parse(text)
    except NotebookError as exc:
        raise SourceError(str(exc)) from None
    return SourceFile(path, raw, notebook.code, "utf-8", bom, notebook=notebook)
