"""HL020 hook-loop-lookup-can-raise (preview)."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.handles import HandleModel, handle_model
from hooklint.analysis.lifetime import looks_up_before_registering, statement_path, statement_site
from hooklint.rules.base import Finding, Invalid, RuleContext, Valid
from hooklint.rules.hl004_hook_removal_not_exception_safe import HookRemovalNotExceptionSafe


class HookLoopLookupCanRaise(HookRemovalNotExceptionSafe):
    """A loop puts hooks on modules it looks up by the caller's names, before the `try` that removes them.

    ## What it does
    Finds a loop (or a comprehension) that registers hooks into a list before the
    `try` whose `finally` removes the list, where each pass looks the module up by a
    value the caller of a public function gave: `model.get_submodule(name)`, a
    subscript such as `blocks[i]` for `i` in a given list, a function or method given
    the key beside what it looks in (`resolve(model, name)`, `self.find(name)`), or an
    `if` that raises for an unknown key. The same loop in a public function that
    returns the list (or a record of it, `return Patch(handles)`) for its caller to
    remove is reported too.

    Not reported: loops over what the model has (`model.named_modules()`,
    `range(n)`, literals), over a list kept on `self` (a class checks such names
    where it is given them), in a private helper (its callers are the file's own
    code, which derives what it passes), a lookup whose value the loop checks for
    `None` (`if layer is None: continue`, `if layer := find(name):`: it answers `None`
    for an unknown key), a lookup inside a `try` of the loop, a comprehension whose
    `if` tests the name, and a transform of the loop's own object (`getattr(block,
    "attn")`).

    ## Why is this bad?
    A name the model does not have (a typo, a layer index past the end, a model of
    another architecture) raises on its pass, after the earlier passes put their hooks
    on; the `try` that would remove them has not started, and a function that was to
    return the list returns nothing. The hooks stay on the caller's model and keep
    capturing, steering or holding memory on every later forward.

    ## Example
    ```python
    def capture(model, names, batch):
        seen, hooks = {}, []
        for name in names:
            layer = model.get_submodule(name)
            hooks.append(layer.register_forward_hook(lambda m, a, o, n=name: seen.update({n: o})))
        try:
            model(batch)
        finally:
            for hook in hooks:
                hook.remove()
        return seen
    ```

    ## Use instead
    ```python
    def capture(model, names, batch):
        seen, hooks = {}, []
        try:
            for name in names:
                layer = model.get_submodule(name)
                hooks.append(layer.register_forward_hook(lambda m, a, o, n=name: seen.update({n: o})))
            model(batch)
        finally:
            for hook in hooks:
                hook.remove()
        return seen
    ```

    ## Fix safety
    Safe: the fix starts the `try` at the loop, reusing its `finally`, so the hooks
    of the passes before the failing one are removed too. No fix when the list the
    `finally` reads is bound by the registering statement (a comprehension), when
    the `try` has `except` handlers, or for a list handed back to the caller.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py
    --preview`): no finding; torch 2.13's own sources: none. Held-out libraries read
    for it (`notes/heldout18.md`; `hooklint check --preview --select HL020 DIR` on each
    tree): deepsteer's four loops true (a public `layers` argument indexes the model's
    layer list unchecked; a second reader reproduced the leak), sae-lens's one
    debatable (the hook left on passes outputs through), hprobes's seven false (public
    functions, but every caller passes a list that an earlier call has already looked
    up): 4 true, 7 false, 1 debatable. It stays in preview: whether a caller's names can
    be wrong is often decided outside the function.
    """

    code = "HL020"
    name = "hook-loop-lookup-can-raise"
    preview = True
    loop_lookups = True

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        if not facts.registrations:
            return
        model = handle_model(facts)
        reported: set[int] = set()  # one finding per removal statement: one loop, one bug
        for scope_id in model.scopes():
            for acquisition in model.acquisitions(scope_id):
                found = self._check(facts, model, acquisition)
                if found is not None and id(found[1]) not in reported:
                    reported.add(id(found[1]))
                    yield found[0]
        yield from self._returned_after_lookups(facts, model)

    @staticmethod
    def _returned_after_lookups(facts: ModuleFacts, model: HandleModel) -> list[Finding]:
        """A function fills a container with handles in a loop that looks up what it
        hooks by the values the caller gave (:func:`looks_up_before_registering`), and
        returns the container for the caller to remove: when a later pass raises, the
        function returns nothing, so the hooks of the earlier passes are on for good.
        Not when a ``try`` around the loop may take them off."""
        found = []
        for scope_id in model.scopes():
            for acquisition in model.acquisitions(scope_id):
                flow, site = acquisition.flow, acquisition.site
                if acquisition.registration is None or flow.single or not model.handed_back(flow, scope_id):
                    continue
                if flow.target is None or flow.scoped or site.function is None:
                    continue
                if any(frame.kind == "try" for frame in site.frames):
                    continue  # a handler may take them off
                path = statement_path(facts, statement_site(site))
                if path is None:
                    continue
                if not looks_up_before_registering(path, acquisition.call, site.function, site):
                    continue
                found.append(
                    Finding(
                        node=acquisition.node,
                        message=(
                            f"`{flow.target}` is returned, but a lookup in the loop that fills it can raise: "
                            "the hooks already on are never removed"
                        ),
                    )
                )
                break
        return found

    VALID = [
        # The loop walks what the model has (nothing is looked up by a given name): what
        # it hooks is there by construction.
        Valid(
            """
def attention_outputs(model, batch):
    outs = []
    taps = []
    for name, module in model.named_modules():
        if name.endswith("attn"):
            taps.append(module.register_forward_hook(lambda mod, args, out: outs.append(out)))
    try:
        model(batch)
    finally:
        for tap in taps:
            tap.remove()
    return outs
"""
        ),
        # A name the model lacks is skipped inside the loop: nothing raises there.
        Valid(
            """
def probe(model, wanted, batch):
    seen = {}
    taps = []
    for name in wanted:
        try:
            layer = model.get_submodule(name)
        except AttributeError:
            continue
        taps.append(layer.register_forward_hook(lambda mod, args, out, name=name: seen.update({name: out})))
    try:
        model(batch)
    finally:
        for tap in taps:
            tap.remove()
    return seen
"""
        ),
        # The looked-up value feeds only the hook's label (`getattr` with a default never
        # raises), and the modules come from the given list itself.
        Valid(
            """
def label_outputs(modules, labels, batch, model):
    seen = {}
    taps = []
    for module in modules:
        label = getattr(module, "label", None)
        taps.append(module.register_forward_hook(lambda mod, args, out, label=label: seen.update({label: out})))
    try:
        model(batch)
    finally:
        for tap in taps:
            tap.remove()
    return seen
"""
        ),
        # Handles handed back after a loop over the model's own blocks (nothing looked
        # up by a caller's value), and a private helper whose callers pass indices they
        # computed themselves.
        Valid(
            """
def add_bias(model, bias):
    handles = []
    for block in model.blocks:
        handles.append(block.register_forward_hook(lambda mod, args, out: out + bias))
    return handles


def _add_scaled(model, indices, scale):
    handles = []
    for index in indices:
        handles.append(model.blocks[index].register_forward_hook(lambda mod, args, out: out * scale))
    return handles


def run(model, batch, bias):
    handles = add_bias(model, bias) + _add_scaled(model, range(len(model.blocks)), 2.0)
    try:
        return model(batch)
    finally:
        for handle in handles:
            handle.remove()
"""
        ),
        # The lookup answers `None` for an index the model lacks, and the loop skips it:
        # nothing raises there.
        Valid(
            """
def find_block(model, index):
    blocks = getattr(model, "blocks", None)
    if blocks is None or not 0 <= index < len(blocks):
        return None
    return blocks[index]


def block_outputs(model, indices, batch):
    outs = {}
    taps = []
    for index in indices:
        block = find_block(model, index)
        if block is None:
            continue
        taps.append(block.register_forward_hook(lambda mod, args, out, index=index: outs.update({index: out})))
    try:
        model(batch)
    finally:
        for tap in taps:
            tap.remove()
    return outs
"""
        ),
        # The comprehension keeps only the names the model has: its lookups cannot fail.
        Valid(
            """
def outputs_of(model, names, batch):
    seen = {}
    modules = dict(model.named_modules())
    hooks = [modules[n].register_forward_hook(lambda m, a, o, n=n: seen.update({n: o})) for n in names if n in modules]
    try:
        model(batch)
    finally:
        for hook in hooks:
            hook.remove()
    return seen
"""
        ),
    ]

    INVALID = [
        # The loop looks each layer up by a name it was given: a misspelt third name
        # raises with the first two hooks on, before the `try` that would remove them.
        Invalid(
            """
from contextlib import contextmanager


@contextmanager
def record_layers(model, layer_names, sink):
    hooks = []
    for layer_name in layer_names:
        layer = model.get_submodule(layer_name)
        hooks.append(layer.register_forward_hook(lambda mod, args, out: sink.append(out.detach())))
    try:
        yield sink
    finally:
        for hook in hooks:
            hook.remove()
""",
            expected="""
from contextlib import contextmanager


@contextmanager
def record_layers(model, layer_names, sink):
    hooks = []
    try:
        for layer_name in layer_names:
            layer = model.get_submodule(layer_name)
            hooks.append(layer.register_forward_hook(lambda mod, args, out: sink.append(out.detach())))
        yield sink
    finally:
        for hook in hooks:
            hook.remove()
""",
            line=9,
            message="`hooks` is removed in `finally`, but the loop that registers it, whose lookups can raise,",
        ),
        # The module is found by a method of the object: a path the model lacks raises
        # there.
        Invalid(
            """
from contextlib import contextmanager


class Tap:
    def __init__(self, model):
        self.model = model
        self.inputs = {}

    def resolve(self, path):
        return self.model.get_submodule(path)

    @contextmanager
    def inputs_of(self, paths):
        handles = []
        for path in paths:
            module = self.resolve(path)
            handles.append(module.register_forward_pre_hook(self._keep))
        try:
            yield self.inputs
        finally:
            for handle in handles:
                handle.remove()

    def _keep(self, module, args):
        self.inputs[module] = args
""",
            expected="""
from contextlib import contextmanager


class Tap:
    def __init__(self, model):
        self.model = model
        self.inputs = {}

    def resolve(self, path):
        return self.model.get_submodule(path)

    @contextmanager
    def inputs_of(self, paths):
        handles = []
        try:
            for path in paths:
                module = self.resolve(path)
                handles.append(module.register_forward_pre_hook(self._keep))
            yield self.inputs
        finally:
            for handle in handles:
                handle.remove()

    def _keep(self, module, args):
        self.inputs[module] = args
""",
            line=17,
            message="`handles` is removed in `finally`, but the loop that registers it, whose lookups can raise,",
        ),
        # A comprehension that looks each module up by a caller's name: a misspelt name
        # raises with the hooks of the names before it on (no fix: the list the
        # `finally` reads is bound by that statement).
        Invalid(
            """
def outputs_of(model, names, batch):
    seen = {}
    hooks = [model.get_submodule(n).register_forward_hook(lambda m, a, o, n=n: seen.update({n: o})) for n in names]
    try:
        model(batch)
    finally:
        for hook in hooks:
            hook.remove()
    return seen
""",
            line=3,
            message="`hooks` is removed in `finally`, but the loop that registers it, whose lookups can raise,",
        ),
        # The same, with the handles handed back inside a record of them.
        Invalid(
            """
class Patch:
    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()


def shift_layers(model, shifts):
    handles = []
    for name, shift in shifts.items():
        layer = model.get_submodule(name)
        handles.append(layer.register_forward_hook(lambda mod, args, out, s=shift: out + s))
    return Patch(handles)
""",
            line=14,
            message="`handles` is returned, but a lookup in the loop that fills it can raise",
        ),
        # Handles handed back to the caller, who removes them; but a layer index the
        # model lacks raises in the loop, and the hooks of the earlier layers are in a
        # list nobody gets back.
        Invalid(
            """
def add_steering(model, vectors):
    handles = []
    for index, vector in vectors.items():
        block = model.blocks[index]
        handles.append(block.register_forward_hook(lambda mod, args, out, v=vector: out + v))
    return handles


def steered(model, vectors, batch):
    handles = add_steering(model, vectors)
    try:
        return model(batch)
    finally:
        for handle in handles:
            handle.remove()
""",
            line=5,
            message="`handles` is returned, but a lookup in the loop that fills it can raise",
        ),
        # Indices the caller chose, each checked (and refused) inside the loop; the same
        # for a subscript of the block list by the index (`blocks[i]` raises IndexError).
        Invalid(
            """
def block_norms(net, block_ids, batch, stats):
    taps = []
    for i in block_ids:
        if i >= len(net.blocks):
            raise IndexError(f"no block {i}")
        taps.append(net.blocks[i].register_forward_hook(stats.observe))
    try:
        net(batch)
    finally:
        for tap in taps:
            tap.remove()
    return stats.norms()
""",
            expected="""
def block_norms(net, block_ids, batch, stats):
    taps = []
    try:
        for i in block_ids:
            if i >= len(net.blocks):
                raise IndexError(f"no block {i}")
            taps.append(net.blocks[i].register_forward_hook(stats.observe))
        net(batch)
    finally:
        for tap in taps:
            tap.remove()
    return stats.norms()
""",
            line=6,
            message="`taps` is removed in `finally`, but the loop that registers it, whose lookups can raise,",
        ),
    ]
