"""``--format junit``: JUnit XML, one ``testsuite`` per file and one failing
``testcase`` per violation (``name`` ``hooklint.CODE``, ``classname`` the path,
``line``/``column`` attributes), as CI test-report viewers read it.  A clean run is
one passing test case, so that a viewer shows that the check ran."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from hooklint.violation import Violation

#: Characters XML 1.0 cannot hold, even escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def render(violations: list[Violation], **_: object) -> str:
    suites = ET.Element(
        "testsuites",
        name="hooklint",
        tests=str(max(1, len(violations))),
        failures=str(len(violations)),
        errors="0",
    )
    if not violations:
        suite = ET.SubElement(suites, "testsuite", name="hooklint", tests="1", failures="0", errors="0")
        ET.SubElement(suite, "testcase", name="No errors found", classname="hooklint")
    by_path: dict[str, list[Violation]] = {}
    for v in violations:
        by_path.setdefault(v.path, []).append(v)
    for path, found in by_path.items():
        suite = ET.SubElement(
            suites, "testsuite", name=_text(path), tests=str(len(found)), failures=str(len(found)), errors="0"
        )
        for v in found:
            case = ET.SubElement(
                suite,
                "testcase",
                name=f"hooklint.{v.code}",
                classname=_text(path),
                line=str(v.start.line),
                column=str(v.start.column),
            )
            cell = v.cell
            where = (
                f"cell {cell}, line {v.start.line}, col {v.start.column}"
                if cell is not None
                else f"line {v.start.line}, col {v.start.column}"
            )
            failure = ET.SubElement(case, "failure", message=_text(v.message), type=v.code)
            failure.text = _text(f"{where}, {v.code} {v.name}: {v.message}")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
