"""HL002 capture-hook-not-removed: cases beyond the rule's VALID/INVALID examples,
and registration wrappers (the llm-compressor acceptance on its released packages is in
test_seeds.py)."""

from __future__ import annotations

import libcst
import pytest
from _checks import dedented as _code
from _checks import findings

from hooklint.analysis.collector import collect
from hooklint.engine import fix_text, parses
from hooklint.rules.base import RuleContext
from hooklint.rules.hl002_capture_hook_not_removed import CaptureHookNotRemoved

RULE = CaptureHookNotRemoved


def _lint(text: str, context: RuleContext | None = None):
    return findings(text, ("HL002",), context)


def _fix(text: str, context: RuleContext | None = None) -> str:
    outcome = fix_text(_code(text), "t.py", [RULE], context or RuleContext(), unsafe=True)
    assert parses(outcome.text)
    assert [v for v in outcome.violations if v.code == "HL002"] == []
    return outcome.text


# -- do not flag ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "source",
    [
        pytest.param(
            """
            def probe(model, x):
                outs = []
                h = model.fc.register_forward_hook(lambda m, i, o: outs.append(o))
                try:
                    model(x)
                finally:
                    h.remove()
                return outs
            """,
            id="removed-in-finally",
        ),
        pytest.param(
            """
            def probe(model, x):
                outs = []
                with model.fc.register_forward_hook(lambda m, i, o: outs.append(o)) as h:
                    model(x)
                return outs
            """,
            id="with-as",
        ),
        pytest.param(
            """
            from contextlib import ExitStack

            def probe(model, x):
                outs = []
                with ExitStack() as stack:
                    for m in model.modules():
                        h = m.register_forward_hook(lambda m, i, o: outs.append(o))
                        stack.enter_context(h)
                    model(x)
                return outs
            """,
            id="exit-stack-through-local",
        ),
        pytest.param(
            """
            class Probe:
                def __init__(self):
                    self.hooks = {}
                    self.acts = []

                def save(self, module, args, output):
                    self.acts.append(output.detach())

                def attach(self, model):
                    for name, m in model.named_modules():
                        self.hooks[name] = m.register_forward_hook(self.save)

                def detach(self):
                    for name, h in self.hooks.items():
                        h.remove()
            """,
            id="dict-of-handles-removed-by-items-loop",
        ),
        pytest.param(
            """
            import atexit

            acts = []
            handle = model.register_forward_hook(lambda m, i, o: acts.append(o))
            atexit.register(handle.remove)
            """,
            id="removal-handed-to-atexit",
        ),
        pytest.param(
            """
            def save(module, args, output):
                scratch = []
                scratch.append(output)
                log(scratch)

            model.register_forward_hook(save)
            """,
            id="per-call-local-store",
        ),
        pytest.param(
            """
            def save(module, args, output, sink):
                sink.append(output)

            model.register_forward_hook(save)
            """,
            id="store-is-a-plain-argument",
        ),
        pytest.param(
            """
            class Counter:
                def hook(self, module, args, output):
                    self.total += output.sum()
                    self.calls.append(module.name)

                def attach(self, model):
                    model.register_forward_hook(self.hook)
            """,
            id="running-sum-and-module-name-only",
        ),
        pytest.param(
            """
            class Catcher:
                def catch(self, module, args):
                    self.batches.append(args)
                    self.remove_hooks()

                def attach(self, model):
                    self.register_hook(model, self.catch, "forward_pre")
            """,
            id="removes-all-siblings-on-first-call",
        ),
        pytest.param(
            """
            class AwqLike(HooksMixin):
                def cache_hook(self, module, args, kwargs):
                    self._cache[module].append(kwargs)

                def start(self, model):
                    for m in model.modules():
                        self.register_hook(m, self.cache_hook, "forward_pre", with_kwargs=True)

                def smooth(self, module):
                    with HooksMixin.disable_hooks():
                        for batch in self._cache[module]:
                            module(**batch)
            """,
            id="reruns-under-disable-hooks",
        ),
        pytest.param(
            """
            def add_capture(module, store):
                return module.register_forward_hook(lambda m, i, o: store.append(o))
            """,
            id="handle-returned",
        ),
        pytest.param(
            """
            model.register_forward_hook(lambda m, i, o: print(o.shape))
            """,
            id="not-a-capture",
        ),
    ],
)
def test_not_flagged(source):
    assert _lint(source) == []


# -- flagged ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        pytest.param(
            """
            import functools

            def grab(store, module, args, output):
                store.append(output)

            def install(model, store):
                model.register_forward_hook(functools.partial(grab, store))
            """,
            "appends to `store`",
            id="partial-bound-store",
        ),
        pytest.param(
            """
            class Recorder:
                def __init__(self):
                    self.outputs = []

                def __call__(self, module, args, output):
                    self.outputs.append(output.detach())

            model.encoder.register_forward_hook(Recorder())
            """,
            "capture hook `Recorder.__call__` appends to `self.outputs`",
            id="callable-object",
        ),
        pytest.param(
            """
            def make_probe(model):
                outs = []
                count = 0

                def probe(module, args, output):
                    nonlocal count
                    count += 1
                    outs.append(output)

                model.register_forward_hook(probe)
                return outs
            """,
            "appends to `outs`",
            id="closure-store",
        ),
        pytest.param(
            """
            class StepCache:
                def hook(self, module, args, output):
                    self.cache[len(self.cache)] = output.detach()

                def attach(self, model):
                    self.handle = model.register_forward_hook(self.hook)
            """,
            "adds a new key to `self.cache`",
            id="per-call-key-kept-never-removed",
        ),
        pytest.param(
            """
            def grad_logger(param, grads):
                param.register_hook(lambda g: grads.append(g.norm()))
            """,
            "on every backward",
            id="tensor-hook",
        ),
        pytest.param(
            """
            acts = []

            def keep(module, args, output):
                acts.extend([output])

            getattr(model, f"register_{kind}_hook")(keep)
            """,
            "extends `acts`",
            id="getattr-dispatch",
        ),
        pytest.param(
            """
            def probe(module, args, output):
                module.seen += [output.detach()]

            layer.register_forward_hook(probe)
            """,
            "extends `module.seen`",
            id="store-on-the-hooked-module",
        ),
    ],
)
def test_flagged(source, fragment):
    found = _lint(source)
    assert found and any(fragment in v.message for v in found), [v.message for v in found]


def test_message_names_hook_store_and_handle_fate():
    (violation,) = _lint(
        """
        feats = []
        model.layer4.register_forward_hook(lambda m, i, o: feats.append(o))
        """
    )
    assert violation.message.startswith(
        "capture hook `<lambda>` appends to `feats` on every forward; its handle is discarded"
    )
    from hooklint.rules import rules_by_code

    assert len(violation.message) <= 120  # one short line; what to do instead is in `hooklint explain HL002`
    assert "## Use instead" in rules_by_code()["HL002"].documentation()
    assert violation.fix is None


# -- fixes -----------------------------------------------------------------------------------
def test_local_fix_binds_kept_handle_with_as():
    fixed = _fix(
        """
        def run(model, x):
            outs = []
            h = model.register_forward_hook(lambda m, i, o: outs.append(o.detach()))
            y = model(x)
            return y, outs
        """
    )
    assert fixed == _code(
        """
        def run(model, x):
            outs = []
            with model.register_forward_hook(lambda m, i, o: outs.append(o.detach())) as h:
                y = model(x)
            return y, outs
        """
    )


def test_local_fix_uses_existing_exitstack_import_and_loop_reads():
    fixed = _fix(
        """
        from contextlib import ExitStack

        def run(model, loader):
            feats = []
            for m in model.blocks:
                m.register_forward_hook(lambda mod, i, o: feats.append(o.mean()))
            for x in loader:
                model(x)
                print(len(feats))
            return feats
        """
    )
    assert "with ExitStack() as stack:" in fixed
    assert "stack.enter_context(m.register_forward_hook(" in fixed
    assert fixed.count("import") == 1


def test_no_local_fix_when_capture_is_not_read_in_the_function():
    (violation,) = _lint(
        """
        def attach(model, store):
            model.register_forward_hook(lambda m, i, o: store.append(o))
            model.eval()
        """
    )
    assert violation.fix is None


# -- registration wrappers -------------------------------------------------------------------
WRAPPED = """
class Modifier(HooksMixin):
    def capture(self, module, args):
        self.inputs.setdefault(module.name, []).append(args)

    def start(self, model):
        for m in model.modules():
            self.add_hook(m, self.capture, kind="forward_pre")
"""


def test_configured_wrapper_is_a_registration():
    assert _lint(WRAPPED) == []
    found = _lint(WRAPPED, RuleContext(registration_wrappers=("HooksMixin.add_hook",)))
    assert len(found) == 1 and found[0].message.endswith("its handle is discarded")


def test_configured_wrapper_kind_from_string_argument():
    facts = collect(libcst.parse_module(_code(WRAPPED)), ("add_hook",))
    (registration,) = facts.registrations
    assert registration.wrapper == "add_hook"
    assert registration.api.name == "register_forward_pre_hook"
    assert registration.receiver_code == "m"
    assert registration.hook is not None and registration.hook.name == "capture"


def test_multi_argument_register_hook_is_read_as_a_wrapper_call():
    source = "class M:\n    def hook(self, m, i, o):\n        pass\n\n    def go(self, module):\n        self.register_hook(module, self.hook, 'forward')\n"
    facts = collect(libcst.parse_module(source))
    (registration,) = facts.registrations
    assert registration.wrapper == "register_hook"
    assert registration.api.name == "register_forward_hook"
    assert facts.code(registration.hook_arg) == "self.hook"


def test_inferred_in_file_wrapper():
    source = """
    def add_hook(module, fn, handles):
        handles.append(module.register_forward_hook(fn))

    def track(model, handles):
        acts = []
        for m in model.modules():
            add_hook(m, lambda mod, i, o: acts.append(o), handles)
        return acts
    """
    found = _lint(source)
    assert len(found) == 1 and "appends to `acts`" in found[0].message
    facts = collect(libcst.parse_module(_code(source)))
    assert [r.wrapper for r in facts.registrations] == [None, "add_hook"]


def test_every_store_method_has_the_verb_the_message_says():
    from hooklint.analysis.vocabulary import STORE_METHODS, STORE_VERBS

    assert set(STORE_VERBS) == STORE_METHODS
