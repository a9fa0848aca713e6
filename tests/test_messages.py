"""Messages fit one line of a terminal and of grep: every rule's message, over every
rule example, is one line of at most 120 characters (the explanation is in
``hooklint explain`` and JSON's ``url``); a withheld fix adds a short note."""

from __future__ import annotations

import textwrap

import pytest

from hooklint.engine import lint_text
from hooklint.rules import all_rules
from hooklint.rules.base import RuleContext

LIMIT = 120


def _examples():
    for rule in all_rules():
        for kind in ("INVALID", "VALID"):
            for index, example in enumerate(getattr(rule, kind)):
                yield pytest.param(rule, example, id=f"{rule.code}-{kind.lower()}-{index}")


@pytest.mark.parametrize(("rule", "example"), list(_examples()))
def test_every_message_is_one_short_line(rule, example):
    source = textwrap.dedent(example.code).lstrip("\n")
    for v in lint_text(source, "example.py", [rule], RuleContext(**example.options)):
        base = v.message
        if v.fix_withheld:
            note = f" (fix withheld: {v.fix_withheld})"
            assert base.endswith(note)
            base = base[: -len(note)]
            assert len(note) <= 90 and "\n" not in note, note
        assert "\n" not in v.message and "\r" not in v.message
        assert len(base) <= LIMIT, f"{len(base)} characters: {base}"


def test_a_name_with_a_line_break_still_gives_a_one_line_message():
    # A subscript spanning lines is copied into the message as written in the source.
    rules = [r for r in all_rules() if r.code == "HL014"]
    source = (
        "import torch.nn as nn\n\n\nclass Net(nn.Module):\n"
        "    def run(self, x):\n        return self.layers[\n            0\n        ].forward(x)\n"
    )
    found = lint_text(source, "m.py", rules, RuleContext())
    assert found and all("\n" not in v.message for v in found)
