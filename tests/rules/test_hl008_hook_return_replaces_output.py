"""HL008 hook-return-replaces-output beyond its VALID/INVALID examples: returns on
some path, in-place changes and local unwraps, and an unsafe, idempotent fix."""

from __future__ import annotations

from _checks import dedented as _code

from hooklint.engine import fix_text, lint_text
from hooklint.rules import find_rule
from hooklint.rules.base import RuleContext

HL008 = find_rule("HL008")
CONTEXT = RuleContext(target_torch=(2, 4))


def _codes(text: str) -> list[str]:
    return [v.code for v in lint_text(_code(text), "t.py", [HL008], CONTEXT)]


def test_hl008_leaves_hooks_that_return_on_some_path_alone():
    assert (
        _codes(
            """
        def scale(module, args, output):
            if module.training:
                return None
            output = output * 0.5
            return output

        layer.register_forward_hook(scale)
        """
        )
        == []
    )


def test_hl008_in_place_changes_and_local_unwraps_are_not_rebindings():
    assert (
        _codes(
            """
        def clamp(module, args, output):
            output.clamp_(-1, 1)

        def peek(module, args, output):
            output = output[0]
            print(output.shape)

        layer.register_forward_hook(clamp)
        layer.register_forward_hook(peek)
        """
        )
        == []
    )


def test_hl008_fix_is_unsafe_and_idempotent():
    source = "layer.register_forward_hook(lambda m, i, o: CACHE.pop(m, None))\n"
    [violation] = lint_text(source, "t.py", [HL008], CONTEXT)
    assert violation.fix.applicability == "unsafe"
    once = fix_text(source, "t.py", [HL008], CONTEXT, unsafe=True)
    assert once.text == "layer.register_forward_hook(lambda m, i, o: (CACHE.pop(m, None), None)[1])\n"
    assert fix_text(once.text, "t.py", [HL008], CONTEXT, unsafe=True).text == once.text
