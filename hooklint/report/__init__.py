"""Reporters: each turns a list of violations into text, and nothing else."""

from __future__ import annotations

from hooklint.report import github, json_format, sarif, text

REPORTERS = {
    "full": text.full,
    "concise": text.concise,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
}
