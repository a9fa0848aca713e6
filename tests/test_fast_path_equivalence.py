"""The fast path (hooklint.screen, then hooklint.sparse) gives exactly the findings and
fixes of linting the whole file.

Every rule's VALID/INVALID examples, every file in ``examples/`` and a few hundred
generated programs are linted with the fast path on (``skip_irrelevant=True``, the
default) and off, and the violations (code, position, message, fix edits) must be
equal; so must the text ``--fix --unsafe-fixes`` writes.  Three rule sets: every rule
that allows screening (screen, then the sparse text), the default rules (fewer
tokens: a smaller screen), and every rule (HL010 cannot be screened, so the sparse
text alone).

The generator composes hook-related snippets: registrations whose handles are
discarded, kept, removed in ``finally``, in another method or never; ``with``
blocks; capture hooks (functions, methods, factories, callable objects, lambdas);
stores read in other methods; global hooks; tensor hooks in ``forward``; direct
``.forward`` calls; strings and comments holding hook tokens, and ``#`` lines inside
triple-quoted strings; classes, nested defs and unrelated code; removal helpers with
neutral names called from registering functions and teardowns; classes whose setup
method registers through another method (or a bound-method alias) and is called, with
the teardown, from a method without any hook token (sometimes nested in another
class).  ``HOOKLINT_GENERATED_PROGRAMS=N`` sets how many the slow test makes.
"""

from __future__ import annotations

import ast
import os
import random
import textwrap
from pathlib import Path

import pytest

from hooklint.engine import fix_text, lint_text
from hooklint.rules import all_rules
from hooklint.rules.base import RuleContext

EVERY = [r for r in all_rules() if r.code != "HL000"]
SCREENABLE = [r for r in EVERY if r.screenable]
#: The rules a plain ``hooklint check`` runs: its screen looks for fewer tokens.
DEFAULT = [r for r in EVERY if r.default_on and not r.preview]
RULE_SETS = {"screened": SCREENABLE, "default": DEFAULT, "sparse": EVERY}
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _violations(text: str, rules, context: RuleContext, fast: bool):
    return [
        (v.code, v.start, v.end, v.message, v.fix, v.fix_withheld, v.source_line)
        for v in lint_text(text, "m.py", rules, context, skip_irrelevant=fast)
    ]


def _fixed(text: str, rules, context: RuleContext, fast: bool) -> str:
    if fast:
        return fix_text(text, "m.py", rules, context, unsafe=True).text
    import hooklint.engine.fix as engine_fix  # where fix_text looks lint_text up

    original = engine_fix.lint_text

    def whole(*args, **kwargs):
        kwargs["skip_irrelevant"] = False
        return original(*args, **kwargs)

    engine_fix.lint_text = whole
    try:
        return fix_text(text, "m.py", rules, context, unsafe=True).text
    finally:
        engine_fix.lint_text = original


def assert_same(text: str, rules=None, context: RuleContext | None = None, fixes: bool = True) -> None:
    context = context or RuleContext()
    for label, chosen in {"given": rules}.items() if rules is not None else RULE_SETS.items():
        fast = _violations(text, chosen, context, True)
        whole = _violations(text, chosen, context, False)
        assert fast == whole, (
            f"{label}: findings differ\n{text}\nfast only: {set(fast) - set(whole)}\nwhole only: {set(whole) - set(fast)}"
        )
        if fixes and any(v[4] is not None for v in whole):
            assert _fixed(text, chosen, context, True) == _fixed(text, chosen, context, False), (
                f"{label}: fixes differ\n{text}"
            )


# -- rule examples and examples/ ----------------------------------------------------------
def _example_cases():
    for rule in EVERY:
        for kind in ("VALID", "INVALID"):
            for index, example in enumerate(getattr(rule, kind)):
                yield pytest.param(rule, example, id=f"{rule.code}-{kind.lower()}-{index}")


@pytest.mark.parametrize(("rule", "example"), list(_example_cases()))
def test_rule_examples_are_the_same_on_the_fast_path(rule, example):
    code = textwrap.dedent(example.code).lstrip("\n")
    context = RuleContext(**example.options)
    assert_same(code, [rule], context)
    assert_same(code, context=context)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.name)
def test_example_files_are_the_same_on_the_fast_path(path):
    assert_same(path.read_text(encoding="utf-8"))


def test_the_hl002_example_keeps_its_unsafe_fix_on_the_fast_path():
    # The store filled by the hook is read in another method (tune_layer), which the
    # sparse text used to drop, and with it the fix that removes the handle there.
    text = (EXAMPLES / "hl002_layer_input_catcher.py").read_text(encoding="utf-8")
    found = [v for v in lint_text(text, "m.py", SCREENABLE, RuleContext()) if v.code == "HL002"]
    assert len(found) == 1 and found[0].fix is not None and found[0].fix.applicability == "unsafe"


# -- generated programs ---------------------------------------------------------------------
HEADER = """\
import contextlib
import functools

import torch
from torch import nn
from torch.nn.modules.module import register_module_forward_hook

STORE = []
CACHE = {}
"""

_MODULES = ["model", "model.encoder", "layer", "self.model", "self.layer"]
_STRING_NOISE = [
    '    """Steps.\n    # prepare"""\n',
    '    note = """register_forward_hook(fn) is called below\n    # prepare"""\n',
    "    # m.register_forward_hook(fn) would be wrong here\n",
    "    text = 'h.remove()  # not code'\n",
    '    """\n\n    # hooks: register_forward_pre_hook\n\n    """\n',
    '    doc = f"""{len(STORE)}\n    # prepare"""\n',
]


class _Program:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.parts: list[str] = []
        self.count = 0

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}_{self.count}"

    def noise(self) -> str:
        return self.rng.choice(_STRING_NOISE) if self.rng.random() < 0.4 else ""

    def hook_function(self) -> str:
        name = self.name("hook")
        body = self.rng.choice(
            [
                "    STORE.append(output)\n",
                "    STORE.append(output.detach())\n",
                "    CACHE[module] = output\n",
                "    return output * 2\n",
                "    print(output.shape)\n",
            ]
        )
        self.parts.append(f"def {name}(module, args, output):\n{self.noise()}{body}")
        return name

    def factory(self) -> str:
        name = self.name("make_hook")
        self.parts.append(
            f"def {name}(key):\n{self.noise()}    def hook(module, args, output):\n"
            "        CACHE[key] = output\n\n    return hook\n"
        )
        return f"{name}(name)"

    def hook(self) -> str:
        choice = self.rng.randrange(4)
        if choice == 0:
            return self.hook_function()
        if choice == 1:
            return self.factory()
        if choice == 2:
            return "lambda m, a, o: STORE.append(o)"
        return f"functools.partial({self.hook_function()})"

    def registration_lines(self, module: str, hook: str) -> list[str]:
        kind = self.rng.choice(
            ["register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook"]
        )
        call = f"{module}.{kind}({hook})"
        shape = self.rng.randrange(7)
        if shape == 0:
            return [call, "model(x)"]
        if shape == 1:
            return [f"h = {call}", "model(x)", "h.remove()"]
        if shape == 2:
            return [f"h = {call}", "try:", "    model(x)", "finally:", "    h.remove()"]
        if shape == 3:
            return [f"with {call}:", "    model(x)"]
        if shape == 4:
            return [
                "handles = []",
                "for name, m in model.named_modules():",
                f"    handles.append(m.{kind}({hook}))",
                "model(x)",
            ]
        if shape == 5:
            return [f"h = {call}", "model(x)", "h.remove()  # pragma: no cover"]
        return [f"h = {call}  # type: ignore", "out = model(x)", "h.remove()", "return out"]

    def function(self) -> None:
        name = self.name("run")
        lines = self.registration_lines(self.rng.choice(_MODULES[:3]), self.hook())
        body = "".join(f"    {line}\n" for line in lines)
        self.parts.append(f"def {name}(model, layer, x):\n{self.noise()}{body}")

    def global_hook(self) -> None:
        name = self.name("install")
        hook = self.hook_function()
        form = self.rng.randrange(3)
        if form == 0:
            body = f"    register_module_forward_hook({hook})\n"
        elif form == 1:
            body = f"    h = register_module_forward_hook({hook})\n    model(x)\n    h.remove()\n"
        else:
            body = f"    with register_module_forward_hook({hook}):\n        model(x)\n"
        self.parts.append(f"def {name}(model, x):\n{self.noise()}{body}")

    def catcher_class(self) -> None:
        name = self.name("Catcher")
        store = self.rng.choice(["{}", "[]"])
        append = (
            "self.inputs.setdefault(module.layer_name, []).append(args[0])"
            if store == "{}"
            else "self.inputs.append(args[0])"
        )
        keep = self.rng.randrange(3)
        register = "layer.register_forward_pre_hook(self._capture)"
        if keep == 1:
            register = f"self.handles.append({register})"
        elif keep == 2:
            register = f"self.handle = {register}"
        methods = [
            f"    def __init__(self, model):\n        self.model = model\n        self.inputs = {store}\n        self.handles = []\n",
            f"    def _capture(self, module, args):\n        {append}\n",
            "    def start(self):\n        for name, layer in self.model.named_children():\n"
            f"            layer.layer_name = name\n            {register}\n",
        ]
        if store == "{}" and self.rng.random() < 0.6:
            methods.append(
                "    def tune(self, name, layer):\n        inputs = self.inputs.pop(name)\n        return [layer(x) for x in inputs]\n"
            )
        if keep == 1 and self.rng.random() < 0.5:
            methods.append("    def stop(self):\n        for h in self.handles:\n            h.remove()\n")
        if self.rng.random() < 0.3:
            methods.append(
                '    def describe(self):\n        """Uses\n        # prepare"""\n        return len(self.inputs)\n'
            )
        self.rng.shuffle(methods)
        self.parts.append(f"class {name}:\n" + "\n".join(methods))

    def module_class(self) -> None:
        name = self.name("Block")
        call = self.rng.choice(["self.inner.forward(x)", "self.inner(x)", "self.inner.forward(self, x)"])
        tensor_hook = (
            "        self.inner.weight.register_hook(lambda g: g * 2)\n" if self.rng.random() < 0.3 else ""
        )
        self.parts.append(
            f"class {name}(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.inner = nn.Linear(2, 2)\n\n"
            f"    def forward(self, x):\n{tensor_hook}        return {call}\n"
        )

    def removal_helper(self, nested: bool = True) -> str:
        """A module-level function with a neutral name that removes the handles it is
        given, directly or through a second one (not deeper: the handle model stops
        following helpers a few calls down, and a chain that reaches that limit gets
        an answer that depends on which caller asked first)."""
        name = self.name(self.rng.choice(["detach_all", "tidy", "finish"]))
        if nested and self.rng.random() < 0.3:
            inner = self.removal_helper(nested=False)
            self.parts.append(f"def {name}(items):\n{self.noise()}    {inner}(items)\n")
        else:
            self.parts.append(f"def {name}(items):\n{self.noise()}    for h in items:\n        h.remove()\n")
        return name

    def helper_caller(self) -> None:
        """A registering function that hands its handles to a neutral-named helper."""
        name = self.name("run")
        helper = self.removal_helper()
        hook = self.rng.choice(["lambda *a: None", self.hook()])
        ending = self.rng.choice(
            [
                ["out = model(x)", f"{helper}(handles)", "return out"],
                ["try:", "    out = model(x)", "finally:", f"    {helper}(handles)", "return out"],
                [f"{helper}(handles)"],
            ]
        )
        lines = [f"handles = [m.register_forward_hook({hook}) for m in model.modules()]", *ending]
        self.parts.append(
            f"def {name}(model, x):\n{self.noise()}" + "".join(f"    {line}\n" for line in lines)
        )

    def tracker_class(self) -> None:
        """Setup and teardown methods reached indirectly, called from a method without
        a hook token; sometimes nested in another class, or removing through a
        module-level helper, or registering through an alias."""
        name = self.name("Tracker")
        install = self.name("_install")
        setup = self.rng.choice(["register_hooks", "attach_hooks", "add_hooks", "prepare"])
        teardown = self.rng.choice(["cleanup", "close", "remove_hooks", "detach"])
        if self.rng.random() < 0.4:
            register = "reg = model.register_forward_hook\n        self.handles.append(reg(self.hook))"
        else:
            register = "self.handles.append(model.register_forward_hook(self.hook))"
        if self.rng.random() < 0.3:
            body = f"{self.removal_helper()}(self.handles)"
        else:
            body = "for h in self.handles:\n            h.remove()"
        if self.rng.random() < 0.5:
            run = (
                f"self.{setup}(model)\n        out = model(x)\n        self.{teardown}()\n        return out"
            )
        else:
            run = f"self.{setup}(model)\n        try:\n            return model(x)\n        finally:\n            self.{teardown}()"
        methods = [
            "    def __init__(self):\n        self.handles = []\n",
            f"    def {setup}(self, model):\n        self.{install}(model)\n",
            f"    def {install}(self, model):\n        {register}\n",
            "    def hook(self, module, args, output):\n        STORE.append(output)\n",
            f"    def {teardown}(self):\n        {body}\n",
            f"    def run(self, model, x):\n        {run}\n",
        ]
        if self.rng.random() < 0.5:
            methods.append("    def go(self, model, x):\n        return self.run(model, x)\n")
        self.rng.shuffle(methods)
        text = f"class {name}:\n" + "\n".join(methods)
        if self.rng.random() < 0.25:  # nested in another class
            outer = self.name("Outer")
            text = f"class {outer}:\n" + textwrap.indent(text, "    ")
        self.parts.append(text)

    def unrelated(self) -> None:
        name = self.name("helper")
        self.parts.append(f"def {name}(values):\n{self.noise()}    return [v * 2 for v in values]\n")

    def build(self) -> str:
        makers = [
            self.function,
            self.global_hook,
            self.catcher_class,
            self.module_class,
            self.unrelated,
            self.helper_caller,
            self.tracker_class,
        ]
        for _ in range(self.rng.randint(1, 6)):
            self.rng.choice(makers)()
        self.rng.shuffle(self.parts)
        return HEADER + "\n\n" + "\n\n".join(self.parts)


def generated(seed: int) -> str:
    text = _Program(random.Random(seed)).build()
    ast.parse(text)
    return text


def test_the_generator_makes_programs_with_findings_and_fixes():
    texts = [generated(seed) for seed in range(40)]
    found = [v for text in texts for v in lint_text(text, "m.py", SCREENABLE, RuleContext())]
    assert {v.code for v in found} >= {"HL002", "HL004", "HL009"}
    assert any(v.fix is not None for v in found)
    assert any('# prepare"""' in text for text in texts)


@pytest.mark.parametrize("seed", range(20))
def test_generated_programs_are_the_same_on_the_fast_path(seed):
    assert_same(generated(seed))


#: How many programs the slow test generates (``HOOKLINT_GENERATED_PROGRAMS=5000`` to hunt).
GENERATED = int(os.environ.get("HOOKLINT_GENERATED_PROGRAMS", "320"))


@pytest.mark.slow
@pytest.mark.parametrize("block", range(20, max(GENERATED, 40), 20))
def test_many_generated_programs_are_the_same_on_the_fast_path(block):
    for seed in range(block, block + 20):
        assert_same(generated(seed))


# -- evidence the screen must keep: owners of handed-out handles, lifecycle partners -------

OWNER_SHAPES = {
    # A MindSpore file (its import named by nothing the screen keeps): a cell's
    # `register_backward_hook` is MindSpore's, which HL007 reads from the import.
    "another framework's backward hook, its import named by nothing kept": (
        """\
        import mindspore


        def grad_probe(net, sink):
            return [
                cell.register_backward_hook(lambda cell_id, grad_in, grad_out: sink.append(grad_in[0]))
                for _, cell in net.cells_and_names()
            ]
        """,
        set(),
    ),
    # The helper binds each handle to a name, then appends the name to the list it
    # returns: the list holds the handles, and its caller owns them.
    "handles bound to a name, then appended to the returned list": (
        """\
        def hook_all(model, make_hook):
            found = []
            for name, module in model.named_modules():
                handle = module.register_forward_hook(make_hook(name))
                found.append(handle)
            return found


        def sizes(model, batch, make_hook):
            handles = hook_all(model, make_hook)
            model(batch)
            for handle in handles:
                handle.remove()
        """,
        {"HL004"},
    ),
    # Start/stop functions over a model: the installer runs through `Module.apply`
    # (wrapped in `partial`), keeps each handle on its module, and the pair is bound
    # to the model with `__get__`; the caller that runs the forward between them owns
    # the hooks.
    "a start/stop pair bound with __get__, installing through apply": (
        """\
        from functools import partial


        def count(module, inputs, output):
            module.__seen__ += 1


        def begin(self, scale=1):
            def install(module, scale):
                handle = module.register_forward_hook(count)
                module.__count_handle__ = handle

            self.apply(partial(install, scale=scale))


        def uninstall(module):
            module.__count_handle__.remove()


        def end(self):
            self.apply(uninstall)


        def counted(model):
            model.begin = begin.__get__(model)
            model.end = end.__get__(model)
            return model


        def measure(model, batch):
            model = counted(model)
            model.begin()
            model(batch)
            model.end()
        """,
        {"HL004"},
    ),
    # The helper's registration is one statement over several lines (the handles go
    # into a dict entry written across lines): its caller still owns them.
    "handles stored by a statement over several lines": (
        """\
        def install(model):
            names = []
            hooks = {}
            for name, module in model.named_modules():
                names.append(name)
                hooks[name] = (
                    module.register_forward_pre_hook(start_timer),
                    module.register_forward_hook(
                        stop_timer
                    ),
                )
            return names, hooks


        def profile(model, batch):
            names, hooks = install(model)
            model(batch)
            for pre, post in hooks.values():
                pre.remove()
                post.remove()
            return names
        """,
        {"HL004"},
    ),
    # The same helper, and a `finally` whose `try` starts after the input is prepared.
    "handles from a helper, removed by a late try": (
        """\
        def install(model, shapes):
            return [
                module.register_forward_hook(_shape_keeper(shapes))
                for module in model.children()
            ]


        def profile(model, batch, shapes, device):
            hooks = install(model, shapes)
            batch = batch.to(device)
            try:
                model(batch)
            finally:
                for handle in hooks:
                    handle.remove()
        """,
        {"HL004"},
    ),
    # A helper returns the handles; its caller (two levels up) runs the model and removes
    # them outside `finally`: HL004 is in the caller, which names no hook API itself.
    "handles handed up two levels": (
        """\
        class Calibrator:
            def _observe(self, block):
                return [m.register_forward_hook(self.record) for m in block.children()]

            def _observers(self, block):
                found = self._observe(block)
                found.extend(self.extra)
                return found

            def calibrate(self, block, batch):
                observers = self._observers(block)
                block(batch)
                for o in observers:
                    o.remove()
        """,
        {"HL004"},
    ),
    # `__enter__` registers, `__exit__` forgets: the partner method is the evidence.
    "__exit__ leaves what __enter__ registered": (
        """\
        class Watch:
            def __init__(self, model):
                self.model = model
                self.taps = {}

            def __enter__(self):
                for name, m in self.model.named_modules():
                    self.taps[name] = m.register_forward_pre_hook(self.note)
                return self

            def __exit__(self, *exc):
                self.taps.clear()
        """,
        {"HL004"},
    ),
    # The handles go to a same-file helper whose name does not say "remove": the removal
    # there (outside `finally`) is the finding; without the helper they escape to an
    # unknown call, and there is none.
    "removal in a neutral-named helper": (
        """\
        def release(taps):
            for tap in taps:
                tap.remove()


        def profile(net, batch):
            taps = [m.register_forward_pre_hook(lambda *a: None) for m in net.children()]
            result = net(batch)
            release(taps)
            return result
        """,
        {"HL004"},
    ),
    # A token-free method runs a setup method (which registers through another method)
    # and the teardown that removes what it stored, outside `finally`.
    "setup reached through another method, called from a token-free method": (
        """\
        class Probe:
            def __init__(self):
                self.taps = []

            def attach_hooks(self, net):
                self._wire(net)

            def _wire(self, net):
                self.taps.append(net.register_forward_hook(self.seen))

            def seen(self, module, args, output):
                pass

            def detach(self):
                for tap in self.taps:
                    tap.remove()

            def measure(self, net, batch):
                self.attach_hooks(net)
                result = net(batch)
                self.detach()
                return result
        """,
        {"HL004"},
    ),
    # The setup method registers through a bound-method alias (no `register_...(` call
    # to screen on): the call `self.add_hooks(net)` is what acquires the handles.
    "setup method registering through an alias": (
        """\
        class Sampler:
            def __init__(self):
                self.taps = []

            def add_hooks(self, net):
                attach = net.register_forward_hook
                self.taps.append(attach(self.seen))

            def seen(self, module, args, output):
                pass

            def close(self):
                for tap in self.taps:
                    tap.remove()

            def measure(self, net, batch):
                self.add_hooks(net)
                result = net(batch)
                self.close()
                return result
        """,
        {"HL004"},
    ),
    # The teardown (kept for the store it shares) removes through a module-level helper
    # that calls another: dropping the middle one leaves the capture never removed.
    "teardown removing through two module-level helpers": (
        """\
        LOG = []


        def drain(taps):
            release(taps)


        def release(taps):
            for tap in taps:
                tap.remove()


        class Sampler:
            def __init__(self):
                self.taps = []

            def seen(self, module, args, output):
                LOG.append(output)

            def wire(self, net):
                self.taps.append(net.register_forward_hook(self.seen))

            def done(self):
                drain(self.taps)
        """,
        set(),
    ),
    # An autograd.Function's forward hooks the parameters it is given on every call:
    # the `Cls.apply(self.weight, ...)` caller says they live on the module.
    "tensor hooks in Function.forward": (
        """\
        import torch


        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, weight, grads):
                weight.register_hook(lambda g: grads.append(g))
                return x * weight

            @staticmethod
            def backward(ctx, g):
                return g, None, None


        class Layer(torch.nn.Module):
            def forward(self, x):
                return Scale.apply(x, self.weight, self.grads)
        """,
        {"HL003"},
    ),
    # A constructor that binds each handle to a local, then keeps it on `self`: its
    # callers own the hooks (`cap = Capture(model)`, later `cap.remove()`), and the
    # screen must keep them as for `self.hooks.append(reg(...))`.
    "a constructor that keeps each handle through a local": (
        """\
        class Capture:
            def __init__(self, blocks, picks):
                self.seen = {}
                self.hooks = []
                for index in picks:
                    hook = blocks[index].register_forward_hook(self.keeper(index))
                    self.hooks.append(hook)

            def keeper(self, index):
                def keep(module, args, output):
                    self.seen[index] = output.detach()

                return keep

            def remove(self):
                for hook in self.hooks:
                    hook.remove()
                self.hooks.clear()


        def run(model, blocks, picks, batches):
            cap = Capture(blocks, picks)
            outs = [model(batch) for batch in batches]
            cap.remove()
            return outs
        """,
        {"HL004"},
    ),
    # A registration method named by a plain string: the facts read it as one, so the
    # screen must keep the function (strings are otherwise blanked before seeding).
    "a registration method named by a string": (
        """\
        def first_output(model, x):
            seen = []
            handle = getattr(model, "register_forward_hook")(lambda mod, args, out: seen.append(out))
            model(x)
            handle.remove()
            return seen[0]
        """,
        {"HL004"},
    ),
    # The class's base is imported by its bare name: the screen keeps the class for
    # its constructor, and must keep the import its header names (the base makes it a
    # helper object rather than a module of unknown kind).
    "a helper class whose base is imported by its bare name": (
        """\
        from torch.optim import Optimizer


        class CountingSGD(Optimizer):
            def __init__(self, model, lr):
                super().__init__(model.parameters(), {"lr": lr})
                self.seen = 0

                def count(module, args):
                    self.seen += 1

                model.register_forward_pre_hook(count)
        """,
        {"HL019"},
    ),
}


@pytest.mark.parametrize("name", sorted(OWNER_SHAPES))
def test_the_screen_keeps_the_evidence_a_finding_needs(name):
    source, codes = OWNER_SHAPES[name]
    text = textwrap.dedent(source)
    assert {v[0] for v in _violations(text, DEFAULT, RuleContext(), False)} == codes
    assert_same(text, DEFAULT)
    assert_same(text)
