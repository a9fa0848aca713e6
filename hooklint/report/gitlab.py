"""``--format gitlab``: a GitLab Code Quality report (a JSON list of issues).

Each issue has what GitLab reads: ``description``, ``check_name`` (the code),
``fingerprint`` (stable across edits elsewhere: :mod:`hooklint.report.fingerprint`),
``severity`` (``major`` for stable rules, ``minor`` for preview ones) and
``location`` with the path relative to the directory hooklint ran in (the
repository root in CI) and ``positions`` (1-based lines and columns).
"""

from __future__ import annotations

import json

from hooklint.report.fingerprint import fingerprints
from hooklint.violation import Violation


def render(violations: list[Violation], **_: object) -> str:
    from hooklint.rules import rules_by_code

    rules = rules_by_code()
    issues = []
    for v, fingerprint in zip(violations, fingerprints(violations)):
        rule = rules.get(v.code)
        issues.append(
            {
                "description": f"{v.code}: {v.message}",
                "check_name": v.code,
                "fingerprint": fingerprint,
                "severity": "minor" if rule is not None and rule.preview else "major",
                "location": {
                    "path": v.path,
                    "positions": {
                        "begin": {"line": v.start.line, "column": v.start.column},
                        "end": {"line": v.end.line, "column": v.end.column},
                    },
                },
            }
        )
    return json.dumps(issues, indent=2) + "\n"
