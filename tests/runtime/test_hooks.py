"""hooklint.runtime.hooks: token-paired hooks, captures, removing()."""

from __future__ import annotations

import dataclasses
import warnings

import pytest
import torch
from hooklint.runtime import hooks
from hooklint.runtime.hooks import (
    capture_inputs,
    capture_outputs,
    paired_forward_hooks,
    removing,
)
from torch import nn
from torch.utils.checkpoint import checkpoint


class Gate:
    """A counter that paired hooks acquire and release; ``log`` records (event, module name)."""

    def __init__(self) -> None:
        self.held = 0
        self.log: list[tuple[str, str]] = []

    def enter(self, module):
        self.held += 1
        self.log.append(("enter", module.name))
        return module.name

    def exit(self, module, state):
        assert state == module.name, "exit must receive what enter returned for the same call"
        self.held -= 1
        self.log.append(("exit", module.name))

    def exit_clamped(self, module, output=None):
        """The bitsandbytes-style fix: decrement, but never below zero."""
        self.held = max(self.held - 1, 0)


class Named(nn.Module):
    def __init__(self, name: str, inner: nn.Module | None = None) -> None:
        super().__init__()
        self.name = name
        self.inner = inner
        self.held_after_inner_failed: int | None = None
        self.gate: Gate | None = None

    def forward(self, x):
        if self.inner is not None:
            try:
                self.inner(x)
            except RuntimeError:
                self.held_after_inner_failed = self.gate.held
        return x * 2


def raise_error(module, args):
    raise RuntimeError("earlier pre-hook failed")


def test_exit_runs_when_forward_raises():
    class Failing(Named):
        def forward(self, x):
            raise ValueError("boom")

    gate, module = Gate(), Failing("m")
    paired_forward_hooks(module, gate.enter, gate.exit)
    with pytest.raises(ValueError):
        module(torch.ones(1))
    assert gate.held == 0
    assert gate.log == [("enter", "m"), ("exit", "m")]


def test_exit_skipped_when_an_earlier_pre_hook_raises():
    gate, module = Gate(), Named("m")
    paired_forward_hooks(module, gate.enter, gate.exit)
    module.register_forward_pre_hook(raise_error, prepend=True)
    with pytest.raises(RuntimeError):
        module(torch.ones(1))
    assert gate.held == 0
    assert gate.log == []


def _outer_holding_gate_while_inner_fails(install_pair) -> tuple[Gate, Named]:
    gate = Gate()
    inner = Named("inner")
    outer = Named("outer", inner)
    outer.gate = gate
    for module in (outer, inner):
        install_pair(module, gate)
    inner.register_forward_pre_hook(raise_error, prepend=True)
    outer(torch.ones(1))
    return gate, outer


def test_token_keeps_outer_hold_when_inner_pre_hook_fails():
    gate, outer = _outer_holding_gate_while_inner_fails(
        lambda module, gate: paired_forward_hooks(module, gate.enter, gate.exit)
    )
    assert outer.held_after_inner_failed == 1  # the outer module still holds the gate
    assert gate.held == 0


def test_clamp_releases_outer_hold_when_inner_pre_hook_fails():
    """The clamp fix is wrong in the same scenario: the inner post-hook releases the outer's hold."""

    def clamp_pair(module, gate):
        module.register_forward_pre_hook(lambda m, args: gate.enter(m))
        module.register_forward_hook(lambda m, args, out: gate.exit_clamped(m), always_call=True)

    _, outer = _outer_holding_gate_while_inner_fails(clamp_pair)
    assert outer.held_after_inner_failed == 0


class Recursive(nn.Module):
    """Calls itself once; the nested call's failure is caught by the outer call."""

    def __init__(self, gate: Gate) -> None:
        super().__init__()
        self.name = "recursive"
        self.gate = gate
        self.held_after_nested_failed: int | None = None

    def forward(self, x, depth: int = 0):
        if depth == 0:
            try:
                self(x, depth=1)
            except RuntimeError:
                self.held_after_nested_failed = self.gate.held
        return x


def _fail_nested_call(module, args, kwargs):
    if kwargs.get("depth") == 1:
        raise RuntimeError("pre-hook failed for the nested call")


def test_reentrant_call_whose_pre_hook_fails_keeps_outer_hold():
    gate = Gate()
    module = Recursive(gate)
    paired_forward_hooks(module, gate.enter, gate.exit)
    module.register_forward_pre_hook(_fail_nested_call, prepend=True, with_kwargs=True)
    module(torch.ones(1))
    assert module.held_after_nested_failed == 1
    assert gate.held == 0


def test_reentrant_failure_needs_the_per_call_token(monkeypatch):
    """Without the per-call identity (a plain per-module depth stack) the nested call releases the outer hold."""
    monkeypatch.setattr(hooks, "_current_module_call", lambda: None)
    gate = Gate()
    module = Recursive(gate)
    paired_forward_hooks(module, gate.enter, gate.exit)
    module.register_forward_pre_hook(_fail_nested_call, prepend=True, with_kwargs=True)
    module(torch.ones(1))
    assert module.held_after_nested_failed == 0


def test_reentrant_calls_balance():
    gate = Gate()
    module = Recursive(gate)
    paired_forward_hooks(module, gate.enter, gate.exit)
    module(torch.ones(1))
    assert gate.log == [("enter", "recursive")] * 2 + [("exit", "recursive")] * 2
    assert gate.held == 0


class LastSaver(Named):
    """Its forward performs the checkpointed region's last tensor save (``x * w`` saves both)."""

    def __init__(self) -> None:
        super().__init__("last_saver")
        self.w = nn.Parameter(torch.ones(4))

    def forward(self, x):
        return (x.sin() * self.w).sum()


def test_checkpoint_early_stop_recompute_balances():
    gate, module = Gate(), LastSaver()
    plain_post_calls = []
    paired_forward_hooks(module, gate.enter, gate.exit)
    module.register_forward_hook(lambda m, a, o: plain_post_calls.append(o))
    x = torch.randn(4, requires_grad=True)
    for _ in range(3):
        checkpoint(module, x, use_reentrant=False).backward()
        assert gate.held == 0
    # enter ran in forward and in recompute; the recompute was aborted (a plain post-hook missed it)
    assert gate.log.count(("enter", "last_saver")) == 6
    assert gate.log.count(("exit", "last_saver")) == 6
    assert len(plain_post_calls) == 3


def test_handle_removes_both_hooks_and_is_a_context_manager():
    gate, module = Gate(), Named("m")
    with paired_forward_hooks(module, gate.enter, gate.exit):
        module(torch.ones(1))
    module(torch.ones(1))
    assert gate.log == [("enter", "m"), ("exit", "m")]
    assert not module._forward_hooks and not module._forward_pre_hooks


def test_removing_removes_every_handle_on_exception():
    module = nn.Linear(2, 2)
    with (
        pytest.raises(KeyError),
        removing(
            module.register_forward_hook(lambda *a: None),
            module.register_forward_pre_hook(lambda *a: None),
        ),
    ):
        raise KeyError
    assert not module._forward_hooks and not module._forward_pre_hooks


def test_capture_inputs_records_detached_args_and_kwargs():
    class TakesKwargs(nn.Module):
        def forward(self, x, *, scale):
            return x * scale

    module = TakesKwargs()
    x = torch.randn(3, requires_grad=True)
    with capture_inputs(module) as captured:
        module(x * 1, scale=2.0)
    (call,) = captured[module]
    assert torch.equal(call.args[0], x) and not call.args[0].requires_grad
    assert call.kwargs == {"scale": 2.0}
    assert not module._forward_pre_hooks


def test_capture_outputs_keeps_graph_when_detach_is_false_and_offloads():
    module = nn.Linear(2, 2)
    with capture_outputs(module, detach=False, to_cpu=True) as captured:
        module(torch.randn(1, 2))
    assert captured.first(module).grad_fn is not None
    assert captured.first(module).device.type == "cpu"


def test_capture_removes_hooks_when_the_forward_raises():
    module = nn.Linear(2, 2)
    with pytest.raises(RuntimeError), capture_outputs(module):
        module(torch.randn(1, 3))  # shape mismatch
    assert not module._forward_hooks


def test_capture_stops_the_forward_after_the_last_wanted_capture():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2))
    later_calls = []
    model[2].register_forward_pre_hook(lambda m, a: later_calls.append(a))
    with capture_outputs([model[0], model[1]], max_calls=1, stop_early=True) as captured:
        model(torch.randn(1, 2))
        pytest.fail("the rest of the with block is skipped after an early stop")
    assert later_calls == []
    assert len(captured[model[0]]) == len(captured[model[1]]) == 1
    assert not model[0]._forward_hooks and not model[1]._forward_hooks


def test_capture_respects_max_calls_and_needs_it_for_early_stop():
    module = nn.Linear(2, 2)
    with capture_inputs(module, max_calls=2) as captured:
        for _ in range(5):
            module(torch.randn(1, 2))
    assert len(captured[module]) == 2
    with (
        pytest.raises(ValueError, match="max_calls"),
        capture_inputs(module, stop_early=True),
    ):
        pass


def test_capture_ignores_checkpoint_recomputation():
    module = LastSaver()
    x = torch.randn(4, requires_grad=True)
    with capture_outputs(module) as captured:
        checkpoint(module, x, use_reentrant=False).backward()
    assert len(captured[module]) == 1


class Stack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
        self.heads = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.Linear(2, 1)})

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return {name: head(x) for name, head in self.heads.items()}


def test_containers_and_sequences_expand_to_their_members():
    model = Stack()
    with capture_outputs([model.layers, {"heads": model.heads}], max_calls=1) as captured:
        model(torch.randn(1, 2))
    assert set(captured.by_module) == {*model.layers, *model.heads.values()}
    assert all(len(records) == 1 for records in captured.by_module.values())
    with pytest.raises(LookupError, match="ModuleList is not captured itself"):
        captured[model.layers]
    with pytest.raises(TypeError, match="not str"):
        capture_inputs(["layers"]).__enter__()


def test_stop_signal_is_not_swallowed_by_except_exception():
    model = Stack()
    reached_the_end = []
    with capture_inputs(model.layers[0], max_calls=1, stop_early=True) as captured:
        try:
            model(torch.randn(1, 2))
        except Exception:  # a user's broad handler must not end the capture
            reached_the_end.append("swallowed")
        reached_the_end.append("after")
    assert reached_the_end == [] and len(captured[model.layers[0]]) == 1
    assert issubclass(hooks._CaptureComplete, BaseException)
    assert not issubclass(hooks._CaptureComplete, Exception)


@dataclasses.dataclass(frozen=True)
class Output:
    hidden: torch.Tensor
    extras: list


class Opaque:
    def __init__(self, tensor) -> None:
        self.tensor = tensor


class ReturnsObjects(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 2)

    def forward(self, x):
        y = self.linear(x)
        return Output(y, [y * 2]), Opaque(y)


def test_detach_reaches_into_dataclasses_and_names_what_it_could_not_detach():
    model = ReturnsObjects()
    with pytest.warns(hooks.CaptureWarning, match="could not detach .*Opaque"):
        with capture_outputs(model) as captured:
            model(torch.randn(1, 2, requires_grad=True))
    output, opaque = captured.first(model)
    assert not output.hidden.requires_grad and output.hidden.grad_fn is None
    assert not output.extras[0].requires_grad
    assert opaque.tensor.requires_grad  # left as it was, and said so
    assert captured.undetached == {"Opaque"}


@pytest.mark.slow
def test_capture_on_a_compiled_model_that_ran_warns_or_raises():
    torch._dynamo.reset()
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    compiled = torch.compile(model, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("error", hooks.CaptureWarning)
        with capture_outputs(model[0]):  # nothing compiled has run yet: no warning
            pass
    compiled(torch.randn(1, 2))  # traced without hooks
    with pytest.warns(hooks.CaptureWarning, match="HLR005.*_orig_mod"):
        with capture_outputs(model[0]) as after:
            compiled(torch.randn(1, 2))
    assert after[model[0]] == []  # what the warning says: nothing recorded
    with pytest.raises(RuntimeError, match="HLR005"):
        capture_outputs(model[0], on_compiled="raise").__enter__()
    torch._dynamo.reset()


def test_registration_fails_loudly_when_the_call_token_cannot_be_found(monkeypatch):
    monkeypatch.setattr(hooks, "_tokens_checked", False)
    monkeypatch.setattr(hooks, "_CALL_IMPL_CODE", noop_code.__code__)
    with pytest.raises(RuntimeError, match="per-call token"):
        paired_forward_hooks(nn.Linear(2, 2), lambda m: None, lambda m, s: None)
    monkeypatch.undo()
    hooks._check_call_tokens()  # the real torch passes the probe
    assert hooks._tokens_checked


def noop_code():
    return None
