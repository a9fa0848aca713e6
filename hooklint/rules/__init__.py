"""The rule registry: every ``hlNNN_*.py`` module in this package holds one rule class.

Rules are discovered, not listed, so adding a rule is adding a file.  Codes are
published: a code is never renumbered or reused.
"""

from __future__ import annotations

import importlib
from functools import cache

from hooklint.rules.base import Rule


class SyntaxErrorRule(Rule):
    """The file does not parse.

    ## What it does
    Reports a file that is not valid Python (as libcst's parser sees it), at the
    position the parser stopped. Such a file cannot be checked by any other rule.

    ## Why is this bad?
    Every other rule is blind to a file that does not parse, and so is Python.

    ## Fix safety
    No fix.
    """

    code = "HL000"
    name = "syntax-error"
    prefilter = ()


def _rule_modules() -> list[str]:
    import pkgutil

    return sorted(
        info.name
        for info in pkgutil.iter_modules(__path__)
        if info.name.startswith("hl") and info.name[2:5].isdigit()
    )


@cache
def known_codes() -> tuple[str, ...]:
    """Every rule code, read from the modules' names (``hl001_...`` holds HL001)
    without importing them: validating a selector must not load libcst."""
    return ("HL000", *(name[:5].upper() for name in _rule_modules()))


@cache
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class, HL000 first, ordered by code."""
    found: list[type[Rule]] = [SyntaxErrorRule]
    for name in _rule_modules():
        module = importlib.import_module(f"{__name__}.{name}")
        classes = [
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, Rule)
            and value.__module__ == module.__name__
            and hasattr(value, "code")
        ]
        if [rule.code for rule in classes] != [name[:5].upper()]:
            raise RuntimeError(f"{module.__name__} must hold one rule, {name[:5].upper()}")
        found.extend(classes)
    return tuple(sorted(found, key=lambda r: r.code))


def rules_by_code() -> dict[str, type[Rule]]:
    return {r.code: r for r in all_rules()}


def find_rule(code_or_name: str) -> type[Rule] | None:
    """A rule by code (``HL001``, any case) or name (``post-hook-without-always-call``)."""
    wanted = code_or_name.strip()
    for rule in all_rules():
        if rule.code == wanted.upper() or rule.name == wanted.lower():
            return rule
    return None
