"""HL018 hook-signature-mismatch beyond its VALID/INVALID examples: HL012's shape
left to HL012, the fix's torch, ``functools.partial`` and ``staticmethod`` hooks, and
the torch facts the rule rests on (run where torch is installed, as CI does)."""

from __future__ import annotations

import pytest
from _checks import codes_and_lines as _codes
from _checks import lint as _lint

from hooklint.engine import lint_text
from hooklint.rules import find_rule
from hooklint.rules.base import RuleContext

HL018 = find_rule("HL018")


# -- HL018 ------------------------------------------------------------------------------------
def test_hl018_leaves_hl012s_shape_alone():
    code = """
    from torch.nn.modules.module import register_module_forward_hook

    def _leave(module, args, kwargs, output):
        ACTIVE.discard(id(module))

    register_module_forward_hook(_leave, with_kwargs=True, always_call=True)
    """
    assert _codes(code, [find_rule("HL012"), HL018]) == [("HL012", 6)]


def test_hl018_global_forward_fix_withheld_below_2_6():
    code = """
    import torch

    def trace(module, args, kwargs, output):
        LOG.append(kwargs)

    torch.nn.modules.module.register_module_forward_hook(trace)
    """
    (old,) = _lint(code, [HL018], target_torch=(2, 4))
    assert old.fix_withheld is not None and "2.6" in old.fix_withheld
    (new,) = _lint(code, [HL018], target_torch=(2, 6))
    assert new.fix is not None and new.fix_withheld is None


@pytest.mark.parametrize(
    ("hook", "partial", "flagged"),
    [
        ("def h(tag, module, args, kwargs, output): pass", 'functools.partial(h, "x")', False),
        ("def h(tag, module, args, output): pass", 'functools.partial(h, "x")', True),
        ("def h(module, args, kwargs, output, *, tag): pass", 'functools.partial(h, tag="t")', False),
        ("def h(module, args, kwargs, output, tag): pass", 'functools.partial(h, tag="t")', False),
        ("def h(module, args, output, tag): pass", 'functools.partial(h, tag="t")', True),
    ],
)
def test_hl018_partial_binds_leading_arguments_and_keywords(hook, partial, flagged):
    code = f"import functools\n\n{hook}\n\nlayer.register_forward_hook({partial}, with_kwargs=True)\n"
    assert bool(lint_text(code, "m.py", [HL018], RuleContext())) == flagged


def test_hl018_a_staticmethod_hook_keeps_its_first_parameter():
    code = """
    class Obs:
        @staticmethod
        def hook(module, args, output):
            return None

        def arm(self, layer):
            layer.register_forward_hook(self.hook)
            layer.register_forward_pre_hook(self.hook)
    """
    assert _codes(code, [HL018]) == [("HL018", 8)]


def test_torch_calls_forward_hooks_with_the_arity_hl018_expects():
    torch = pytest.importorskip("torch")
    from torch.nn.modules.module import register_module_forward_pre_hook

    layer = torch.nn.Linear(2, 2)
    x = torch.randn(1, 2)
    three = layer.register_forward_hook(lambda m, a, out: None, with_kwargs=True)  # noqa: HL004  the layer is local
    with pytest.raises(TypeError):
        layer(x)
    three.remove()
    received = []
    silent = layer.register_forward_hook(lambda m, a, out, extra=None: received.append(out), with_kwargs=True)  # noqa: HL004  the layer is local
    layer(x)
    assert received == [{}]  # ``out`` got the kwargs dict
    silent.remove()
    handle = register_module_forward_pre_hook(lambda m, a, k: None)
    try:
        with pytest.raises(TypeError):
            layer(x)  # a global pre-hook always gets (module, args)
    finally:
        handle.remove()
