"""The screen follows calls from hook code only (hooklint/screen.py ``_keep_callees``):
hook objects built in an ``__init__`` that also registers them, and helpers called
from a lambda written inside the registering function, are still followed, so the
screened lint reports what the whole-file lint reports."""

from __future__ import annotations

import pytest

import hooklint.engine as engine
from hooklint.rules import rules_by_code
from hooklint.rules.base import RuleContext

BUILT_AND_REGISTERED_IN_INIT = """
import torch


class Enter:
    def __call__(self, module, args):
        STACK.append(module)


class Leave:
    def __call__(self, module, args, output):
        STACK.pop()


class Owner:
    def __init__(self, model):
        self.enter = Enter()
        self.leave = Leave()
        model.register_forward_pre_hook(self.enter)
        model.register_forward_hook(self.leave)

    def unrelated(self):
        return 2
"""

LAMBDA_CALLS_HELPERS = """
import torch


class Probe:
    def _push(self, module):
        self._deeper(module)

    def _deeper(self, module):
        self.stack.append(module)

    def _pop(self):
        self.stack.pop()

    def unrelated(self):
        return self.helper_never_followed()

    def attach(self, model):
        self.unrelated()
        model.register_forward_pre_hook(lambda m, a: self._push(m))
        model.register_forward_hook(lambda m, a, o: self._pop())
"""


@pytest.mark.parametrize(
    "source", [BUILT_AND_REGISTERED_IN_INIT, LAMBDA_CALLS_HELPERS], ids=["init", "lambda"]
)
def test_the_screen_keeps_what_hook_code_calls(source):
    rules = [rules_by_code()["HL001"]]
    fast = engine.lint_text(source, "m.py", rules, RuleContext())
    whole = engine.lint_text(source, "m.py", rules, RuleContext(), skip_irrelevant=False)
    assert len(whole) == 1 and "always_call" in whole[0].message
    assert [(v.start, v.message, v.fix) for v in fast] == [(v.start, v.message, v.fix) for v in whole]
