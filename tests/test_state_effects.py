"""The state-change model behind HL001/HL005 (hooklint.analysis.effects, hook_roles):
keys, method-call pairs, effects followed into helpers, hook callables."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

import hooklint.engine as engine
from hooklint.analysis import effects
from hooklint.analysis.collector import collect
from hooklint.analysis.effects import (
    MAX_DEPTH,
    acquired,
    keys_match,
    method_pair_side,
    pair_matches,
    split_key,
    undone,
)
from hooklint.analysis.hook_roles import effects_of, hook_callable
from hooklint.rules import all_rules
from hooklint.rules.base import RuleContext


def _facts(source: str):
    return collect(cst.parse_module(textwrap.dedent(source)))


def _effects_by_kind(source: str) -> dict[str, list[tuple[str, str, str | None]]]:
    """``{"forward_pre": [(key, op, pair)...], "forward": [...]}`` for the file's hooks."""
    facts = _facts(source)
    found: dict[str, list] = {}
    for registration in facts.registrations:
        hook = hook_callable(facts, registration)
        assert hook is not None, facts.code(registration.call)
        found.setdefault(registration.api.kind, []).extend(
            (e.key, e.op, e.pair) for e in effects_of(facts, hook)
        )
    return found


def _hl001(source: str, skip_irrelevant: bool = True):
    rule = next(r for r in all_rules() if r.code == "HL001")
    return engine.lint_text(
        textwrap.dedent(source), "t.py", [rule], RuleContext(), skip_irrelevant=skip_irrelevant
    )


# -- keys ------------------------------------------------------------------------------
def test_literal_dict_keys_are_kept_apart_and_dynamic_ones_match_any():
    assert split_key("state['a']") == ("state", "'a'")
    assert split_key("self.d[]") == ("self.d", "")
    assert split_key("self.d") == ("self.d", None)
    assert not keys_match("state['a']", "state['b']")
    assert keys_match("state['a']", "state[]")
    assert keys_match("stack", "stack[-1]")
    assert not keys_match("self.a", "self.b")


@pytest.mark.parametrize(
    ("method", "side"),
    [
        ("start", ("acquire", "start|")),
        ("stop", ("release", "stop|")),
        ("__enter__", ("acquire", "__enter__|")),
        ("fetch_sub_module", ("acquire", "fetch|sub_module_")),
        ("release_sub_module", ("release", "release|sub_module_")),
        ("range_push", ("acquire", "push|_range")),
        ("range_pop", ("release", "pop|_range")),
        ("append", None),  # a container add, not a pair
        ("pop", None),
        ("restart", None),
        ("elapsed", None),
    ],
)
def test_method_pair_sides(method, side):
    assert method_pair_side(method) == side


def _effect(key, op, pair=None):
    return effects.StateEffect(key, op, cst.Name("x"), pair)


def test_a_pair_matches_only_its_own_other_side_on_the_same_object():
    start = _effect("self.t", "acquire", "start|")
    assert pair_matches(start, _effect("self.t", "release", "stop|"))
    assert not pair_matches(start, _effect("self.u", "release", "stop|"))
    assert not pair_matches(start, _effect("self.t", "release", "release|"))
    assert not pair_matches(_effect("c", "acquire", "fetch|a_"), _effect("c", "release", "release|b_"))
    assert not pair_matches(start, _effect("self.t", "remove"))  # a pair never matches a container pop


def test_an_overwrite_is_not_an_acquire_and_a_reset_first_cancels_later_acquires():
    first = [
        _effect("self.started", "set"),
        _effect("self.flag", "set_false"),
        _effect("self.flag", "set_true"),
        _effect("self.n", "increment"),
    ]
    assert [(e.key, e.op) for e in acquired(first)] == [("self.n", "increment")]
    # A flag raised without a reset first is an acquire.
    assert [e.op for e in acquired([_effect("self.flag", "set_true")])] == ["set_true"]


# -- following calls ----------------------------------------------------------------------
def test_effects_are_followed_into_helpers_with_the_hooked_module_bound():
    found = _effects_by_kind(
        """
        def _mark(target):
            target.busy = True

        class Tracker:
            def _enter(self, layer):
                self.depth += 1
                _mark(layer)

            def install(self, model):
                def pre(module, args):
                    self._enter(module)
                model.register_forward_pre_hook(pre)
        """
    )
    assert ("self.depth", "increment", None) in found["forward_pre"]
    assert ("<module>.busy", "set_true", None) in found["forward_pre"]


def test_helpers_are_followed_max_depth_calls_deep_and_no_further():
    chain = "\n".join(
        f"def level{i}(m):\n    COUNTS['l{i}'] += 1\n    level{i + 1}(m)\n" for i in range(1, MAX_DEPTH + 2)
    )
    found = _effects_by_kind(chain + "\nmodel.register_forward_pre_hook(lambda m, a: level1(m))\n")
    keys = {key for key, _, _ in found["forward_pre"]}
    assert keys == {f"COUNTS['l{i}']" for i in range(1, MAX_DEPTH + 1)}


def test_recursive_helpers_end():
    found = _effects_by_kind(
        """
        def ping(m):
            STACK.append(m)
            pong(m)

        def pong(m):
            ping(m)

        model.register_forward_pre_hook(lambda m, a: ping(m))
        """
    )
    assert found["forward_pre"] == [("STACK", "add", None)]


def test_a_closure_from_a_factory_called_at_once_is_followed_and_its_cells_are_not_shared():
    found = _effects_by_kind(
        """
        class Engine:
            def _timers_for(self, phase):
                def run():
                    seen = phase
                    self.timer.start()
                return run

            def attach(self, model):
                def pre(module, args):
                    self._timers_for("fwd")()
                model.register_forward_pre_hook(pre)
        """
    )
    assert found["forward_pre"] == [("self.timer", "acquire", "start|")]


def test_locals_that_only_name_shared_state_are_followed():
    found = _effects_by_kind(
        """
        class Offload:
            def attach(self, model):
                def pre(module, args):
                    coordinator = self.coordinator()
                    coordinator.fetch_params(module)
                    for sub in self.model.children():
                        sub.visible = True
                    record = make_range("fwd")
                    record.__enter__()
                    self.ranges[id(module)] = record

                def post(module, args, output):
                    self.ranges.pop(id(module)).__exit__(None, None, None)
                model.register_forward_pre_hook(pre)
                model.register_forward_hook(post)
        """
    )
    pre = found["forward_pre"]
    assert ("self.coordinator()", "acquire", "fetch|params_") in pre
    assert ("self.model.children()[].visible", "set_true", None) in pre
    assert ("self.ranges[]", "acquire", "__enter__|") in pre
    assert ("self.ranges[]", "release", "__exit__|") in found["forward"]


# -- hook callables ------------------------------------------------------------------------
def test_instances_of_same_file_classes_are_hooks_and_keep_their_own_state():
    facts = _facts(
        """
        class Count:
            def __call__(self, module, args):
                self.n += 1

        class Uncount:
            def __call__(self, module, args, output):
                self.n -= 1

        class Tracker:
            def enter(self, module, args):
                self.depth += 1

            def leave(self, module, args, output):
                self.depth -= 1

        def attach(model):
            model.register_forward_pre_hook(Count())
            model.register_forward_hook(Uncount())
            tracker = Tracker()
            model.register_forward_pre_hook(tracker.enter)
            model.register_forward_hook(tracker.leave)
        """
    )
    hooks = [hook_callable(facts, r) for r in facts.registrations]
    assert [h.body.name for h in hooks] == [
        "Count.__call__",
        "Uncount.__call__",
        "Tracker.enter",
        "Tracker.leave",
    ]
    effects_per_hook = [effects_of(facts, h) for h in hooks]
    # Two fresh instances are two objects: their ``self.n`` is not one counter.
    assert not undone(effects_per_hook[0], effects_per_hook[1])
    # One instance's bound methods share it.
    assert [(a.key, r.key) for a, r in undone(effects_per_hook[2], effects_per_hook[3])] == [
        ("tracker.depth", "tracker.depth")
    ]


def test_instances_held_in_attributes_and_lists_are_resolved():
    facts = _facts(
        """
        class Probe:
            def __call__(self, module, args):
                pass

        class Owner:
            def __init__(self):
                self.probe = Probe()
                self.probes = [Probe()]

            def attach(self, model):
                model.register_forward_pre_hook(self.probe)
                model.register_forward_pre_hook(self.probes[0])
        """
    )
    hooks = [hook_callable(facts, r) for r in facts.registrations]
    assert [(h.body.name, h.receiver) for h in hooks] == [
        ("Probe.__call__", "self.probe"),
        ("Probe.__call__", "self.probes[0]"),
    ]


# -- the fast paths see what the whole file shows ----------------------------------------------
DEEP_PAIR = """
import torch


class Unrelated:
    def other(self):
        return 1


class Engine:
    def _start_all(self):
        for name in self.names:
            self.timers(name).start()

    def _stop_all(self):
        for name in self.names:
            self.timers(name).stop()

    def _prologue(self):
        self._start_all()

    def _epilogue(self):
        self._stop_all()

    def _pre(self, module, args):
        self._prologue()

    def _post(self, module, args, output):
        self._epilogue()

    def attach(self):
        self.model.register_forward_pre_hook(self._pre)
        self.model.register_forward_hook(self._post)
"""


def test_helpers_of_helpers_are_kept_by_the_screen_and_the_sparse_parse():
    fast = _hl001(DEEP_PAIR)
    whole = _hl001(DEEP_PAIR, skip_irrelevant=False)
    assert [(v.start, v.message, v.fix) for v in fast] == [(v.start, v.message, v.fix) for v in whole]
    assert len(whole) == 1 and "`self.timers(name)` (`start`/`stop`)" in whole[0].message


HELD_HOOKS = """
import torch


class Enter:
    def __call__(self, module, args):
        STACK.append(module)


class Leave:
    def __call__(self, module, args, output):
        STACK.pop()


class Owner:
    def __init__(self):
        self.enter = Enter()
        self.leave = Leave()

    def unrelated(self):
        return 2

    def attach(self, model):
        model.register_forward_pre_hook(self.enter)
        model.register_forward_hook(self.leave)
"""


def test_hook_objects_held_in_attributes_set_in_init_are_seen_by_the_screen_too():
    fast = _hl001(HELD_HOOKS)
    whole = _hl001(HELD_HOOKS, skip_irrelevant=False)
    assert [(v.start, v.message, v.fix) for v in fast] == [(v.start, v.message, v.fix) for v in whole]
    assert len(whole) == 1 and "`STACK`" in whole[0].message


def test_an_object_entered_then_stored_in_a_closure_cell_is_acquired_not_overwritten():
    found = _effects_by_kind(
        """
        import torch

        def wrap(model):
            ctx = None

            def pre(module, args):
                nonlocal ctx
                scope = torch.autograd.graph.saved_tensors_hooks(pack, unpack)
                scope.__enter__()
                ctx = scope

            def post(module, args, output):
                ctx.__exit__()

            model.register_forward_pre_hook(pre)
            model.register_forward_hook(post)
        """
    )
    assert found["forward_pre"] == [("ctx", "acquire", "__enter__|")]
    assert found["forward"] == [("ctx", "release", "__exit__|")]
