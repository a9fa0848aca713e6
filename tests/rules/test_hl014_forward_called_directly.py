"""HL010, HL012-HL015 beyond their VALID/INVALID examples: target-torch awareness, fix
safety and withholding, and (with the installed torch) that HL012's fix really makes
the cleanup run on the exception path."""

from __future__ import annotations

import textwrap
import warnings

import pytest

from hooklint.engine import fix_text, lint_text
from hooklint.rules import find_rule
from hooklint.rules.base import RuleContext

HL010, HL012, HL013, HL014, HL015 = (find_rule(c) for c in ("HL010", "HL012", "HL013", "HL014", "HL015"))


def _code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _lint(text, rule, target=(2, 4)):
    return [v for v in lint_text(_code(text), "t.py", [rule], RuleContext(target_torch=target)) if v.code == rule.code]


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
    exec(compile(fixed.replace("register_module_forward_hook(_leave", "HANDLE = register_module_forward_hook(_leave"), "fixed", "exec"), namespace)

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


# -- HL013: a safe fix ----------------------------------------------------------------------
def test_hl013_fix_is_safe_and_applied_without_unsafe_fixes():
    source = _code(
        """
        from torch.nn.utils.parametrize import _cache_enabled

        def depth():
            return _cache_enabled
        """
    )
    outcome = fix_text(source, "t.py", [HL013], RuleContext(), unsafe=False)
    assert outcome.fixed == 1
    assert "return parametrize._cache_enabled" in outcome.text
    assert "from torch.nn.utils import parametrize" in outcome.text


def test_hl013_keyword_arguments_and_attributes_are_not_rewritten():
    source = _code(
        """
        from torch.nn.utils.parametrize import _cache

        def show(obj):
            return obj._cache, dict(_cache=len(_cache))
        """
    )
    fixed = fix_text(source, "t.py", [HL013], RuleContext(), unsafe=False).text
    assert "obj._cache, dict(_cache=len(parametrize._cache))" in fixed


# -- HL014: unsafe fix --------------------------------------------------------------------
def test_hl014_fix_is_unsafe_only():
    source = "import torch\nclass Net(torch.nn.Module):\n    def run(self, x):\n        return self.forward(x)\n"
    assert fix_text(source, "t.py", [HL014], RuleContext(), unsafe=False).fixed == 0
    assert fix_text(source, "t.py", [HL014], RuleContext(), unsafe=True).text == source.replace("self.forward(x)", "self(x)")


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


# -- HL010: order and branches -----------------------------------------------------------
def test_hl010_needs_the_compiled_model_to_have_run_first():
    source = """
    import torch

    def setup(model, batch):
        compiled = torch.compile(model)
        model.head.register_forward_hook(log)
        compiled(batch)
        model.body.register_forward_hook(log)
    """
    violations = _lint(source, HL010)
    assert [v.start.line for v in violations] == [7]


def test_hl010_compile_in_try_and_hook_in_except_is_fine():
    source = """
    import torch

    def setup(model, batch):
        try:
            fast = torch.compile(model)
            fast(batch)
        except Exception:
            model.encoder.register_forward_hook(log)
            fast = model
        return fast
    """
    assert _lint(source, HL010) == []


def test_hl010_other_function_is_another_scope():
    source = """
    import torch

    def build(model, batch):
        compiled = torch.compile(model)
        compiled(batch)
        return compiled

    def instrument(model):
        model.encoder.register_forward_hook(log)
    """
    assert _lint(source, HL010) == []


def test_hl010_regex_compile_is_not_torch_compile():
    source = """
    import re

    def attach(model, batch):
        pattern = re.compile("layer")
        pattern.match("x")
        model.layer.register_forward_hook(log)
    """
    assert _lint(source, HL010) == []
