"""``# noqa`` suppressions.

- ``# noqa: HL001, HL002`` (or a bare ``# noqa``) on a violation's first or last line
  suppresses it.
- ``# hooklint: noqa`` anywhere in the file suppresses everything in it;
  ``# hooklint: noqa: HL001`` suppresses those codes in the whole file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hooklint.lexical import split_lines

_LINE = re.compile(r"#\s*noqa(?![\w-])(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,?\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_FILE = re.compile(r"#\s*hooklint:\s*noqa(?![\w-])(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,?\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE)
ALL = frozenset({"*"})


def _codes(match: re.Match) -> frozenset[str]:
    codes = match.group("codes")
    if not codes:
        return ALL
    return frozenset(c.upper() for c in re.findall(r"[A-Za-z]+[0-9]+", codes))


@dataclass
class Suppressions:
    lines: list[str]
    file_codes: frozenset[str]

    @classmethod
    def parse(cls, text: str) -> "Suppressions":
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
