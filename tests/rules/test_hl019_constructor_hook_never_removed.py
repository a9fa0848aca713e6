"""HL019 constructor-hook-never-removed beyond its VALID/INVALID examples: the split
with HL016 (a class with a teardown) and HL002 (a capture hook), what counts as a module
the constructor was given, the classes it leaves alone, and what torch does with such
hooks (verified when torch is installed)."""

from __future__ import annotations

import gc
import weakref

import pytest
from _checks import check_example_files
from _checks import codes_and_lines as _codes
from _checks import lint as _lint

from hooklint.rules import find_rule

HL019 = find_rule("HL019")
NEIGHBOURS = [find_rule(c) for c in ("HL002", "HL004", "HL016", "HL019")]

COUNTER = """
class Counter:
    def __init__(self, model):
        self.calls = 0
        for m in model.children():
            m.register_forward_hook(self._count)

    def _count(self, module, args, output):
        self.calls += 1
"""


def test_bundled_examples():
    check_example_files("HL019", ("HL002", "HL004", "HL016", "HL019"))


def test_a_teardown_makes_the_hooks_hl016s_and_not_hl019s():
    assert _codes(COUNTER, NEIGHBOURS) == [("HL019", 5)]
    with_exit = (
        COUNTER
        + """
    def __exit__(self, *exc):
        self.calls = 0
"""
    )
    assert _codes(with_exit, NEIGHBOURS) == [("HL016", 5)]


def test_a_constructor_with_a_capture_hook_is_hl002s_alone():
    # The grad-cam shape: one hook appends what it receives (HL002), the other does not.
    code = """
    class Tap:
        def __init__(self, model, layer):
            self.model = model
            self.outputs = []
            layer.register_forward_hook(self._keep)
            layer.register_full_backward_hook(self._flag)

        def _keep(self, module, args, output):
            self.outputs.append(output.detach())

        def _flag(self, module, grad_input, grad_output):
            self.flagged = True
    """
    assert _codes(code, NEIGHBOURS) == [("HL002", 5)]


def test_a_hook_that_holds_nothing_of_the_object_is_not_reported():
    code = COUNTER.replace("m.register_forward_hook(self._count)", "m.register_forward_hook(_count)")
    assert _codes(code, [HL019]) == []
    closure = COUNTER.replace(
        "m.register_forward_hook(self._count)",
        "m.register_forward_hook(lambda mod, a, out: self._count(mod, a, out))",
    )
    assert _codes(closure, [HL019]) == [("HL019", 5)]


def test_a_module_class_or_an_imported_base_is_left_alone():
    assert _codes(COUNTER.replace("class Counter:", "class Counter(nn.Module):"), [HL019]) == []
    # A base from another file may have the teardown.
    assert _codes(COUNTER.replace("class Counter:", "class Counter(Callback):"), [HL019]) == []
    assert _codes(COUNTER.replace("class Counter:", "class Counter(object):"), [HL019]) == [("HL019", 5)]


def test_a_same_file_base_with_a_teardown_is_a_teardown():
    code = """
class Base:
    def close(self):
        self.closed = True

""" + COUNTER.replace("class Counter:", "class Counter(Base):")
    assert _codes(code, [HL019]) == []


def test_a_handle_kept_on_the_object_is_not_this_rules():
    code = COUNTER.replace("m.register_forward_hook", "self.handle = m.register_forward_hook")
    assert _codes(code, [HL019]) == []


def test_a_method_that_removes_hooks_by_name_clears_the_class():
    code = (
        COUNTER
        + """
    def reset(self, model):
        _remove_all_hooks(model)
"""
    )
    assert _codes(code, [HL019]) == []
    # A name that mentions removal but is not about taking hooks off does not.
    other = code.replace("_remove_all_hooks(model)", "remove_buffers(model)")
    assert _codes(other, [HL019]) == [("HL019", 5)]


def test_an_installer_called_through_a_method_on_a_module_kept_from_a_parameter():
    # The ZeRO-3 shape: __init__ -> a setup method -> a recursive installer on self.module.
    code = """
    class Offloader:
        def __init__(self, module):
            self.module = module
            self._setup()

        def _setup(self):
            self._hook_tree(self.module)

        def _hook_tree(self, module):
            for child in module.children():
                self._hook_tree(child)

            def fetch(mod, *args):
                self.fetch(mod)

            module.register_forward_pre_hook(fetch)
    """
    found = _lint(code, [HL019])
    assert [(v.code, v.start.line) for v in found] == [("HL019", 16)]
    assert "`Offloader` hooks a module its `__init__` was given and keeps no handle" in found[0].message
    assert [r.line for r in found[0].related] == [4, 7]


def test_torch_keeps_every_instance_and_runs_every_hook():
    torch = pytest.importorskip("torch")

    class Counter:
        def __init__(self, model):
            self.calls = 0
            for m in model.children():
                m.register_forward_hook(self._count)  # noqa: HL019  the behaviour under test

        def _count(self, module, args, output):
            self.calls += 1

    model = torch.nn.Sequential(torch.nn.Linear(2, 2))
    first = Counter(model)
    alive = weakref.ref(first)
    del first
    gc.collect()
    assert alive() is not None  # the hook's bound method keeps the object
    second = Counter(model)
    model(torch.randn(1, 2))
    assert len(model[0]._forward_hooks) == 2
    assert alive().calls == 1 and second.calls == 1  # the old counter still counts
