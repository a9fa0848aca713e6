"""HL017 hook-flags-dropped-on-reregister beyond its VALID/INVALID examples: a fix
that picks a fresh key name and parses, other registrations of the hook, the pre-hook
fix's torch, and the torch facts the rule rests on (run where torch is installed, as
CI does)."""

from __future__ import annotations

import textwrap

import pytest
from _checks import codes_and_lines as _codes
from _checks import lint as _lint

from hooklint.engine import fix_text, parses
from hooklint.rules import find_rule
from hooklint.rules.base import RuleContext

HL017 = find_rule("HL017")


# -- HL017 ------------------------------------------------------------------------------------
def test_hl017_fix_picks_a_fresh_key_name_and_parses():
    code = textwrap.dedent(
        """
        def swap(old, new, hook_id):
            for hook in old._forward_hooks.values():
                new.register_forward_hook(hook)
        """
    ).lstrip("\n")
    outcome = fix_text(code, "m.py", [HL017], RuleContext(), unsafe=True)
    assert "for hook_id_, hook in old._forward_hooks.items():" in outcome.text
    assert "always_call=hook_id_ in old._forward_hooks_always_called" in outcome.text
    assert parses(outcome.text) and outcome.violations == []


def test_hl017_is_not_about_other_registrations_of_the_same_hook():
    code = """
    def rewire(old, new):
        for hook in old._forward_hooks.values():
            new.register_forward_pre_hook(hook)
    """
    assert _codes(code, [HL017]) == []


def test_hl017_pre_hook_fix_needs_only_torch_2_0():
    code = """
    def swap(old, new):
        for k, h in old._forward_pre_hooks.items():
            new.register_forward_pre_hook(h)
    """
    (violation,) = _lint(code, [HL017], target_torch=(2, 0))
    assert violation.fix is not None and violation.fix_withheld is None


# -- the torch facts the rules rest on (run where torch is installed, as CI does) -------------
def test_torch_keeps_hook_flags_beside_the_hook_dicts_and_a_copy_loses_them():
    torch = pytest.importorskip("torch")
    layer = torch.nn.Linear(2, 2)
    calls = []
    handle = layer.register_forward_hook(
        lambda m, a, k, out: calls.append(k), with_kwargs=True, always_call=True
    )  # noqa: HL002  the layer is local
    assert handle.id in layer._forward_hooks_with_kwargs and handle.id in layer._forward_hooks_always_called
    pre = layer.register_forward_pre_hook(lambda m, a, k: None, with_kwargs=True)
    assert pre.id in layer._forward_pre_hooks_with_kwargs
    copy = torch.nn.Linear(2, 2)
    for hook in layer._forward_hooks.values():  # what HL017 flags
        copy.register_forward_hook(hook)
    with pytest.raises(TypeError):
        copy(torch.randn(1, 2))
    fixed = torch.nn.Linear(2, 2)
    for hook_id, hook in layer._forward_hooks.items():  # what its fix writes
        fixed.register_forward_hook(
            hook,
            with_kwargs=hook_id in layer._forward_hooks_with_kwargs,
            always_call=hook_id in layer._forward_hooks_always_called,
        )
    fixed(torch.randn(1, 2))
    assert calls == [{}]
