"""HL006 captured-tensor-not-detached beyond its VALID/INVALID examples: the ``# noqa``
waiver and the unsafe fix, rebindings, backward hooks, and grad mode, store lifetime
and graph use (issue 14)."""

from __future__ import annotations

from _checks import dedented as _code

from hooklint.engine import fix_text, lint_text
from hooklint.rules import find_rule
from hooklint.rules.base import RuleContext

HL006 = find_rule("HL006")
CONTEXT = RuleContext(target_torch=(2, 4))


def _codes(text: str, rules, context=CONTEXT) -> list[str]:
    return [v.code for v in lint_text(_code(text), "t.py", rules, context)]


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
    assert (
        _codes(
            """
        def hook(module, args, output):
            output = output.detach()
            STORE.append(output)

        layer.register_forward_hook(hook)
        """,
            [HL006],
        )
        == []
    )


def test_hl006_ignores_gradients_of_backward_hooks():
    assert (
        _codes(
            """
        def save_grad(module, grad_input, grad_output):
            GRADS.append(grad_output[0])

        layer.register_full_backward_hook(save_grad)
        """,
            [HL006],
        )
        == []
    )


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
