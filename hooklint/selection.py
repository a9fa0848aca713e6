"""Which rules run: ``select`` / ``extend-select`` / ``ignore`` as ruff reads them.

A selector is a full code (``HL001``), a prefix (``HL0``, ``HL``) or ``ALL``.  Without
``select``, the rules that are on by default run.  A prefix selects every rule it
matches, also those off by default; preview rules run only in preview mode.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

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


class SelectedCodes:
    """The codes :func:`resolve_rules` picks, resolved when first read: which rules
    are on by default or in preview is written in the rule classes, and importing
    them (and libcst) is the cost a run over files without any rule's token never
    needs to pay.  Reads as a tuple of codes (iteration, ``len``, ``in``, equality
    with a tuple); ``"HL000" in codes`` is answered without resolving (it always
    runs).  Selectors are validated when this is made (an unknown one raises
    :class:`UnknownSelector`), so resolving later cannot fail."""

    def __init__(self, select, extend_select=(), ignore=(), preview: bool = False) -> None:
        self._query = (
            tuple(select) if select is not None else None,
            tuple(extend_select),
            tuple(ignore),
            preview,
        )
        self._codes: tuple[str, ...] | None = None
        try:
            validate([*(select or ()), *extend_select, *ignore])
        except UnknownSelector:
            _ = self.codes  # the rules themselves say (and raise) when no module name does

    @property
    def codes(self) -> tuple[str, ...]:
        if self._codes is None:
            select, extend, ignore, preview = self._query
            self._codes = tuple(r.code for r in resolve_rules(select, extend, ignore, preview=preview))
        return self._codes

    def __contains__(self, code: object) -> bool:
        return code == "HL000" or code in self.codes

    def __iter__(self):
        return iter(self.codes)

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, index):
        return self.codes[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SelectedCodes):
            other = other.codes
        return self.codes == other

    def __hash__(self) -> int:
        return hash(self.codes)

    def __repr__(self) -> str:
        return repr(self.codes) if self._codes is not None else f"SelectedCodes{self._query!r}"

    def __reduce__(self):  # a worker started by spawn gets the resolved codes
        return (tuple, (self.codes,))
