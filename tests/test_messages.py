"""Messages fit one line of a terminal and of grep: every rule's message, over every
rule example, is one line of at most 120 characters (the explanation is in
``hooklint explain`` and JSON's ``url``); a withheld fix adds a short note."""

from __future__ import annotations

import textwrap

import pytest

from hooklint.engine import lint_text
from hooklint.rules import all_rules, find_rule
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


# -- HL016-HL019 on long names: still one line of at most 120 characters -----------------
HL016, HL017, HL018, HL019 = find_rule("HL016"), find_rule("HL017"), find_rule("HL018"), find_rule("HL019")
LONG = "a_rather_long_function_name_for_a_hook_that_keeps_going"


@pytest.mark.parametrize(
    ("rule", "code"),
    [
        (
            HL018,
            f"def {LONG}(module, args, output): pass\nm.register_forward_hook({LONG}, with_kwargs=True)\n",
        ),
        (
            HL018,
            f"def {LONG}(module, args, kwargs, output=None, extra=None): pass\nm.register_forward_hook({LONG})\n",
        ),
        (
            HL017,
            f"def f(a):\n    for h in a.{LONG}.{LONG}._forward_hooks.values():\n        b.register_forward_hook(h)\n",
        ),
        (
            HL016,
            f"class C:\n    def on_{LONG}_start(self, m):\n        m.register_forward_hook(f)\n    def on_{LONG}_end(self, m):\n        pass\n",
        ),
        (
            HL016,
            f"class {LONG}:\n    def __init__(self, m):\n        m.register_forward_hook(self.f)\n"
            "    def close(self):\n        pass\n    def release(self):\n        pass\n    def __del__(self):\n        pass\n",
        ),
        (
            HL019,
            f"class {LONG}:\n    def __init__(self, m):\n        m.register_forward_hook(self.f)\n",
        ),
        (
            HL016,
            f"class C:\n    def __enter__(self):\n        self.{LONG}.append(m.register_forward_hook(f))\n    def __exit__(self, *e):\n        pass\n",
        ),
    ],
)
def test_messages_are_one_line_of_at_most_120_characters(rule, code):
    found = lint_text(code, "m.py", [rule], RuleContext())
    assert found
    for violation in found:
        assert "\n" not in violation.message and len(violation.message) <= 120, violation.message
