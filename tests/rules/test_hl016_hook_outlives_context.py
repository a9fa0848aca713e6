"""HL016 hook-outlives-context, HL017 hook-flags-dropped-on-reregister, HL018
hook-signature-mismatch: behaviour beyond the rules' own examples — one finding per
bug across rules, the fast path, fixes that parse, messages on one short line, and
the torch facts the rules rest on."""

from __future__ import annotations

import textwrap

import pytest

from hooklint.analysis.vocabulary import lifecycle_partners, lifecycle_teardowns
from hooklint.engine import fix_text, lint_text, parses
from hooklint.rules import find_rule
from hooklint.rules.base import RuleContext

HL016, HL017, HL018 = find_rule("HL016"), find_rule("HL017"), find_rule("HL018")
NEIGHBOURS = [find_rule(c) for c in ("HL002", "HL004", "HL009", "HL012", "HL016")]


def _lint(code: str, rules, **options):
    return lint_text(textwrap.dedent(code).lstrip("\n"), "m.py", rules, RuleContext(**options))


def _codes(code: str, rules, **options) -> list[tuple[str, int]]:
    return sorted((v.code, v.start.line) for v in _lint(code, rules, **options))


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
        (v.code, v.start.line) for v in lint_text(textwrap.dedent(code).lstrip("\n"), "m.py", [HL016], RuleContext(), skip_irrelevant=False)
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


# -- HL017 ------------------------------------------------------------------------------------
def test_hl017_fix_picks_a_fresh_key_name_and_parses():
    code = textwrap.dedent(
        """
        def swap(old, new, hook_id):
            for hook in old._forward_hooks.values():
                new.register_forward_hook(hook)
        """
    ).lstrip("\n")
    outcome = fix_text(code, "m.py", [HL017], RuleContext(), unsafe=True)
    assert "for hook_id_, hook in old._forward_hooks.items():" in outcome.text
    assert "always_call=hook_id_ in old._forward_hooks_always_called" in outcome.text
    assert parses(outcome.text) and outcome.violations == []


def test_hl017_is_not_about_other_registrations_of_the_same_hook():
    code = """
    def rewire(old, new):
        for hook in old._forward_hooks.values():
            new.register_forward_pre_hook(hook)
    """
    assert _codes(code, [HL017]) == []


def test_hl017_pre_hook_fix_needs_only_torch_2_0():
    code = """
    def swap(old, new):
        for k, h in old._forward_pre_hooks.items():
            new.register_forward_pre_hook(h)
    """
    (violation,) = _lint(code, [HL017], target_torch=(2, 0))
    assert violation.fix is not None and violation.fix_withheld is None


# -- HL018 ------------------------------------------------------------------------------------
def test_hl018_leaves_hl012s_shape_alone():
    code = """
    from torch.nn.modules.module import register_module_forward_hook

    def _leave(module, args, kwargs, output):
        ACTIVE.discard(id(module))

    register_module_forward_hook(_leave, with_kwargs=True, always_call=True)
    """
    assert _codes(code, [find_rule("HL012"), HL018]) == [("HL012", 6)]


def test_hl018_global_forward_fix_withheld_below_2_6():
    code = """
    import torch

    def trace(module, args, kwargs, output):
        LOG.append(kwargs)

    torch.nn.modules.module.register_module_forward_hook(trace)
    """
    (old,) = _lint(code, [HL018], target_torch=(2, 4))
    assert old.fix_withheld is not None and "2.6" in old.fix_withheld
    (new,) = _lint(code, [HL018], target_torch=(2, 6))
    assert new.fix is not None and new.fix_withheld is None


@pytest.mark.parametrize(
    ("hook", "partial", "flagged"),
    [
        ("def h(tag, module, args, kwargs, output): pass", 'functools.partial(h, "x")', False),
        ("def h(tag, module, args, output): pass", 'functools.partial(h, "x")', True),
        ("def h(module, args, kwargs, output, *, tag): pass", 'functools.partial(h, tag="t")', False),
        ("def h(module, args, kwargs, output, tag): pass", 'functools.partial(h, tag="t")', False),
        ("def h(module, args, output, tag): pass", 'functools.partial(h, tag="t")', True),
    ],
)
def test_hl018_partial_binds_leading_arguments_and_keywords(hook, partial, flagged):
    code = f"import functools\n\n{hook}\n\nlayer.register_forward_hook({partial}, with_kwargs=True)\n"
    assert bool(lint_text(code, "m.py", [HL018], RuleContext())) == flagged


def test_hl018_a_staticmethod_hook_keeps_its_first_parameter():
    code = """
    class Obs:
        @staticmethod
        def hook(module, args, output):
            return None

        def arm(self, layer):
            layer.register_forward_hook(self.hook)
            layer.register_forward_pre_hook(self.hook)
    """
    assert _codes(code, [HL018]) == [("HL018", 8)]


# -- every message fits one line of 120 characters ---------------------------------------------
LONG = "a_rather_long_function_name_for_a_hook_that_keeps_going"


@pytest.mark.parametrize(
    ("rule", "code"),
    [
        (HL018, f"def {LONG}(module, args, output): pass\nm.register_forward_hook({LONG}, with_kwargs=True)\n"),
        (HL018, f"def {LONG}(module, args, kwargs, output=None, extra=None): pass\nm.register_forward_hook({LONG})\n"),
        (HL017, f"def f(a):\n    for h in a.{LONG}.{LONG}._forward_hooks.values():\n        b.register_forward_hook(h)\n"),
        (HL016, f"class C:\n    def on_{LONG}_start(self, m):\n        m.register_forward_hook(f)\n    def on_{LONG}_end(self, m):\n        pass\n"),
        (HL016, f"class C:\n    def __enter__(self):\n        self.{LONG}.append(m.register_forward_hook(f))\n    def __exit__(self, *e):\n        pass\n"),
    ],
)
def test_messages_are_one_line_of_at_most_120_characters(rule, code):
    found = lint_text(code, "m.py", [rule], RuleContext())
    assert found
    for violation in found:
        assert "\n" not in violation.message and len(violation.message) <= 120, violation.message


# -- the torch facts the rules rest on (run where torch is installed, as CI does) -------------
def test_torch_keeps_hook_flags_beside_the_hook_dicts_and_a_copy_loses_them():
    torch = pytest.importorskip("torch")
    layer = torch.nn.Linear(2, 2)
    calls = []
    handle = layer.register_forward_hook(lambda m, a, k, out: calls.append(k), with_kwargs=True, always_call=True)
    assert handle.id in layer._forward_hooks_with_kwargs and handle.id in layer._forward_hooks_always_called
    pre = layer.register_forward_pre_hook(lambda m, a, k: None, with_kwargs=True)
    assert pre.id in layer._forward_pre_hooks_with_kwargs
    copy = torch.nn.Linear(2, 2)
    for hook in layer._forward_hooks.values():  # what HL017 flags
        copy.register_forward_hook(hook)
    with pytest.raises(TypeError):
        copy(torch.randn(1, 2))
    fixed = torch.nn.Linear(2, 2)
    for hook_id, hook in layer._forward_hooks.items():  # what its fix writes
        fixed.register_forward_hook(
            hook,
            with_kwargs=hook_id in layer._forward_hooks_with_kwargs,
            always_call=hook_id in layer._forward_hooks_always_called,
        )
    fixed(torch.randn(1, 2))
    assert calls == [{}]


def test_torch_calls_forward_hooks_with_the_arity_hl018_expects():
    torch = pytest.importorskip("torch")
    from torch.nn.modules.module import register_module_forward_pre_hook

    layer = torch.nn.Linear(2, 2)
    x = torch.randn(1, 2)
    three = layer.register_forward_hook(lambda m, a, out: None, with_kwargs=True)
    with pytest.raises(TypeError):
        layer(x)
    three.remove()
    received = []
    silent = layer.register_forward_hook(lambda m, a, out, extra=None: received.append(out), with_kwargs=True)
    layer(x)
    assert received == [{}]  # ``out`` got the kwargs dict
    silent.remove()
    handle = register_module_forward_pre_hook(lambda m, a, k: None)
    try:
        with pytest.raises(TypeError):
            layer(x)  # a global pre-hook always gets (module, args)
    finally:
        handle.remove()


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
