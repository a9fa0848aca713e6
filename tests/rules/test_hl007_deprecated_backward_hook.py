"""HL007 deprecated-backward-hook beyond its VALID/INVALID examples: the fix is
withheld for a target torch that lacks ``register_full_backward_hook``."""

from __future__ import annotations

from hooklint.engine import fix_text, lint_text
from hooklint.rules import find_rule
from hooklint.rules.base import RuleContext

HL007 = find_rule("HL007")


def test_hl007_withholds_its_fix_below_torch_1_8_and_offers_it_from_1_8():
    source = "encoder.register_backward_hook(hook)\n"
    [old] = lint_text(source, "t.py", [HL007], RuleContext(target_torch=(1, 7)))
    assert old.fix is None and old.fix_withheld and "1.8" in old.fix_withheld
    [new] = lint_text(source, "t.py", [HL007], RuleContext(target_torch=(1, 8)))
    assert new.fix is not None and new.fix.applicability == "unsafe"
    fixed = fix_text(source, "t.py", [HL007], RuleContext(target_torch=(1, 8)), unsafe=True)
    assert fixed.text == "encoder.register_full_backward_hook(hook)\n"
