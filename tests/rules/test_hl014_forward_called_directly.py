"""HL014 forward-called-directly beyond its VALID/INVALID examples: an unsafe fix only
where the receiver is known to be a module, remote, scripted and unbound calls, a
comment that says why, hooks, and same-file classes."""

from __future__ import annotations

import pytest
from _checks import rule_findings as _lint

from hooklint.engine import fix_text
from hooklint.rules import find_rule
from hooklint.rules.base import RuleContext

HL014 = find_rule("HL014")


# -- HL014: unsafe fix --------------------------------------------------------------------
def test_hl014_fix_is_unsafe_only():
    source = (
        "import torch\nclass Net(torch.nn.Module):\n    def run(self, x):\n        return self.forward(x)\n"
    )
    assert fix_text(source, "t.py", [HL014], RuleContext(), unsafe=False).fixed == 0
    assert fix_text(source, "t.py", [HL014], RuleContext(), unsafe=True).text == source.replace(
        "self.forward(x)", "self(x)"
    )


@pytest.mark.parametrize(
    "source",
    [
        # an object of unknown type: its __call__ may not run forward
        "def run(model, x):\n    return model.forward(x)\n",
        # a variant table entry on a class without __call__ (no nn.Module in sight)
        "class Layer(Base):\n    def run(self, a, x):\n        return self.lora_variant[a].forward(x)\n",
        # self in a class whose base is imported: self(...) may recurse through __call__
        "from .base import Model\nclass P(Model):\n    def run(self, x):\n        return self.forward(x)\n",
    ],
)
def test_hl014_offers_no_fix_where_the_receiver_is_not_known_to_be_a_module(source):
    found = _lint(source, HL014)
    assert len(found) == 1 and found[0].fix is None
    assert fix_text(source, "t.py", [HL014], RuleContext(), unsafe=True).text == source


@pytest.mark.parametrize(
    "call",
    [
        "rref.rpc_sync().forward(x)",
        "remote_module.forward(x)",
        "self._c.forward(x)",
        "type(m).forward(m, x)",
        "[r.forward(x) for r in self.make_remote_modules()]",
    ],
)
def test_hl014_remote_scripted_and_unbound_calls_are_not_reported(call):
    assert _lint(f"def run(self, m, rref, remote_module, x):\n    return {call}\n", HL014) == []


def test_hl014_a_comment_explains_the_bypass_only_when_it_says_why():
    source = "def update(metric, value):\n    # {comment}\n    metric.forward(value)\n"
    assert _lint(source.format(comment="avoid __call__ overhead on this hot path"), HL014) == []
    assert _lint(source.format(comment="no recursion: hooks run by hand"), HL014) == []
    assert len(_lint(source.format(comment="update the running metric"), HL014)) == 1


def test_hl014_inside_a_hook_only_the_hooked_module_is_exempt():
    source = (
        "def install(model, other):\n"
        "    def probe(module, args):\n"
        "        return {receiver}.forward(*args)\n"
        "    model.register_forward_pre_hook(probe)\n"
    )
    assert _lint(source.format(receiver="module"), HL014) == []
    assert _lint(source.format(receiver="model"), HL014) == []
    assert len(_lint(source.format(receiver="other"), HL014)) == 1


def test_hl014_a_same_file_class_decides_what_an_attribute_holds():
    source = (
        "import torch.nn as nn\n"
        "class Engine{base}:\n    def forward(self, x):\n        return x\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.engine = Engine()\n"
        "    def forward(self, x):\n        return self.engine.forward(x)\n"
    )
    assert _lint(source.format(base=""), HL014) == []
    [found] = _lint(source.format(base="(nn.Module)"), HL014)
    assert found.fix is not None  # a known module: the fix is offered


def test_hl014_get_submodule_is_still_a_module():
    assert len(_lint("def run(model, x):\n    return model.get_submodule('fc').forward(x)\n", HL014)) == 1
