"""HL016 hook-outlives-context beyond its VALID/INVALID examples: the setup/teardown
vocabulary it pairs methods by, one finding per bug across rules (HL002, HL004 and
HL009 take theirs), installers reached through helpers, and removals it follows."""

from __future__ import annotations

import textwrap

import pytest
from _checks import codes_and_lines as _codes
from _checks import lint as _lint

from hooklint.analysis.vocabulary import lifecycle_partners, lifecycle_teardowns
from hooklint.engine import lint_text
from hooklint.rules import find_rule
from hooklint.rules.base import RuleContext

HL016 = find_rule("HL016")
HL019 = find_rule("HL019")
NEIGHBOURS = [find_rule(c) for c in ("HL002", "HL004", "HL009", "HL012", "HL016")]


# -- vocabulary ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("setup", "teardown"),
    [
        ("on_train_start", "on_train_end"),
        ("on_validation_epoch_start", "on_validation_epoch_end"),
        ("register_hooks", "remove_hooks"),
        ("_attach", "_detach"),
        ("setup", "teardown"),
        ("setUp", "tearDown"),
        ("__enter__", "__exit__"),
        ("__init__", "close"),
        ("__init__", "__exit__"),
        ("__init__", "__del__"),
        ("__init__", "release"),
        ("enable_observers", "disable_observers"),
    ],
)
def test_lifecycle_names_pair_both_ways(setup, teardown):
    assert teardown in lifecycle_teardowns(setup)
    assert setup in lifecycle_partners(teardown) and teardown in lifecycle_partners(setup)


def test_words_inside_a_word_do_not_pair():
    assert lifecycle_teardowns("restart") == () and lifecycle_teardowns("address") == ()


# -- HL016: one finding per bug across rules ---------------------------------------------------
def test_capture_hook_in_a_context_manager_is_hl002s_alone():
    code = """
    from contextlib import contextmanager

    @contextmanager
    def record(model, store):
        model.register_forward_hook(lambda m, a, out: store.append(out))
        yield store
    """
    assert _codes(code, NEIGHBOURS) == [("HL002", 5)]


def test_global_hook_in_enter_is_hl009s_alone():
    code = """
    from torch.nn.modules.module import register_module_forward_hook

    class Trace:
        def __enter__(self):
            register_module_forward_hook(_print_shape)
            return self

        def __exit__(self, *exc):
            self.done = True
    """
    assert _codes(code, NEIGHBOURS) == [("HL009", 5)]


def test_handles_enter_keeps_on_self_are_hl004s_alone():
    code = """
    class Clamp:
        def __init__(self, model):
            self.model = model
            self.handles = []

        def __enter__(self):
            for m in self.model.modules():
                self.handles.append(m.register_forward_hook(_clamp))
            return self

        def __exit__(self, *exc):
            self.model.eval()
    """
    assert _codes(code, NEIGHBOURS) == [("HL004", 8)]


def test_removal_after_yield_outside_finally_is_hl004s_alone():
    code = """
    from contextlib import contextmanager

    @contextmanager
    def clamped(model):
        handle = model.register_forward_hook(_clamp)
        yield
        handle.remove()
    """
    assert _codes(code, NEIGHBOURS) == [("HL004", 5)]


def test_discarded_handle_in_enter_is_hl016s():
    code = """
    class Clamp:
        def __init__(self, model):
            self.model = model

        def __enter__(self):
            self.model.register_forward_hook(_clamp)
            return self

        def __exit__(self, *exc):
            self.model.eval()
    """
    found = _lint(code, NEIGHBOURS)
    assert [(v.code, v.start.line) for v in found] == [("HL016", 6)]
    assert "`__exit__` does not remove it and its handle is discarded" in found[0].message


def test_an_installer_reached_through_apply_is_named_as_a_related_location():
    rule = HL016
    code = textwrap.dedent(rule.INVALID[0].code).lstrip("\n")
    (violation,) = lint_text(code, "m.py", [rule], RuleContext())
    assert violation.start.line == 9
    assert [r.line for r in violation.related] == [14]  # ``model.apply(_arm)`` in the context


def test_an_installer_called_through_a_helper_two_calls_deep():
    code = """
    from contextlib import contextmanager

    def _hook_one(m):
        m.register_forward_pre_hook(_inject)

    def _hook_all(model):
        for m in model.modules():
            _hook_one(m)

    @contextmanager
    def injecting(model):
        _hook_all(model)
        yield
    """
    assert _codes(code, [HL016]) == [("HL016", 4)]
    assert _codes(code, [HL016]) == sorted(
        (v.code, v.start.line)
        for v in lint_text(
            textwrap.dedent(code).lstrip("\n"), "m.py", [HL016], RuleContext(), skip_irrelevant=False
        )
    )


def test_a_teardown_that_clears_hook_dicts_through_a_method_clears_the_finding():
    code = """
    class Callback:
        def on_fit_start(self, trainer, module):
            for layer in module.layers:
                layer.register_forward_hook(_clamp)

        def on_fit_end(self, trainer, module):
            self._strip(module)

        def _strip(self, module):
            for layer in module.layers:
                layer._forward_hooks.clear()
    """
    assert _codes(code, [HL016]) == []


def test_a_hook_registered_after_the_yield_is_not_the_setups():
    code = """
    from contextlib import contextmanager

    @contextmanager
    def later(model):
        yield
        model.register_forward_hook(_clamp)
    """
    assert _codes(code, [HL016]) == []


def test_hl016_follows_a_removal_through_getattr_of_the_attribute_name():
    code = """
    class Capture:
        def _start_capture(self, model):
            self._stop_capture()
            self._capture_handle = model.register_forward_pre_hook(_note, with_kwargs=True)

        def _stop_capture(self):
            handle = getattr(self, "_capture_handle", None)
            if handle is not None:
                handle.remove()
    """
    assert _codes(code, [HL016]) == []


def test_hl016_follows_a_removal_through_the_same_attribute_of_another_object():
    code = """
    class Tracker:
        def __enter__(self):
            self._instrument()
            return self

        def _instrument(self):
            for module in self.root.modules():
                state = module.get_state()
                state.pre_handle = module.register_forward_pre_hook(_pre)

        def __exit__(self, *exc):
            for module in self.root.modules():
                module.get_state().pre_handle.remove()
    """
    assert _codes(code, [HL016]) == []
    lost = code.replace("state.pre_handle = module", "pre_handle = module")
    assert _codes(lost, [HL016]) == [("HL016", 9)]


# -- HL016: a constructor's hooks, owned by an object that has a teardown ---------------------
def test_a_counter_built_with_hooks_and_a_context_is_reported_beside_hl001():
    # The push/pop without ``always_call`` is HL001's; the hooks never taken off are HL016's.
    code = """
    class Depth:
        def __init__(self, model):
            self.stack = []
            for name, mod in model.named_children():
                mod.register_forward_pre_hook(self._push(name))
                mod.register_forward_hook(self._pop(name))

        def _push(self, name):
            def hook(mod, args):
                self.stack.append(name)
            return hook

        def _pop(self, name):
            def hook(mod, args, out):
                self.stack.pop()
            return hook

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.stack.clear()
    """
    assert _codes(code, [HL016, find_rule("HL001")]) == [("HL001", 6), ("HL016", 5), ("HL016", 6)]


def test_what_the_constructor_was_not_given_is_not_its_callers():
    # A module-level model and one the object builds: neither came from the caller.
    code = """
    from torch import nn

    BACKBONE = nn.Linear(4, 4)

    class Probe:
        def __init__(self, width):
            self.local = nn.Linear(width, width)
            self.local.register_forward_hook(self._note)
            BACKBONE.register_forward_hook(self._note)

        def _note(self, module, args, output):
            self.last = output.shape

        def close(self):
            self.local = None
    """
    assert _codes(code, [HL016]) == []
    given = code.replace("def __init__(self, width):", "def __init__(self, width, BACKBONE):")
    assert _codes(given, [HL016]) == [("HL016", 9)]


def test_a_module_kept_on_self_from_a_parameter_is_given():
    code = """
    class Clip:
        def __init__(self, model):
            self.model = model
            self.model.head.register_forward_hook(self._clip)

        def _clip(self, module, args, output):
            return output.clamp(-1, 1)

        def close(self):
            self.model = None
    """
    found = _lint(code, [HL016])
    assert [(v.code, v.start.line) for v in found] == [("HL016", 4)]
    assert "hook outlives `Clip`: `close` does not remove it" in found[0].message


def test_a_constructor_whose_only_teardown_is_del_is_left_to_hl019():
    # The hook holds the object, so `__del__` never runs while the model lives: HL019
    # reports it (on by default), and HL016 does not report the same registration again.
    code = """
    class Clip:
        def __init__(self, model):
            self.model = model
            self.model.head.register_forward_hook(self._clip)

        def _clip(self, module, args, output):
            return output.clamp(-1, 1)

        def __del__(self):
            self.model = None
    """
    found = _lint(code, [HL016, HL019])
    assert [(v.code, v.start.line) for v in found] == [("HL019", 4)]


def test_any_teardown_that_unhooks_in_bulk_clears_the_constructors_hooks():
    code = """
    class Clip:
        def __init__(self, model):
            self.model = model
            for m in model.modules():
                m.register_forward_hook(self._clip)

        def _clip(self, module, args, output):
            return output.clamp(-1, 1)

        def close(self):
            self.model = None

        def __exit__(self, *exc):
            for m in self.model.modules():
                m._forward_hooks.clear()
    """
    assert _codes(code, [HL016]) == []
    assert _codes(code.replace("m._forward_hooks.clear()", "m.eval()"), [HL016]) == [("HL016", 5)]


def test_an_installer_parameter_is_given_when_the_constructor_passes_a_given_module():
    code = """
    from torch import nn

    class Gate:
        def __init__(self, model):
            self._arm(layer=nn.ReLU())
            self._arm(model.encoder)

        def _arm(self, layer):
            layer.register_forward_pre_hook(self._gate)

        def _gate(self, module, args):
            return (args[0] * self.mask,)

        def release(self):
            self.mask = None
    """
    found = _lint(code, [HL016])
    assert [(v.code, v.start.line) for v in found] == [("HL016", 9)]
    assert [r.line for r in found[0].related] == [6]  # the call that passed the given module
    assert _codes(code.replace("self._arm(model.encoder)", "pass"), [HL016]) == []
