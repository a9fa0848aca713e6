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


def _body_nodes_as_before(node):
    """The walk effects._body_names replaced, its own pruned walk of the body (nested
    functions, lambdas and classes, and leaves, not entered): the counting over those
    nodes is the function's own, so the two differ only in what they visit."""
    from hooklint.analysis.effects import _LEAF_TYPES
    from hooklint.analysis.walk import child_nodes

    stack = list(child_nodes(node.body))
    while stack:
        current = stack.pop()
        yield current
        kind = type(current)
        if kind is cst.FunctionDef or kind is cst.Lambda or kind is cst.ClassDef or kind in _LEAF_TYPES:
            continue
        stack.extend(child_nodes(current))


def _body_names_as_before(node):
    from hooklint.analysis.effects import _body_names

    return _body_names(node, nodes=list(_body_nodes_as_before(node)))


SCOPED = (
    BINDINGS
    + """
def g(x):
    global total
    total = x
    a = b = x
    (c := 1)
    y = [z for z in x if (w := z)]
    def nested():
        nonlocal y
        q = 1
    lam = lambda r: (s := r)
    class K:
        t = 1
    try:
        pass
    except ValueError as err:
        pass
    import os as o
    return a
"""
)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_body_names_are_as_before(path):
    for text in (path.read_text(encoding="utf-8"), SCOPED):
        facts = collect(parse_module(text))
        for info in facts.functions:
            expected = _body_names_as_before(info.node)
            assert effects._body_names(info.node) == expected
            assert effects._body_names(info.node, facts.body_nodes(info.node)) == expected


def test_body_nodes_are_walked_once_per_def_and_released():
    from hooklint.analysis.walk import descendants

    facts = collect(parse_module(SCOPED))
    function = facts.functions[0].node
    nodes = facts.body_nodes(function)
    assert nodes == list(descendants(function.body, into_functions=False))
    assert facts.body_nodes(function) is nodes
    facts.release()
    assert "_body_nodes" not in vars(facts)


def test_memo_builds_once_and_release_drops_it():
    facts = collect(parse_module(SCOPED))
    built = []

    def build(given):
        built.append(given)
        return {"model": len(built)}

    first = facts.memo("_test_model", build)
    assert facts.memo("_test_model", build) is first and built == [facts]
    facts.release()
    assert facts.memo("_test_model", build) == {"model": 2}


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("self.h is None", "self.h"),
        ("x.self.h and self.h", "self.h"),
        ("self.hh", "self.h"),
        ("h or h2 or (h)", "h"),
        ("handles", "h"),
        ("", "h"),
        ("a.b", ""),
        ("self.h.remove()", "self.h.remove"),
    ],
)
def test_word_count_is_the_plain_regex_count(code, name):
    import re

    from hooklint.analysis.lifetime import word_count

    assert word_count(code, name) == len(re.findall(r"(?<![\w.])" + re.escape(name) + r"(?!\w)", code))
