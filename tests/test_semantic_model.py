"""The handle model (hooklint.analysis.handles): bindings per scope, handle flow,
removals, helpers of the same file.  Small programs written for these tests."""

from __future__ import annotations

import textwrap

import libcst as cst

from hooklint.analysis.collector import collect
from hooklint.analysis.handles import handle_model
from hooklint.engine import lint_text
from hooklint.rules import all_rules
from hooklint.rules.base import RuleContext


def _model(code: str):
    facts = collect(cst.parse_module(textwrap.dedent(code)))
    return facts, handle_model(facts)


def _flow(code: str, index: int = 0):
    facts, model = _model(code)
    return model, model.acquisition_of(facts.registrations[index]).flow


def _lint(code: str, select: str, whole: bool = False):
    rules = [r for r in all_rules() if r.code == select]
    return lint_text(textwrap.dedent(code).lstrip(), "m.py", rules, RuleContext(), skip_irrelevant=not whole)


def test_a_removal_in_another_function_is_another_handle():
    model, flow = _flow(
        """
        def install(model, fn):
            handle = model.register_forward_hook(fn)

        def probe(model, fn):
            handle = model.register_forward_hook(fn)
            handle.remove()
        """
    )
    assert flow.single and not model.removals_of(flow.stores)


def test_two_step_append_ends_in_the_list_and_a_rebinding_closes_the_name():
    model, flow = _flow(
        """
        def attach(model, fn, other):
            first, second = [], []
            handle = model.a.register_forward_hook(fn)
            first.append(handle)
            handle = model.b.register_forward_hook(fn)
            second.append(handle)
            for h in first:
                h.remove()
        """
    )
    assert {s.split("|")[1] for s in flow.stores} == {"handle", "first"}
    _, second = _flow(
        """
        def attach(model, fn, other):
            first, second = [], []
            handle = model.a.register_forward_hook(fn)
            first.append(handle)
            handle = model.b.register_forward_hook(fn)
            second.append(handle)
        """,
        1,
    )
    assert {s.split("|")[1] for s in second.stores} == {"handle", "second"}


def test_aliases_join_stores_and_while_pop_removes():
    model, flow = _flow(
        """
        class Tool:
            def attach(self, model, fn):
                self.model = model
                model.tool_handles = []
                self.handles = model.tool_handles
                model.tool_handles.append(model.register_forward_hook(fn))

            def detach(self):
                while self.handles:
                    self.handles.pop().remove()
        """
    )
    assert model.removals_of(flow.stores)


def test_dict_of_tuples_popped_and_removed():
    model, flow = _flow(
        """
        def run(model, names, go):
            taps = {}
            for name in names:
                rec = Rec()
                h = model.get_submodule(name).register_forward_hook(rec)
                taps[name] = (rec, h)
            go()
            for name in list(taps):
                rec, h = taps.pop(name)
                h.remove()
        """
    )
    assert [r.kind for r in model.removals_of(flow.stores, window=flow.window)] == ["element"]


def test_map_over_a_store_removes_it():
    model, flow = _flow(
        """
        def run(model, fn):
            hs = [m.register_forward_hook(fn) for m in model.children()]
            model()
            list(map(lambda h: h.remove(), hs))
        """
    )
    assert [r.kind for r in model.removals_of(flow.stores)] == ["loop"]


def test_a_same_file_helper_removes_its_parameter_and_a_method_its_attribute():
    facts, model = _model(
        """
        def drop(items):
            for item in items:
                item.remove()

        class Tool:
            def run(self, model, fn):
                local = [model.register_forward_hook(fn)]
                self.kept = [model.register_forward_pre_hook(fn)]
                drop(local)
                self.cleanup()

            def cleanup(self):
                for h in self.kept:
                    h.remove()
        """
    )
    for registration in facts.registrations:
        flow = model.acquisition_of(registration).flow
        assert "helper" in [r.kind for r in model.removals_of(flow.stores, window=flow.window)]


def test_helpers_that_return_handles_are_acquisitions_three_deep():
    facts, model = _model(
        """
        class Tool:
            def _one(self, block):
                hs = []
                hs.append(block.register_forward_hook(self.fn))
                return hs

            def _two(self, block):
                hs = self._one(block)
                hs.extend(other(block))
                return hs

            def run(self, block, x):
                hs = self._two(block)
                block(x)
                for h in hs:
                    h.remove()
        """
    )
    run = facts.method("Tool", "run")
    [acquisition] = model.acquisitions(id(run.node))
    assert acquisition.helper.name == "_two" and not acquisition.flow.single


def test_hl004_follows_helper_returned_handles_on_the_whole_file():
    code = """
        def attach_probes(model, sink):
            probes = []
            for module in model.children():
                probes.append(module.register_forward_hook(lambda m, i, o: sink.append(o)))
            return probes

        def shapes(model, x):
            sink = []
            probes = attach_probes(model, sink)
            model(x)
            for probe in probes:
                probe.remove()
            return sink
        """
    found = _lint(code, "HL004", whole=True)
    assert [v.start.line for v in found] == [9]


def test_hl004_hooks_side_by_side_into_one_store_are_one_finding():
    """Registrations in one block whose handles one statement removes are one bug (one
    `finally` mends them all): the same hook twice, or a pre-hook beside a post-hook."""
    code = """
        def trace(model, x):
            taps = []
            for block in model.blocks:
                taps.append(block.register_forward_hook(log_in))
                taps.append(block.register_forward_hook(log_out))
                taps.append(block.register_forward_hook(log_in))
            model(x)
            for tap in taps:
                tap.remove()
        """
    found = _lint(code, "HL004")
    assert [v.start.line for v in found] == [4]
    assert "(and 2 more registrations here)" in found[0].message


def test_hl004_hooks_in_different_blocks_are_separate_findings():
    """Different hooks registered in different loops are different bugs, even when one
    statement removes them all (each registration site needs its own look)."""
    code = """
        def trace(model, x):
            taps = []
            for block in model.blocks:
                taps.append(block.register_forward_hook(log_in))
            for head in model.heads:
                taps.append(head.register_forward_hook(log_out))
            model(x)
            for tap in taps:
                tap.remove()
        """
    found = _lint(code, "HL004")
    assert [v.start.line for v in found] == [4, 6]


def test_a_module_looked_up_is_not_one_that_dies_with_the_call():
    facts, model = _model(
        """
        import torch

        def fresh(xs, out):
            net = torch.nn.Sequential(torch.nn.Linear(2, 2))
            net.register_forward_hook(lambda m, i, o: out.append(o))

        def looked_up(model, name, out):
            layer = getattr(model, name)
            layer.register_forward_hook(lambda m, i, o: out.append(o))

        def wrapped(layer, out):
            net = torch.nn.Sequential(layer)
            net[0].register_forward_hook(lambda m, i, o: out.append(o))

        def handed_out(out):
            net = torch.nn.Linear(2, 2)
            net.register_forward_hook(lambda m, i, o: out.append(o))
            return net
        """
    )
    assert [model.dies_with_scope(r) for r in facts.registrations] == [True, False, False, False]


def test_hl009_reports_a_kept_handle_another_function_removes_its_own_of():
    code = """
        from torch.nn.modules.module import register_module_forward_hook

        def install(fn):
            handle = register_module_forward_hook(fn)

        def probe(model, x, fn):
            handle = register_module_forward_hook(fn)
            try:
                model(x)
            finally:
                handle.remove()
        """
    assert [v.start.line for v in _lint(code, "HL009")] == [4]


FUSED = """
    import torch

    class Fused(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, bias, grads):
            weight.register_hook(lambda g: grads.append(g))
            bias.register_hook(lambda g: grads.append(g))
            return x @ weight + bias

    class FusedLayer(torch.nn.Module):
        def forward(self, x, grads):
            return Fused.apply(x, self.weight, self.bias, grads)
    """


def test_tensor_hooks_on_parameters_in_a_function_forward_are_one_hl003_finding():
    # The whole file: the `Fused.apply(..., self.weight, ...)` caller is the evidence.
    found = _lint(FUSED, "HL003", whole=True)
    assert [v.start.line for v in found] == [6]
    assert "(1 more registration like it here)" in found[0].message
    assert _lint(FUSED, "HL002", whole=True) == []


def test_a_tensor_hook_on_an_activation_argument_is_not_a_parameter():
    facts, model = _model(FUSED.replace("self.weight, self.bias", "x * 2, x + 1"))
    assert not any(model.lives_on_module(r) for r in facts.registrations)


# The evidence for these sits where the screen does not look yet (the caller of a
# helper that returns handles, a same-class removal method, `__exit__`): they are
# checked on the whole file; the fast path misses them (reported to the fast-path work).
SETUP_PAIR = """
    class Pass:
        def apply(self, model, x):
            self.register_hooks(model)
            model(x)
            self.cleanup()

        def register_hooks(self, model):
            raise NotImplementedError

        def cleanup(self):
            for h in self.handles:
                h.remove()
            self.handles = []
    """

ENTER_EXIT = """
    class Calibration:
        def __init__(self, model):
            self.model = model
            self.taps = {}

        def __enter__(self):
            for name, module in self.model.named_modules():
                self.taps[name] = module.register_forward_pre_hook(self.observe)
            return self

        def __exit__(self, *exc):
            self.model.train()

        def finish(self, name):
            self.taps.pop(name).remove()
    """


def test_hl004_setup_call_and_removal_method_of_one_class():
    [found] = _lint(SETUP_PAIR, "HL004", whole=True)
    assert found.start.line == 3 and "`self.handles` is removed outside" in found.message


def test_hl004_exit_that_leaves_what_enter_kept():
    [found] = _lint(ENTER_EXIT, "HL004", whole=True)
    assert found.start.line == 8 and "`__exit__` does not remove them" in found.message
    fixed = ENTER_EXIT.replace(
        "self.model.train()", "for tap in self.taps.values():\n                tap.remove()"
    )
    assert _lint(fixed, "HL004", whole=True) == []


def test_a_removal_after_return_or_raise_is_no_removal():
    import libcst as cst

    from hooklint.analysis.reachability import dead_statements

    module = cst.parse_module(
        "def f(h, x):\n"
        "    if x:\n"
        "        return 1\n"
        "        h.remove()\n"
        "    h.remove()\n"
        "    for y in x:\n"
        "        continue\n"
        "        h.remove()\n"
        "    raise ValueError\n"
        "    h.remove()\n"
    )
    function = module.body[0]
    dead = dead_statements(function)
    dead_code = sorted(module.code_for_node(s).strip() for s in _all_statements(function) if id(s) in dead)
    # The removal after the `if` is live (the `return` is inside the `if`); the other three are dead.
    assert dead_code == ["h.remove()"] * 3
    assert id(function.body.body[1]) not in dead


def _all_statements(node):
    import libcst as cst

    found = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, n):
            if isinstance(n, cst.BaseStatement):
                found.append(n)
            return True

    node.visit(Collect())
    return found


REMOVAL_CHAIN = """
def outer(handles):
    middle(handles)

def middle(handles):
    inner(handles)

def inner(handles):
    for handle in handles:
        handle.remove()
"""


def test_what_a_helper_removes_does_not_depend_on_which_depth_asked_first():
    """A helper's removals found with the helper budget nearly spent are not the
    answer for a caller with the whole budget (an earlier memo keyed by function
    alone made a finding depend on the order of queries)."""
    from hooklint.analysis.handles import HELPER_DEPTH

    facts, fresh = _model(REMOVAL_CHAIN)
    middle = next(f for f in facts.functions if f.name == "middle")
    assert fresh.removed_by(middle)[0] == {"handles"}

    facts, model = _model(REMOVAL_CHAIN)
    middle = next(f for f in facts.functions if f.name == "middle")
    assert model.removed_by(middle, HELPER_DEPTH)[0] == set()  # the budget runs out before `inner`
    assert model.removed_by(middle)[0] == {"handles"}


def test_a_getattr_registration_names_the_method_in_a_string_without_whitespace():
    """``getattr(m, "register_forward_hook")(f)`` registers; a string holding whitespace
    names no attribute (the summaries' ``hooky`` marks read such strings as prose)."""
    code = textwrap.dedent(
        """\
        def f(m, fn, kind):
            getattr(m, "register_forward_hook")(fn)
            getattr(m, f"register_{kind}_hook")(fn)
            getattr(m, "register_forward_hook ")(fn)
            getattr(m, "use register_forward_hook")(fn)
        """
    )
    facts = collect(cst.parse_module(code))
    assert [facts.code(r.call) for r in facts.registrations] == [
        'getattr(m, "register_forward_hook")(fn)',
        'getattr(m, f"register_{kind}_hook")(fn)',
    ]


def test_the_argument_a_call_passes_for_a_parameter():
    from hooklint.analysis.names import argument_for

    def passed(call: str, name: str):
        value = argument_for(cst.parse_expression(call), ["model", "store", "hook"], name)
        return None if value is None else cst.Module([]).code_for_node(value)

    assert passed("f(m, s, fn)", "store") == "s"
    assert passed("f(m, hook=fn)", "hook") == "fn"
    assert passed("f(m)", "store") is None  # the default
    # A star argument leaves the positions in doubt, never a keyword.
    assert passed("f(*args)", "store") is None
    assert passed("f(m, *rest)", "store") is None
    assert passed("f(m, *rest)", "model") == "m"  # before the star: certain
    assert passed("f(*args, store=s)", "store") == "s"
    assert passed("f(**options, hook=fn)", "hook") == "fn"


def test_a_nonlocal_name_is_the_enclosing_functions_and_a_global_the_modules():
    facts, model = _model(
        """
        handles = []

        def outer(model, fn):
            kept = []

            def inner():
                nonlocal kept
                global handles
                kept = [model.register_forward_hook(fn)]
                handles = kept

            return inner
        """
    )
    outer, inner = (f for f in facts.functions if f.name in ("outer", "inner"))
    assert model.owner("kept", id(inner.node)) == f"def:{id(outer.node)}"
    assert model.owner("handles", id(inner.node)) == "module"


def test_a_jump_out_of_a_run_of_statements_is_return_or_a_loop_jump_of_a_loop_around_them():
    from hooklint.analysis.statements import jump_out_of

    def jump(code: str):
        return jump_out_of(cst.parse_module(textwrap.dedent(code)).body)

    assert jump("if x:\n    continue\nrun()\n") == "continue"
    assert jump("with ctx():\n    if x:\n        return 1\n") == "return"
    assert jump("try:\n    run()\nexcept E:\n    break\n") == "break"
    # a jump of a loop among the statements ends that loop's pass, not theirs
    assert jump("for y in ys:\n    if y:\n        continue\n    use(y)\n") is None
    assert jump("while True:\n    break\n") is None
    # a return in a nested def or a lambda returns from it
    assert jump("def inner():\n    return 1\nf = lambda: 2\n") is None
    assert jump("run()\nx = 1\n") is None
    # but a return inside a loop among them still leaves
    assert jump("for y in ys:\n    return y\n") == "return"
