"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning (and any SARIF viewer).

- ``tool.driver.rules``: every rule, its documentation as help text and markdown,
  ``helpUri`` (its page, ``docs/rules/HLxxx.md``), and ``defaultConfiguration.level``
  from its tier (``error`` for stable rules, ``note`` for preview ones); each
  result's ``level`` is its rule's.
- ``columnKind: unicodeCodePoints``: columns count characters, as hooklint's do
  (SARIF's default, UTF-16 code units, differs on characters beyond the BMP).
- Artifact URIs are percent-encoded (``a#1.py`` is ``a%231.py``) and relative to
  ``%SRCROOT%``, the directory hooklint ran in (``originalUriBaseIds`` gives its
  absolute URI); a file outside it gets an absolute ``file://`` URI and no
  ``uriBaseId``.
- ``partialFingerprints`` (``hooklint/v1``): see :mod:`hooklint.report.fingerprint`.
- ``fixes``: each finding's fix as artifact changes (replacements of regions).
- A notebook finding carries its cell in ``properties.cell``.

The output validates against the official schema (tests/data/sarif-schema-2.1.0.json).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

from hooklint import __version__
from hooklint.report.fingerprint import fingerprints
from hooklint.report.urls import REPOSITORY, rule_url
from hooklint.violation import Location, Violation

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def level(rule) -> str:
    return "note" if rule.preview else "error"


def _rule_descriptor(rule) -> dict:
    docs = rule.documentation()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary()},
        "fullDescription": {"text": docs},
        "help": {"text": docs, "markdown": docs},
        "helpUri": rule_url(rule.code),
        "defaultConfiguration": {"level": level(rule)},
        "properties": {"preview": rule.preview, "fix": rule.fix_applicability or "none"},
    }


class _Artifacts:
    """Artifact locations relative to the root, percent-encoded; absolute outside it."""

    def __init__(self, root: Path) -> None:
        self.root = os.path.abspath(root)

    def location(self, path: str) -> dict:
        absolute = os.path.abspath(path)
        relative = os.path.relpath(absolute, self.root)
        if relative == os.pardir or relative.startswith(os.pardir + os.sep) or os.path.isabs(relative):
            return {"uri": Path(absolute).as_uri()}
        return {"uri": quote(relative.replace(os.sep, "/"), safe="/"), "uriBaseId": "%SRCROOT%"}


def _region(start: Location, end: Location, *, nonempty: bool) -> dict:
    end_column = end.column
    if nonempty and end.line == start.line:
        end_column = max(end_column, start.column + 1)
    return {
        "startLine": start.line,
        "startColumn": start.column,
        "endLine": end.line,
        "endColumn": end_column,
    }


def _related(v: Violation, artifact: dict, artifacts: _Artifacts) -> dict:
    """Other sites of the same bug (HL004's other registrations of one hook into one
    store), and evidence in another file (cross-file analysis), as ``relatedLocations``."""
    if not v.related:
        return {}
    return {
        "relatedLocations": [
            {
                "id": number,
                "message": {
                    "text": "evidence in another file"
                    if getattr(r, "path", "")
                    else "another site of the same problem"
                },
                "physicalLocation": {
                    "artifactLocation": artifacts.location(r.path) if getattr(r, "path", "") else artifact,
                    "region": {"startLine": r.line, "startColumn": r.column},
                },
            }
            for number, r in enumerate(v.related, start=1)
        ]
    }


def _fixes(v: Violation, artifact: dict) -> dict:
    if v.fix is None:
        return {}
    description = v.fix.message + ("" if v.fix.applicability == "safe" else " (unsafe fix)")
    replacements = [
        {"deletedRegion": _region(e.start, e.end, nonempty=False), "insertedContent": {"text": e.content}}
        for e in v.fix.edits
    ]
    return {
        "fixes": [
            {
                "description": {"text": description},
                "artifactChanges": [{"artifactLocation": artifact, "replacements": replacements}],
            }
        ]
    }


def render(violations: list[Violation], *, root: Path | None = None, **_: object) -> str:
    from hooklint.rules import all_rules

    root = Path.cwd() if root is None else Path(root)
    artifacts = _Artifacts(root)
    rules = list(all_rules())
    index = {rule.code: i for i, rule in enumerate(rules)}
    levels = {rule.code: level(rule) for rule in rules}
    results = []
    for v, fingerprint in zip(violations, fingerprints(violations)):
        artifact = artifacts.location(v.path)
        result = {
            "ruleId": v.code,
            "ruleIndex": index[v.code],
            "level": levels[v.code],
            "message": {"text": v.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": artifact,
                        "region": _region(v.start, v.end, nonempty=True),
                    }
                }
            ],
            "partialFingerprints": {"hooklint/v1": fingerprint},
            **_related(v, artifact, artifacts),
            **_fixes(v, artifact),
        }
        if v.cell is not None:
            result["properties"] = {"cell": v.cell}
        results.append(result)
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "hooklint",
                        "version": __version__,
                        "informationUri": REPOSITORY,
                        "rules": [_rule_descriptor(r) for r in rules],
                    }
                },
                "originalUriBaseIds": {
                    "%SRCROOT%": {"uri": Path(os.path.abspath(root)).as_uri().rstrip("/") + "/"}
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
