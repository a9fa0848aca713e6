"""HL005-HL008 beyond their VALID/INVALID examples: agreement with HL001's fix, fix
safety, target-torch withholding, ``# noqa`` waivers and the preview tier."""

from __future__ import annotations

import textwrap

from hooklint.engine import fix_text, lint_text
from hooklint.rules import find_rule
from hooklint.rules.base import RuleContext
from hooklint.selection import resolve_rules

HL001 = find_rule("HL001")
HL005 = find_rule("HL005")
HL006 = find_rule("HL006")
HL007 = find_rule("HL007")
HL008 = find_rule("HL008")
CONTEXT = RuleContext(target_torch=(2, 4))


def _code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _codes(text: str, rules, context=CONTEXT) -> list[str]:
    return [v.code for v in lint_text(_code(text), "t.py", rules, context)]


PAIR = """
import torch.nn.utils.parametrize as P

def enter(module, args):
    P._cache_enabled += 1
    STACK.append(module)

def leave(module, args, output):
    P._cache_enabled -= 1
    STACK.pop()

def install(module):
    module.register_forward_pre_hook(enter)
    module.register_forward_hook(leave)
"""


def test_hl001_fix_output_is_clamped_for_hl005_and_the_pair_fixes_to_clean():
    after_hl001 = fix_text(_code(PAIR), "t.py", [HL001], CONTEXT, unsafe=False).text
    assert "always_call=True" in after_hl001
    assert "P._cache_enabled = max(0, P._cache_enabled - 1)" in after_hl001
    # The clamped counter is fine for HL005; the stack pop HL001 leaves alone is not.
    findings = lint_text(after_hl001, "t.py", [HL005], CONTEXT)
    assert [v.code for v in findings] == ["HL005"]
    assert "`STACK`" in findings[0].message and findings[0].source_line.strip() == "STACK.pop()"
    both = fix_text(_code(PAIR), "t.py", [HL001, HL005], CONTEXT, unsafe=False)
    assert both.violations == []
    assert "if STACK:\n        STACK.pop()" in both.text


def test_hl005_fix_is_safe_and_applied_without_unsafe_fixes():
    source = _code(
        """
        def enter(module, args):
            global depth
            depth += 1

        def leave(module, args, output):
            global depth
            depth -= 1

        layer.register_forward_pre_hook(enter)
        layer.register_forward_hook(leave, always_call=True)
        """
    )
    [violation] = lint_text(source, "t.py", [HL005], CONTEXT)
    assert violation.fix is not None and violation.fix.applicability == "safe"
    fixed = fix_text(source, "t.py", [HL005], CONTEXT, unsafe=False)
    assert "depth = max(0, depth - 1)" in fixed.text and fixed.violations == []


def test_hl005_offers_no_fix_when_the_container_type_is_unknown():
    source = _code(
        """
        def enter(module, args):
            REGISTRY[id(module)] = module

        def leave(module, args, output):
            REGISTRY.remove(id(module))

        layer.register_forward_pre_hook(enter)
        layer.register_forward_hook(leave, always_call=True)
        """
    )
    [violation] = lint_text(source, "t.py", [HL005], CONTEXT)
    assert violation.fix is None


def test_hl006_is_waived_with_noqa_and_its_fix_is_unsafe():
    source = _code(
        """
        acts = {}
        layer.register_forward_hook(lambda m, i, o: acts.__setitem__("x", o))
        """
    )
    [violation] = lint_text(source, "t.py", [HL006], CONTEXT)
    assert violation.fix is not None and violation.fix.applicability == "unsafe"
    assert fix_text(source, "t.py", [HL006], CONTEXT, unsafe=False).text == source
    waived = source.replace('"x", o))', '"x", o))  # noqa: HL006')
    assert lint_text(waived, "t.py", [HL006], CONTEXT) == []


def test_hl006_follows_a_rebinding_that_detaches():
    assert _codes(
        """
        def hook(module, args, output):
            output = output.detach()
            STORE.append(output)

        layer.register_forward_hook(hook)
        """,
        [HL006],
    ) == []


def test_hl006_ignores_gradients_of_backward_hooks():
    assert _codes(
        """
        def save_grad(module, grad_input, grad_output):
            GRADS.append(grad_output[0])

        layer.register_full_backward_hook(save_grad)
        """,
        [HL006],
    ) == []


# -- HL006: grad mode, store lifetime, graph use (issue 14) ------------------------------
RECORDER = """
import torch

def attach(model, store):
    model.register_forward_hook(lambda m, a, out: store.append(out))

{decorator}def calibrate(model, store, batch):
    {context}attach(model, store)
    {indent}model(batch)

def train(model, store, batch):
    {train}
"""


def _recorder(decorator="", context="", train="pass"):
    indent = "    " if context else ""
    return RECORDER.format(decorator=decorator, context=context, indent=indent, train=train)


def test_hl006_a_helper_whose_every_caller_runs_without_grad_is_not_reported():
    assert _codes(_recorder(decorator="@torch.inference_mode()\n"), [HL006]) == []
    assert _codes(_recorder(context="with torch.no_grad():\n        "), [HL006]) == []
    assert _codes(_recorder(context="with torch.set_grad_enabled(False):\n        "), [HL006]) == []


def test_hl006_one_caller_with_grad_is_enough_to_report():
    assert _codes(_recorder(context="with torch.set_grad_enabled(True):\n        "), [HL006]) == ["HL006"]
    with_grad_caller = _recorder(decorator="@torch.no_grad()\n", train="attach(model, store)")
    assert _codes(with_grad_caller, [HL006]) == ["HL006"]


def test_hl006_a_local_store_dies_with_the_call_only_when_the_hook_is_removed():
    source = """
    def first_output(model, x):
        found = []
        handle = model.register_forward_hook(lambda m, a, out: found.append(out))
        model(x)
        handle.remove()
        return found[0]
    """
    assert _codes(source, [HL006]) == []
    assert _codes(source.replace("        handle.remove()\n", ""), [HL006]) == ["HL006"]


def test_hl006_a_store_read_only_outside_forward_is_still_reported():
    source = """
    import torch.nn as nn

    class Tapped(nn.Module):
        def __init__(self, body):
            super().__init__()
            self.body = body
            self.taps = []
            body.register_forward_hook(self._tap)

        def _tap(self, module, args, output):
            self.taps.append(output)

        def {reader}(self):
            return list(self.taps)
    """
    assert _codes(source.format(reader="features"), [HL006]) == ["HL006"]
    assert _codes(source.format(reader="forward"), [HL006]) == []
    assert _codes(source.format(reader="feature_loss"), [HL006]) == []


def test_hl007_withholds_its_fix_below_torch_1_8_and_offers_it_from_1_8():
    source = "encoder.register_backward_hook(hook)\n"
    [old] = lint_text(source, "t.py", [HL007], RuleContext(target_torch=(1, 7)))
    assert old.fix is None and old.fix_withheld and "1.8" in old.fix_withheld
    [new] = lint_text(source, "t.py", [HL007], RuleContext(target_torch=(1, 8)))
    assert new.fix is not None and new.fix.applicability == "unsafe"
    fixed = fix_text(source, "t.py", [HL007], RuleContext(target_torch=(1, 8)), unsafe=True)
    assert fixed.text == "encoder.register_full_backward_hook(hook)\n"


def test_hl008_leaves_hooks_that_return_on_some_path_alone():
    assert _codes(
        """
        def scale(module, args, output):
            if module.training:
                return None
            output = output * 0.5
            return output

        layer.register_forward_hook(scale)
        """,
        [HL008],
    ) == []


def test_hl008_in_place_changes_and_local_unwraps_are_not_rebindings():
    assert _codes(
        """
        def clamp(module, args, output):
            output.clamp_(-1, 1)

        def peek(module, args, output):
            output = output[0]
            print(output.shape)

        layer.register_forward_hook(clamp)
        layer.register_forward_hook(peek)
        """,
        [HL008],
    ) == []


def test_hl008_fix_is_unsafe_and_idempotent():
    source = "layer.register_forward_hook(lambda m, i, o: CACHE.pop(m, None))\n"
    [violation] = lint_text(source, "t.py", [HL008], CONTEXT)
    assert violation.fix.applicability == "unsafe"
    once = fix_text(source, "t.py", [HL008], CONTEXT, unsafe=True)
    assert once.text == "layer.register_forward_hook(lambda m, i, o: (CACHE.pop(m, None), None)[1])\n"
    assert fix_text(once.text, "t.py", [HL008], CONTEXT, unsafe=True).text == once.text


def test_preview_tier_hl006_and_hl008_run_only_in_preview():
    default = {r.code for r in resolve_rules(None)}
    assert {"HL005", "HL007"} <= default
    assert not {"HL006", "HL008"} & default
    assert not {"HL006", "HL008"} & {r.code for r in resolve_rules(["HL006", "HL008"])}
    preview = {r.code for r in resolve_rules(None, preview=True)}
    assert {"HL005", "HL006", "HL007", "HL008"} <= preview
