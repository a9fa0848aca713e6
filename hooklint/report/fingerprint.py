"""A finding's fingerprint that survives edits elsewhere in the file: the rule, the
path, the text of the finding's first line (blanks trimmed) and how many findings with
the same three came before it in the report (SARIF ``partialFingerprints``, GitLab's
``fingerprint``: code scanning and merge requests match findings across commits by it)."""

from __future__ import annotations

import hashlib


def fingerprints(violations) -> list[str]:
    seen: dict[tuple[str, str, str], int] = {}
    found = []
    for v in violations:
        key = (v.code, v.path, " ".join(v.source_line.split()), str(v.cell))
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        found.append(hashlib.sha256(repr((*key, occurrence)).encode()).hexdigest()[:32])
    return found
