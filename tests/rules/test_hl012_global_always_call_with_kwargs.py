"""HL012 global-always-call-with-kwargs beyond its VALID/INVALID examples: the target
torch range it fires for, an unsafe fix, and (with the installed torch) that the
fixed hook really runs its cleanup on the exception path."""

from __future__ import annotations

import warnings

import pytest
from _checks import dedented as _code
from _checks import rule_findings as _lint

from hooklint.engine import fix_text
from hooklint.rules import find_rule
from hooklint.rules.base import RuleContext

HL012 = find_rule("HL012")


# -- HL012: the target is the oldest supported torch ------------------------------------
GLOBAL_HOOK = """
from torch.nn.modules.module import register_module_forward_hook

def _leave(module, args, kwargs, output):
    CLEANUPS.append(module)

register_module_forward_hook(_leave, with_kwargs=True, always_call=True)
"""


@pytest.mark.parametrize("target", [(1, 13), (2, 0), (2, 4), (2, 6), (2, 10), (2, 13)])
def test_hl012_fires_when_the_range_reaches_into_2_6_to_2_13(target):
    assert len(_lint(GLOBAL_HOOK, HL012, target)) == 1


@pytest.mark.parametrize("target", [(2, 14), (3, 0)])
def test_hl012_is_quiet_when_the_range_starts_after_2_13(target):
    assert _lint(GLOBAL_HOOK, HL012, target) == []


def test_hl012_fix_is_unsafe():
    (violation,) = _lint(GLOBAL_HOOK, HL012)
    assert violation.fix is not None and violation.fix.applicability == "unsafe"
    safe_only = fix_text(_code(GLOBAL_HOOK), "t.py", [HL012], RuleContext(), unsafe=False)
    assert safe_only.fixed == 0


def test_hl012_fixed_hook_runs_its_cleanup_when_forward_raises():
    torch = pytest.importorskip("torch")
    fixed = fix_text(_code(GLOBAL_HOOK), "t.py", [HL012], RuleContext(), unsafe=True).text
    namespace = {"CLEANUPS": []}
    exec(
        compile(
            fixed.replace(
                "register_module_forward_hook(_leave", "HANDLE = register_module_forward_hook(_leave"
            ),
            "fixed",
            "exec",
        ),
        namespace,
    )

    class Boom(torch.nn.Module):
        def forward(self, x):
            raise RuntimeError("boom")

    module = Boom()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a TypeError in the hook would surface as a warning
            with pytest.raises(RuntimeError, match="boom"):
                module(torch.zeros(1))
        assert namespace["CLEANUPS"] == [module]
        namespace["CLEANUPS"].clear()
        torch.nn.Linear(1, 1)(torch.zeros(1))  # the normal path: four arguments
        assert len(namespace["CLEANUPS"]) == 1
    finally:
        namespace["HANDLE"].remove()


def test_hl012_fix_after_a_docstring_only_body_keeps_the_docstrings_comment():
    source = GLOBAL_HOOK.replace("    CLEANUPS.append(module)\n", '    """Leave."""  # the exit side\n')
    fixed = fix_text(_code(source), "t.py", [HL012], RuleContext(), unsafe=True).text
    assert (
        '    """Leave."""  # the exit side\n    kwargs, output = (rest[0], rest[1]) if len(rest) == 2'
        in fixed
    )
