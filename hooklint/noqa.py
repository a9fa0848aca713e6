"""``# noqa`` suppressions: applying them, reporting unused ones (HL100), adding them.

- ``# noqa: HL001, HL002`` (or a bare ``# noqa``) on a violation's first or last line
  suppresses it.
- ``# hooklint: noqa`` anywhere in the file suppresses everything in it;
  ``# hooklint: noqa: HL001`` suppresses those codes in the whole file.

:func:`apply` filters a file's violations through its suppressions and, when HL100
(``unused-noqa``) is selected, reports the ``HL`` codes of line directives that
suppress nothing (unknown codes, codes of rules that are not enabled, codes that
match no violation), each with a safe fix that removes the code, or the whole
directive when nothing is left of it.  Codes of other tools (``E501``) and a bare
``# noqa`` are never reported: other linters read them too.

:func:`add_noqa` writes ``# noqa: CODE`` on each violation's line (``--add-noqa``).
Directives are read from comments only (:func:`hooklint.lexical.scan`): a
``"# noqa"`` inside a string is not one for HL100 and ``--add-noqa``.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from hooklint.lexical import COMMENT, line_starts, scan, split_lines
from hooklint.tokens import mentions_hooklint_code  # noqa: F401  (HL100's token: hooklint.tokens)

_LINE = re.compile(
    r"#\s*noqa(?![\w-])(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,?\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE
)
_FILE = re.compile(
    r"#\s*hooklint:\s*noqa(?![\w-])(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,?\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE
)
_CODE = re.compile(r"[A-Za-z]+[0-9]+")
ALL = frozenset({"*"})
UNUSED_NOQA = "HL100"


def _codes(match: re.Match) -> frozenset[str]:
    codes = match.group("codes")
    if not codes:
        return ALL
    return frozenset(c.upper() for c in _CODE.findall(codes))


@dataclass
class Suppressions:
    lines: list[str]
    file_codes: frozenset[str]

    @classmethod
    def parse(cls, text: str) -> Suppressions:
        lines = split_lines(text)  # as the engine numbers lines: not at \f or \u2028
        file_codes: set[str] = set()
        if "hooklint:" in text:
            for line in lines:
                match = _FILE.search(line)
                if match:
                    file_codes |= _codes(match)
        return cls(lines, frozenset(file_codes))

    def _line_codes(self, number: int) -> frozenset[str]:
        if not 1 <= number <= len(self.lines):
            return frozenset()
        line = self.lines[number - 1]
        if "noqa" not in line.lower():
            return frozenset()
        match = None
        for candidate in _LINE.finditer(line):
            if not line[: candidate.start()].rstrip().lower().endswith("hooklint:"):
                match = candidate
                break
        return _codes(match) if match else frozenset()

    def suppresses(self, code: str, first_line: int, last_line: int) -> bool:
        if "*" in self.file_codes or code in self.file_codes:
            return True
        for number in {first_line, last_line}:
            codes = self._line_codes(number)
            if "*" in codes or code in codes:
                return True
        return False


# -- line directives, as comments ---------------------------------------------------------
@dataclass(frozen=True)
class Directive:
    """A ``# noqa`` line directive in a comment.  Offsets are into the file's text."""

    line: int  # 1-based
    start: int  # the ``#`` of ``# noqa``
    end: int  # past the directive (its last code)
    comment_start: int  # the comment holding it
    comment_end: int
    codes: tuple[tuple[str, int, int], ...]  # (CODE, start, end); empty: a bare ``# noqa``


def directives(text: str) -> list[Directive]:
    """Every ``# noqa`` line directive in a comment of ``text`` (not ``# hooklint: noqa``)."""
    if "noqa" not in text.lower():
        return []
    starts = line_starts(text)
    found = []
    for span in scan(text):
        if span.kind != COMMENT:
            continue
        comment = text[span.start : span.end]
        if "noqa" not in comment.lower():
            continue
        for match in _LINE.finditer(comment):
            if comment[: match.start()].rstrip().lower().endswith("hooklint:"):
                continue
            base = span.start
            codes = ()
            if match.group("codes"):
                offset = base + match.start("codes")
                codes = tuple(
                    (m.group(0).upper(), offset + m.start(), offset + m.end())
                    for m in _CODE.finditer(match.group("codes"))
                )
            line = bisect.bisect_right(starts, base + match.start())
            found.append(
                Directive(line, base + match.start(), base + match.end(), span.start, span.end, codes)
            )
            break  # the first directive of a comment is the one that counts
    return found


# -- applying suppressions, and HL100 ------------------------------------------------------
SYNTAX_ERROR = "HL000"


def apply(text: str, path: str, violations, selected: tuple[str, ...]) -> list:
    """``violations`` without the suppressed ones; with HL100 in ``selected`` (the codes
    that ran on this file), plus an HL100 violation for each unused ``HL`` code."""
    suppressions = Suppressions.parse(text)
    kept = [  # a syntax error is never suppressed: the comment may not even be a comment
        v
        for v in violations
        if v.code == SYNTAX_ERROR or not suppressions.suppresses(v.code, v.start.line, v.end.line)
    ]
    if UNUSED_NOQA in selected and mentions_hooklint_code(text):
        kept += unused(text, path, violations, selected, suppressions)
        kept.sort(key=lambda v: v.sort_key)
    return kept


def unused(text: str, path: str, violations, selected: tuple[str, ...], suppressions: Suppressions) -> list:
    """HL100 violations: the ``HL`` codes of line directives that suppress nothing."""
    from hooklint.rules import known_codes
    from hooklint.violation import SAFE, Edit, Fix, Location, Violation

    known = set(known_codes())
    enabled = set(selected)
    used: set[tuple[int, str]] = set()
    for v in violations:
        if "*" in suppressions.file_codes or v.code in suppressions.file_codes:
            continue  # the file-level directive suppressed it
        for number in {v.start.line, v.end.line}:
            used.add((number, v.code))
    starts = line_starts(text)
    lines = split_lines(text)
    found = []
    for directive in directives(text):
        own = [(code, start, end) for code, start, end in directive.codes if code.startswith("HL")]
        if not own:
            continue
        unknown = [c for c in own if c[0] not in known]
        disabled = [c for c in own if c[0] in known and c[0] not in enabled]
        unmatched = [c for c in own if c[0] in enabled and (directive.line, c[0]) not in used]
        stale = unknown + disabled + unmatched
        if not stale:
            continue
        parts = []
        if unknown:
            parts.append("unknown: " + ", ".join(c[0] for c in unknown))
        if disabled:
            parts.append("not enabled: " + ", ".join(c[0] for c in disabled))
        if unmatched:
            parts.append("unused: " + ", ".join(c[0] for c in unmatched))
        edits = _removal(text, directive, {c[1] for c in stale})

        def location(offset: int) -> Location:
            line = bisect.bisect_right(starts, offset)
            return Location(line, offset - starts[line - 1] + 1)

        fix = Fix(
            "Remove the unused code" + ("s" if len(stale) > 1 else "") + " from the `noqa` directive"
            if len(stale) < len(directive.codes)
            else "Remove the unused `noqa` directive",
            SAFE,
            tuple(Edit(location(a), location(b), content) for a, b, content in edits),
        )
        found.append(
            Violation(
                code=UNUSED_NOQA,
                name="unused-noqa",
                message=f"Unused `noqa` directive ({'; '.join(parts)})",
                path=path,
                start=location(directive.start),
                end=location(directive.end),
                fix=fix,
                source_line=lines[directive.line - 1] if directive.line <= len(lines) else "",
            )
        )
    return found


def _removal(text: str, directive: Directive, stale_starts: set[int]) -> list[tuple[int, int, str]]:
    """Edits (start, end, content) that take the stale codes out of ``directive``, or
    the directive (and the blanks before it) out of its comment when no code is left,
    or the whole comment when it held nothing else."""
    keep = [c for c in directive.codes if c[1] not in stale_starts]
    if keep:
        first = directive.codes[0][1]
        last = directive.codes[-1][2]
        return [(first, last, ", ".join(c[0] for c in keep))]
    start, end = directive.start, directive.end
    first = not text[directive.comment_start : start].strip("# \t")  # the directive opens the comment
    after = text[end : directive.comment_end]
    rest = after.lstrip(" \t")
    if first and not rest:  # the comment was the directive: remove it and the blanks before it
        start = directive.comment_start
        while start > 0 and text[start - 1] in " \t":
            start -= 1
        return [(start, directive.comment_end, "")]
    if first and rest.startswith("#"):  # `# noqa: HL001  # why` -> `# why`
        return [(start, end + len(after) - len(rest), "")]
    if first:  # `# noqa: HL001 why` -> `# why`
        return [(start, end, "#")]
    while start > directive.comment_start and text[start - 1] in " \t":
        start -= 1  # `# why  # noqa: HL001` -> `# why`
    return [(start, end, "")]


# -- --add-noqa ---------------------------------------------------------------------------
#: Codes --add-noqa never writes: a syntax error cannot be suppressed usefully, and an
#: unused directive is fixed, not suppressed.
_NOT_ADDED = frozenset({"HL000", UNUSED_NOQA})


def add_noqa(text: str, violations) -> tuple[str, int, list[tuple[int, str]]]:
    """``text`` with ``# noqa: CODE`` on each violation's line: its first line, or its
    last when the first ends inside a string or after a line continuation; merged
    into a ``# noqa: ...`` directive already there.  Returns the new text, the number
    of lines changed and (line, why) for violations no directive could be put on."""
    wanted: dict[int, set[str]] = {}
    problems: list[tuple[int, str]] = []
    spans = [s for s in scan(text)]
    string_spans = [(s.start, s.end) for s in spans if s.kind != COMMENT]
    comment_spans = [(s.start, s.end) for s in spans if s.kind == COMMENT]
    starts = line_starts(text)
    lines = split_lines(text, keepends=True)
    for v in violations:
        if v.code in _NOT_ADDED:
            continue
        for number in dict.fromkeys((v.start.line, v.end.line)):
            if _can_end_with_comment(text, lines, starts, number, string_spans, comment_spans):
                wanted.setdefault(number, set()).add(v.code)
                break
        else:
            problems.append(
                (
                    v.start.line,
                    f"{v.code}: no line of it can take a `# noqa` comment (it ends inside a string)",
                )
            )
    if not wanted:
        return text, 0, problems
    by_line = {d.line: d for d in directives(text)}
    changed = 0
    out = []
    for index, line in enumerate(lines, start=1):
        codes = wanted.get(index)
        if codes:
            body = line.rstrip("\r\n")
            ending = line[len(body) :]
            directive = by_line.get(index)
            if directive is not None and not directive.codes:
                out.append(line)  # a bare `# noqa` suppresses everything already
                continue
            if directive is not None:
                present = {c[0] for c in directive.codes}
                new = sorted(codes - present)
                if not new:
                    out.append(line)
                    continue
                cut = directive.codes[-1][2] - starts[index - 1]
                body = body[:cut] + ", " + ", ".join(new) + body[cut:]
            else:
                body = body.rstrip(" \t") + "  # noqa: " + ", ".join(sorted(codes))
            out.append(body + ending)
            changed += 1
        else:
            out.append(line)
    return "".join(out), changed, problems


def _can_end_with_comment(text, lines, starts, number, string_spans, comment_spans) -> bool:
    """Whether a comment appended to line ``number`` is a comment: the line's end is
    not inside a string literal and does not follow a ``\\`` continuation."""
    if not 1 <= number <= len(lines):
        return False
    line = lines[number - 1]
    end = starts[number - 1] + len(line.rstrip("\r\n"))
    index = bisect.bisect_right(string_spans, (end, len(text) + 1)) - 1
    if index >= 0 and string_spans[index][0] < end < string_spans[index][1]:
        return False
    index = bisect.bisect_right(comment_spans, (end, len(text) + 1)) - 1
    in_comment = (
        index >= 0
        and comment_spans[index][0] <= end <= comment_spans[index][1]
        and comment_spans[index][0] >= starts[number - 1]
    )
    return in_comment or not line.rstrip("\r\n").rstrip(" \t").endswith("\\")
