"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning.

Rules carry their documentation as help text; regions are 1-based; artifact URIs are
relative to ``%SRCROOT%`` (the working directory the check ran from).
"""

from __future__ import annotations

import json

from hooklint import __version__
from hooklint.violation import Violation

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _rule_descriptor(rule) -> dict:
    docs = rule.documentation()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary()},
        "fullDescription": {"text": docs},
        "help": {"text": docs, "markdown": docs},
        "defaultConfiguration": {"level": "error"},
        "properties": {"preview": rule.preview, "fix": rule.fix_applicability or "none"},
    }


def _related(v: Violation) -> dict:
    """Other sites of the same bug (HL004's other registrations of one hook into one
    store) as SARIF ``relatedLocations``."""
    if not v.related:
        return {}
    return {
        "relatedLocations": [
            {
                "id": number,
                "message": {"text": "evidence in another file" if getattr(r, "path", "") else "another site of the same problem"},
                "physicalLocation": {
                    "artifactLocation": {"uri": getattr(r, "path", "") or v.path, "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": r.line, "startColumn": r.column},
                },
            }
            for number, r in enumerate(v.related, start=1)
        ]
    }


def render(violations: list[Violation], **_: object) -> str:
    from hooklint.rules import all_rules

    rules = list(all_rules())
    index = {rule.code: i for i, rule in enumerate(rules)}
    results = [
        {
            "ruleId": v.code,
            "ruleIndex": index[v.code],
            "level": "error",
            "message": {"text": v.message},
            **_related(v),
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": v.path, "uriBaseId": "%SRCROOT%"},
                        "region": {
                            "startLine": v.start.line,
                            "startColumn": v.start.column,
                            "endLine": v.end.line,
                            "endColumn": max(v.end.column, v.start.column + 1) if v.end.line == v.start.line else v.end.column,
                        },
                    }
                }
            ],
        }
        for v in violations
    ]
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "hooklint",
                        "version": __version__,
                        "rules": [_rule_descriptor(r) for r in rules],
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
