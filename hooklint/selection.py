"""Which rules run: ``select`` / ``extend-select`` / ``ignore`` as ruff reads them.

A selector is a full code (``HL001``), a prefix (``HL0``, ``HL``) or ``ALL``.  Without
``select``, the rules that are on by default run.  A prefix selects every rule it
matches, also those off by default; preview rules run only in preview mode.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from hooklint.rules import all_rules, known_codes
from hooklint.rules.base import Rule


class UnknownSelector(ValueError):
    """A selector that matches no rule."""


def matching(selector: str) -> list[type[Rule]]:
    selector = selector.strip().upper()
    if selector == "ALL":
        return list(all_rules())
    matched = [r for r in all_rules() if r.code.startswith(selector)]
    if not matched or not selector.startswith("HL"):
        raise UnknownSelector(selector)
    return matched


def validate(selectors: Iterable[str]) -> None:
    """Raise :class:`UnknownSelector` for a selector that matches no rule (rules are
    not loaded: their codes come from their modules' names)."""
    for raw in selectors:
        selector = raw.strip().upper()
        if selector == "ALL":
            continue
        if not selector.startswith("HL") or not any(c.startswith(selector) for c in known_codes()):
            raise UnknownSelector(selector)


def resolve_rules(
    select: Sequence[str] | None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    preview: bool = False,
) -> list[type[Rule]]:
    """The rules to run, ordered by code (HL000 always runs)."""
    if select is None:
        chosen = {r for r in all_rules() if r.default_on}
    else:
        chosen = {r for s in select for r in matching(s)}
    chosen |= {r for s in extend_select for r in matching(s)}
    chosen -= {r for s in ignore for r in matching(s) if r.code != "HL000"}
    chosen = {r for r in chosen if preview or not r.preview}
    chosen |= {r for r in all_rules() if r.code == "HL000"}
    return sorted(chosen, key=lambda r: r.code)
