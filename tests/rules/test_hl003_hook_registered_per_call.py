"""HL003 hook-registered-per-call beyond its VALID/INVALID examples: the fix needs
``--unsafe-fixes``, install-once checks, no double report with HL004, and the example
files under ``examples/``."""

from __future__ import annotations

import textwrap

import pytest
from _checks import LIFETIME_RULES, check_example_files, findings

from hooklint.engine import fix_text
from hooklint.rules import rules_by_code
from hooklint.rules.base import RuleContext


def test_hl003_fix_needs_unsafe_fixes():
    source = textwrap.dedent(
        """\
        def forward(self, x):
            self.encoder.register_forward_hook(self._store)
            return self.encoder(x)
        """
    )
    safe = fix_text(source, "t.py", [rules_by_code()["HL003"]], RuleContext(), unsafe=False)
    assert safe.text == source and safe.fixed == 0
    unsafe = fix_text(source, "t.py", [rules_by_code()["HL003"]], RuleContext(), unsafe=True)
    assert "with self.encoder.register_forward_hook(self._store):" in unsafe.text


def test_one_report_for_a_removal_inside_the_loop():
    # Registered and removed in each pass: only HL004 (not exception-safe), not HL003.
    violations = findings(
        """
        def probe(model, loader, fn):
            for batch in loader:
                h = model.register_forward_hook(fn)
                model(batch)
                h.remove()
        """,
        LIFETIME_RULES,
    )
    assert [v.code for v in violations] == ["HL004"]


def test_hl003_install_once_flag_and_early_return():
    assert (
        findings(
            """
        class Wrapper(nn.Module):
            def forward(self, x):
                if self._hooked:
                    return self.inner(x)
                self.inner.register_forward_hook(self._record)
                self._hooked = True
                return self.inner(x)
        """,
            ("HL003",),
        )
        == []
    )


def test_hl003_lost_handles_only_for_the_same_target():
    assert (
        findings(
            """
        def attach(model, states):
            for module, state in zip(model.modules(), states):
                state.handle = module.register_forward_hook(fn)
        """,
            ("HL003",),
        )
        == []
    )


@pytest.mark.parametrize("code", ["HL003"])
def test_example_files(code):
    check_example_files(code, LIFETIME_RULES)


GUARDED_LOOP = """
def train(model, loader, log):
    for batch in loader:
{guard}        model.register_forward_hook(log)
        model.hooked = True
        model(batch)
"""


def test_hl003_install_once_by_continue_over_a_stored_attribute():
    # `if model.hooked: continue` before the registration is one of its guards
    # (hooklint.analysis.guards), and the loop sets `model.hooked`: installed once.
    guard = "        if model.hooked:\n            continue\n"
    assert findings(GUARDED_LOOP.format(guard=guard), ("HL003",)) == []
    flagged = findings(GUARDED_LOOP.format(guard=""), ("HL003",))
    assert [v.start.line for v in flagged] == [3] and "every iteration" in flagged[0].message
    # A test of something the loop never sets is no install-once check.
    other = "        if batch is None:\n            continue\n"
    assert [v.start.line for v in findings(GUARDED_LOOP.format(guard=other), ("HL003",))] == [5]
