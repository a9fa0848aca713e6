"""HL010 hook-registered-after-compile beyond its VALID/INVALID examples: the compiled
model must have run first, branches, other functions, and ``re.compile``."""

from __future__ import annotations

from _checks import rule_findings as _lint

from hooklint.rules import find_rule

HL010 = find_rule("HL010")


# -- HL010: order and branches -----------------------------------------------------------
def test_hl010_needs_the_compiled_model_to_have_run_first():
    source = """
    import torch

    def setup(model, batch):
        compiled = torch.compile(model)
        model.head.register_forward_hook(log)
        compiled(batch)
        model.body.register_forward_hook(log)
    """
    violations = _lint(source, HL010)
    assert [v.start.line for v in violations] == [7]


def test_hl010_compile_in_try_and_hook_in_except_is_fine():
    source = """
    import torch

    def setup(model, batch):
        try:
            fast = torch.compile(model)
            fast(batch)
        except Exception:
            model.encoder.register_forward_hook(log)
            fast = model
        return fast
    """
    assert _lint(source, HL010) == []


def test_hl010_other_function_is_another_scope():
    source = """
    import torch

    def build(model, batch):
        compiled = torch.compile(model)
        compiled(batch)
        return compiled

    def instrument(model):
        model.encoder.register_forward_hook(log)
    """
    assert _lint(source, HL010) == []


def test_hl010_regex_compile_is_not_torch_compile():
    source = """
    import re

    def attach(model, batch):
        pattern = re.compile("layer")
        pattern.match("x")
        model.layer.register_forward_hook(log)
    """
    assert _lint(source, HL010) == []
