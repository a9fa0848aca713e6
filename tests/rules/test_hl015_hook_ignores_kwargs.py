"""HL015 hook-ignores-kwargs beyond its VALID/INVALID examples: the fix needs torch >= 2.0
and index 0, a hook shared by two registrations, and the keyword call as the evidence."""

from __future__ import annotations

import pytest
from _checks import rule_findings as _lint

from hooklint.rules import find_rule

HL015 = find_rule("HL015")


# -- HL015: the fix needs torch >= 2.0 ---------------------------------------------------
CAPTURE = """
def capture(module, inputs, output):
    ACTS.append(inputs[0].detach())

for layer in model.model.layers:
    layer.register_forward_hook(capture)
for layer in model.model.layers:
    hidden = layer(hidden_states=hidden)
"""


def test_hl015_fix_withheld_below_2_0():
    (violation,) = _lint(CAPTURE, HL015, (1, 13))
    assert violation.fix is None and "torch >= 2.0" in violation.fix_withheld


def test_hl015_fix_offered_from_2_0_and_unsafe():
    (violation,) = _lint(CAPTURE, HL015, (2, 0))
    assert violation.fix is not None and violation.fix.applicability == "unsafe"


def test_hl015_no_fix_for_indices_other_than_zero():
    source = CAPTURE.replace("inputs[0]", "inputs[1]")
    (violation,) = _lint(source, HL015)
    assert violation.fix is None and violation.fix_withheld is None


def test_hl015_hook_shared_by_two_registrations_is_not_rewritten():
    source = CAPTURE + "model.lm_head.register_forward_hook(capture)\nmodel.lm_head(input=hidden)\n"
    violations = _lint(source, HL015)
    assert len(violations) == 2 and all(v.fix is None for v in violations)


# -- HL015: the keyword call is the evidence -----------------------------------------------
def test_hl015_without_a_keyword_call_nothing_is_reported():
    positional = CAPTURE.replace("layer(hidden_states=hidden)", "layer(hidden)")
    assert _lint(positional, HL015) == []
    assert _lint(CAPTURE.split("for layer in model.model.layers:\n    hidden")[0], HL015) == []


def test_hl015_a_keyword_call_in_another_function_is_another_object():
    source = (
        "def attach(model):\n    model.register_forward_hook(lambda m, a, o: OUT.append(a[0]))\n"
        "def run(model, batch):\n    return model(**batch)\n"
    )
    assert _lint(source, HL015) == []
    joined = source.replace("def run(model, batch):\n    return", "    return")
    (violation,) = _lint(joined, HL015)
    assert violation.start.line == 2 and "`model(...)` passes only keywords" in violation.message
    assert len(violation.message) <= 120 and len(violation.related) == 1


@pytest.mark.parametrize(
    "guard",
    ["if not args or args[0] is None:\n        return", "if len(args) == 0:\n        return", "assert args"],
)
def test_hl015_a_hook_that_checks_args_first_is_not_reported(guard):
    source = (
        f"def hook(module, args):\n    {guard}\n    LOG.append(args[0])\n"
        "def run(model, batch):\n    model.register_forward_pre_hook(hook)\n    model(**batch)\n"
    )
    assert _lint(source, HL015) == []
    unguarded = source.replace(f"    {guard}\n", "")
    assert len(_lint(unguarded, HL015)) == 1
