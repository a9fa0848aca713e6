"""HL005 unclamped-always-call-release beyond its VALID/INVALID examples: agreement
with HL001's fix, and a safe fix only where the container is known."""

from __future__ import annotations

from _checks import dedented as _code
from _checks import findings

from hooklint.engine import fix_text, lint_text
from hooklint.rules import find_rule
from hooklint.rules.base import RuleContext

HL001 = find_rule("HL001")
HL005 = find_rule("HL005")
CONTEXT = RuleContext(target_torch=(2, 4))

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
            REGISTRY[id(args)] = module

        def leave(module, args, output):
            REGISTRY.remove(id(args))

        layer.register_forward_pre_hook(enter)
        layer.register_forward_hook(leave, always_call=True)
        """
    )
    [violation] = lint_text(source, "t.py", [HL005], CONTEXT)
    assert violation.fix is None


GUARDED_POP = """
STACK = []

def enter(module, args):
    STACK.append(module)

def leave(module, args, output):
{body}

def install(module):
    module.register_forward_pre_hook(enter)
    module.register_forward_hook(leave, always_call=True)
"""


def test_hl005_release_after_an_early_exit_is_guarded():
    # One guard concept (hooklint.analysis.guards): an `if` whose block ends in
    # return/raise/continue guards what follows it, with or without an `else`.
    def hl005(body):
        return findings(GUARDED_POP.format(body=body), ("HL005",), CONTEXT)

    assert [v.start.line for v in hl005("    STACK.pop()")] == [7]
    assert hl005("    if not STACK:\n        return\n    STACK.pop()") == []
    assert (
        hl005("    if not STACK:\n        return\n    else:\n        print(len(STACK))\n    STACK.pop()")
        == []
    )
    assert (
        hl005("    for _ in range(2):\n        if not STACK:\n            continue\n        STACK.pop()")
        == []
    )
    # An early exit on something else guards nothing here.
    assert [v.start.line for v in hl005("    if args is None:\n        return\n    STACK.pop()")] == [9]
