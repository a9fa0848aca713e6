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


_TEMPLATE_METHOD = """
class Tap:
    def _register(self, hook):
        raise NotImplementedError

    def attach(self, hook):
        self.handle = self._register(hook)


class OutputTap(Tap):
    def _register(self, hook):
        return self.module.register_forward_hook(hook)


class GradTap(Tap):
    def _register(self, hook):
        return self.module.register_backward_hook(hook)
"""


def test_hl007_reports_the_override_not_the_base_class_call_that_dispatches_to_several():
    # `self._register` in the base class runs OutputTap's or GradTap's override: only
    # GradTap's own line uses the deprecated API.
    found = lint_text(_TEMPLATE_METHOD, "t.py", [HL007], RuleContext())
    assert [v.start.line for v in found] == [
        _TEMPLATE_METHOD.splitlines().index("        return self.module.register_backward_hook(hook)") + 1
    ]


def test_hl007_still_reports_a_base_class_call_whose_only_override_is_deprecated():
    source = _TEMPLATE_METHOD.replace("register_forward_hook", "register_backward_hook")
    found = lint_text(source, "t.py", [HL007], RuleContext())
    attach_line = source.splitlines().index("        self.handle = self._register(hook)") + 1
    assert attach_line in [v.start.line for v in found]
