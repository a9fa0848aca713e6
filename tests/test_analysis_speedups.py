"""The analysis' faster formulations give what the plain ones gave: pre-/post-hook
pairs from an index (HookedObjects) rather than every pair, contexts and effects
built directly rather than through ``dataclasses.replace``, exact-type dispatch in
the binding walks (the classes it names have no subclasses)."""

from __future__ import annotations

import dataclasses
import random
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from hooklint.analysis import effects
from hooklint.analysis.captures import _TAINTING
from hooklint.analysis.collector import collect
from hooklint.analysis.hook_roles import HookedObjects, same_hooked_object
from hooklint.analysis.lifetime import _BINDING, varying_names
from hooklint.engine.parse import parse_module

RECEIVERS = ["model", "self", "self.block", "m", "layers[0]"]
APIS = [
    "{r}.register_forward_pre_hook({h})",
    "{r}.register_forward_hook({h}, always_call=True)",
    "{r}.register_forward_hook({h})",
    "register_module_forward_pre_hook({h})",
    "register_module_forward_hook({h})",
]


def _program(seed: int) -> str:
    """Registrations of hooks on assorted receivers, in functions and methods."""
    rng = random.Random(seed)
    lines = [
        "from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook",
        "",
    ]
    for index in range(rng.randint(1, 4)):
        lines.append(f"def f{index}(model, m, layers):")
        for _ in range(rng.randint(1, 5)):
            api = rng.choice(APIS)
            lines.append(
                "    " + api.format(r=rng.choice(["model", "m", "layers[0]"]), h=f"h{rng.randint(0, 3)}")
            )
    lines.append("class Probe:")
    for index in range(rng.randint(1, 3)):
        lines.append(f"    def attach{index}(self):")
        for _ in range(rng.randint(1, 4)):
            api = rng.choice(APIS)
            lines.append(
                "        " + api.format(r=rng.choice(["self", "self.block"]), h=f"self.h{rng.randint(0, 2)}")
            )
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(40))
def test_hooked_objects_pairs_as_every_pair_asked(seed):
    facts = collect(parse_module(_program(seed)))
    registrations = facts.registrations
    items = [(r, index) for index, r in enumerate(registrations) if r.api.kind == "forward_pre"]
    index = HookedObjects(items)
    for post in registrations:
        expected = [item for item in items if same_hooked_object(item[0], post)]
        assert index.same_object(post) == expected


def test_hooked_objects_pairs_a_process_wide_hook_with_every_receiver():
    facts = collect(
        parse_module(
            textwrap.dedent(
                """
                def f(model, m):
                    register_module_forward_pre_hook(a)
                    model.register_forward_pre_hook(b)
                    m.register_forward_pre_hook(c)
                    register_module_forward_hook(d)
                    model.register_forward_hook(e)
                """
            )
        )
    )
    pres = [(r, r.hook_arg.value) for r in facts.registrations if r.api.kind == "forward_pre"]
    posts = {r.hook_arg.value: r for r in facts.registrations if r.api.kind == "forward"}
    index = HookedObjects(pres)
    assert [name for _, name in index.same_object(posts["d"])] == ["a"]
    # a process-wide post-hook pairs with the process-wide pre-hook; a module's with its own
    assert [name for _, name in index.same_object(posts["e"])] == ["b"]


def test_a_context_built_directly_is_the_replaced_one():
    guard = cst.Name("x")
    statement = cst.SimpleStatementLine([cst.Pass()])
    base = effects._Ctx(False, (guard,), False, None)
    for changes in [
        {},
        {"conditional": True},
        {"guards": ()},
        {"handled": True},
        {"statement": statement},
        {"conditional": True, "guards": (guard, guard)},
    ]:
        assert effects._with(base, **changes) == dataclasses.replace(base, **changes)


BINDINGS = """
def f(xs, model):
    a = xs[0]
    b: int = a
    c: int
    for item in xs:
        d = item
    with open(a) as e:
        pass
    if (g := model(a)):
        h = [y for y in g]
    k += 1
    def inner():
        z = xs
"""


def _varying_names_as_before(facts, scope, seed):
    """The formulation varying_names replaced: isinstance over every node."""
    from hooklint.analysis.lifetime import _fresh_value, names_in
    from hooklint.analysis.scopes import target_names
    from hooklint.analysis.walk import descendants

    varying = set(seed)
    nodes = list(descendants(scope, into_functions=False))
    for _ in range(2):
        for node in nodes:
            if isinstance(node, cst.Assign):
                if _fresh_value(node.value, varying, facts.imports):
                    for target in node.targets:
                        varying |= target_names(target.target)
            elif isinstance(node, cst.AnnAssign) and node.value is not None:
                if _fresh_value(node.value, varying, facts.imports):
                    varying |= target_names(node.target)
            elif isinstance(node, cst.For) and node is not scope or isinstance(node, cst.CompFor):
                if names_in(node.iter) & varying:
                    varying |= target_names(node.target)
            elif isinstance(node, cst.WithItem) and node.asname is not None:
                if _fresh_value(node.item, varying, facts.imports):
                    varying |= target_names(node.asname.name)
            elif isinstance(node, cst.NamedExpr):
                if _fresh_value(node.value, varying, facts.imports):
                    varying |= target_names(node.target)
    return varying


EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_varying_names_are_as_before(path):
    facts = collect(parse_module(path.read_text(encoding="utf-8")))
    for info in facts.functions:
        for seed in (set(info.params), set(info.params[:1]), set()):
            assert varying_names(facts, info.node.body, seed) == _varying_names_as_before(
                facts, info.node.body, seed
            )


def test_varying_names_follow_every_binding_form():
    facts = collect(parse_module(BINDINGS))
    function = facts.functions[0].node
    for seed in ({"xs"}, {"model"}, {"a"}, set()):
        assert varying_names(facts, function.body, seed) == _varying_names_as_before(
            facts, function.body, seed
        )
    assert {"a", "b", "d", "item", "e", "g", "h", "y"} <= varying_names(facts, function.body, {"xs"})


@pytest.mark.parametrize("classes", [_BINDING, _TAINTING], ids=["binding", "tainting"])
def test_the_exact_types_dispatched_on_have_no_subclasses(classes):
    assert all(not c.__subclasses__() for c in classes)
