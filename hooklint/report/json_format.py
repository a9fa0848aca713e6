"""``--format json``: a list of violation objects.

Schema (each item)::

    {
      "code": "HL001", "name": "post-hook-without-always-call", "message": "...",
      "filename": "pkg/mod.py",
      "cell": null,                                   # a notebook's cell (1-based); rows are the cell's
      "location": {"row": 14, "column": 5},          # 1-based
      "end_location": {"row": 14, "column": 66},      # exclusive column
      "related": [{"row": 20, "column": 9}],          # other sites of the same bug
                                                      # (+ "filename" when in another file)
      "url": "https://.../docs/rules/HL001.md",        # the rule's documentation
      "fix": null | {
        "applicability": "safe" | "unsafe", "message": "...",
        "edits": [{"content": "...", "location": {...}, "end_location": {...}}]
      }
    }
"""

from __future__ import annotations

import json

from hooklint.report.urls import rule_url
from hooklint.violation import Location, Violation


def _location(location: Location) -> dict:
    return {"row": location.line, "column": location.column}


def _related(location: Location) -> dict:
    """Another site of the bug; in another file (cross-file evidence) with its ``filename``."""
    path = getattr(location, "path", None)
    return {**_location(location), "filename": path} if path else _location(location)


def as_dict(v: Violation) -> dict:
    fix = None
    if v.fix is not None:
        fix = {
            "applicability": v.fix.applicability,
            "message": v.fix.message,
            "edits": [
                {"content": e.content, "location": _location(e.start), "end_location": _location(e.end)}
                for e in v.fix.edits
            ],
        }
    return {
        "code": v.code,
        "name": v.name,
        "message": v.message,
        "filename": v.path,
        "cell": v.cell,
        "location": _location(v.start),
        "end_location": _location(v.end),
        "fix": fix,
        "related": [_related(r) for r in v.related],
        "url": rule_url(v.code),
    }


def render(violations: list[Violation], **_: object) -> str:
    return json.dumps([as_dict(v) for v in violations], indent=2) + "\n"


def render_lines(violations: list[Violation], **_: object) -> str:
    """``--format json-lines``: one violation object (as in ``json``) per line."""
    return "".join(json.dumps(as_dict(v), ensure_ascii=False) + "\n" for v in violations)
