"""Reporters: each turns a list of violations into text, and nothing else."""

from __future__ import annotations

from hooklint.report import github, gitlab, json_format, junit, sarif, text

REPORTERS = {
    "full": text.full,
    "concise": text.concise,
    "json": json_format.render,
    "json-lines": json_format.render_lines,
    "sarif": sarif.render,
    "github": github.render,
    "gitlab": gitlab.render,
    "junit": junit.render,
}
