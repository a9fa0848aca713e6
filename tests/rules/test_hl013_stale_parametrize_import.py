"""HL013 stale-parametrize-import beyond its VALID/INVALID examples: a safe fix that
leaves keyword arguments and attributes alone."""

from __future__ import annotations

from _checks import dedented as _code

from hooklint.engine import fix_text
from hooklint.rules import find_rule
from hooklint.rules.base import RuleContext

HL013 = find_rule("HL013")


# -- HL013: a safe fix ----------------------------------------------------------------------
def test_hl013_fix_is_safe_and_applied_without_unsafe_fixes():
    source = _code(
        """
        from torch.nn.utils.parametrize import _cache_enabled

        def depth():
            return _cache_enabled
        """
    )
    outcome = fix_text(source, "t.py", [HL013], RuleContext(), unsafe=False)
    assert outcome.fixed == 1
    assert "return parametrize._cache_enabled" in outcome.text
    assert "from torch.nn.utils import parametrize" in outcome.text


def test_hl013_keyword_arguments_and_attributes_are_not_rewritten():
    source = _code(
        """
        from torch.nn.utils.parametrize import _cache

        def show(obj):
            return obj._cache, dict(_cache=len(_cache))
        """
    )
    fixed = fix_text(source, "t.py", [HL013], RuleContext(), unsafe=False).text
    assert "obj._cache, dict(_cache=len(parametrize._cache))" in fixed
