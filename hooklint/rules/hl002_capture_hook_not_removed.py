"""HL002 capture-hook-not-removed."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from hooklint.analysis.captures import (
    bulk_removal,
    leaking_capture,
)
from hooklint.analysis.facts import HookBody, ModuleFacts, Registration
from hooklint.analysis.lifetime import registering_block
from hooklint.analysis.vocabulary import BACKWARD_KINDS
from hooklint.fixes.capture import keyed_removal, with_block
from hooklint.rules.base import (
    MESSAGE_LIMIT,
    Finding,
    Invalid,
    Rule,
    RuleContext,
    Valid,
    more_registrations,
    with_evidence,
)

_EVENT = {
    "forward": "forward",
    "forward_pre": "forward",
    "wrapper": "call",
    "dynamic": "call",
    **dict.fromkeys(BACKWARD_KINDS, "backward"),
    "step_pre": "optimizer step",
    "step_post": "optimizer step",
}


class CaptureHookNotRemoved(Rule):
    """A hook that stores what it receives into a growing store is never removed.

    ## What it does
    Finds *capture hooks*: hooks that store their inputs, outputs or gradients (or
    values derived from them) into a store that outlives the call and grows on every
    call (`store.append(x)`, `extend`, `insert`, `store.setdefault(k, []).append(x)`,
    `store += [x]`, `store = torch.cat([store, x])`, `store = [x] + store` (or
    `[*store, x]`), `store[k] = x` with a key that
    changes per call; not what kind of thing the hook received: `seen.add(type(output))`,
    `output.dtype`) where the store is a `self` attribute, an attribute of the
    hooked module, a module global, a closure or `nonlocal` variable, or an object
    bound with `functools.partial` or held by a callable object. It flags the
    registration when the handle is discarded (the registration is an expression
    statement) or is kept but never removed anywhere in the file (`.remove()`,
    `with`, an `ExitStack`, a helper whose name says it removes, `h.remove` handed to
    `atexit`/`weakref.finalize`, `getattr(h, "remove")` called). Handles kept on an
    attribute of a parameter (`session.handles`: the caller's object) count as
    removed when another function of the file removes that attribute of a parameter
    of its own (a setup/teardown pair the caller runs on one object); an entry of the
    object's `__dict__` under a literal name (`model.__dict__.setdefault("hooks",
    [])`) is that attribute.
    A removal that runs only when the registering object is finalized (in its
    `__del__`, or a private method only `__del__` calls) does not count when the hook
    holds that object (a bound method `self._keep`, or a function that names `self`):
    the module keeps the hook, the hook keeps the object, so `__del__` never runs
    while the module lives.

    A hook that only overwrites slots (`store[name] = output`) is a capture too when
    the store is one the registering function makes anew on every call (`outputs =
    {}`, reached as a closure or through the parameter of a hook factory the
    registration calls with it) and the function then runs what it hooked
    (`model(batch)`, `model.generate(...)`), or, when it was handed the hooked
    module, another module handed in with it (`layer` and `model`, then `model(x)`): each call leaves one more hook on the
    caller's module, holding that call's store. A function that runs nothing after
    hooking hands the store out on purpose (an installer): not flagged.

    Registrations are every `register_*hook` of `nn.Module`, `Tensor` and optimizers,
    the global `register_module_*` functions, `getattr(m, f"register_{kind}_hook")`,
    and calls to *registration wrappers*: functions of the same file that register
    the hook they are given and return or store the handle (inferred), such functions
    of other files of the project (a mixin or base class's method, an imported
    helper: llm-compressor's `HooksMixin.register_hook`; the message names it), names
    listed in the `registration-wrappers` setting (for wrappers outside the project), and `x.register_hook(target, hook,
    ...)` calls with two or more positional arguments (never `Tensor.register_hook`).

    A handle discarded into a wrapper that keeps it (llm-compressor's `HooksMixin`)
    can only be removed in bulk (`self.remove_hooks()`), at the end of a lifecycle;
    the rule approximates "removed only in bulk while the same object re-runs the
    hooked module before that point" by flagging every such discarded handle of a
    capture hook: bounded hooks (a running statistic) are not capture hooks and are
    not flagged, and neither is a class that re-runs modules only under the manager's
    `with ...disable_hooks():` (the capture is paused, not growing).

    Not flagged: handles removed in `finally`, by `with`, through an `ExitStack` or
    a removal helper; a discarded handle of a class whose methods take hooks off
    without handles (emptying a module's hook dicts, themselves or through a function
    of the file, or calling a function named for it, `unregister_all_hooks(self.net)`,
    also one imported from another file); handles that are returned or passed on (the caller's to
    remove); hooks on a model the function builds and never hands out (also one of
    the values a build returns, unpacked: `net, scale = make_net(f"cfg-{n}")`), which
    die with the call; stores obtained per call (a local, an argument, `ContextVar.get()`);
    bounded accumulation (`self.H[name] = self.H[name] + x.T @ x`, a fixed key
    overwritten); a call of the file's own method on an object the hook's class
    holds (`self.table.add(name, n)` where `self.table = SizeTable()` and `SizeTable`
    defines `add`: that method's business, not a set's), also through attributes and
    items of such objects (`self.mem.tables[i].add(...)` where the file's `Memory`
    binds `tables` to a list of `SizeTable(...)`); a forward pre-hook's push that the forward hook on the same object
    pops (a stack of one entry per forward in flight: HL001 asks about
    `always_call`); a module's own method hooked on its layers whose `self.X` store
    its `forward` (or a method `forward` calls) empties (`self.X.clear()`,
    `self.X = []`, `self.X[key] = []`), or a callable object the module holds
    (`self.saver`) whose store the forward empties (`self.saver.X.clear()`, or a
    method of the object that empties it: `self.saver.reset()`); an object's hooks on
    a module it builds itself (`self.net`, not given to it) that it only ever calls
    outside its construction (`__init__` and the methods it runs, `self._build()`),
    each method that calls it emptying the store; hooks that remove
    themselves (or all hooks) unconditionally on their first call; a recorder's method that stores only under `if self.<flag>:`,
    a flag its class turns on only in `__enter__` (which empties the store) and off in
    `__exit__` (the store holds one `with` window); a hook that stores only while
    the store is empty (`if not self.shapes:`, the `else` of `if len(self.shapes):`,
    after `if self.shapes: return`): it holds one record at a time; a hook that
    empties the store itself before it stores, on every path to the store
    (`module.pieces = []` earlier in the block or a block around it): it holds one
    call's worth; a handle kept in
    a store of an object another module owns (`tracker.run.handles[name] = h`, on
    an imported name), or of one the caller's argument holds under a computed name
    (`cache = getattr(model, self.slot)`): that code's to remove, and this file
    cannot show it. One bug is one finding: hooks registered side by side in one block
    that capture into the same store (the same hook on several layers, the branches of
    one `if` included, each case capturing its own way) are reported at the first
    registration, and the message counts the others.

    Handles are followed as HL004 follows them (see its documentation): bound and
    then appended or stored in a dict, aliased, returned or passed on (the
    caller's), removed through `while hs: hs.pop().remove()`, a loop or a same-file
    helper; bindings are per scope, so another function's `handle.remove()` is
    another handle, and a name bound in each branch of an `if` (`if conv: h =
    reg(a) else: h = reg(b)`) holds the handle of the branch that ran. Three lifetimes end the hook without a removal: a model built in
    the registering call and never handed out takes its hooks with it (not
    flagged; built from literals, literal lists, tuples and dicts, names the function
    does not bind, or its own locals that hold new objects: `cfg = Config(4)`, `Net(cfg,
    [1, 1])`), also the hooks on its parts that a loop walks (`for block in
    model.blocks:`) or a lookup by name finds (`model.get_submodule(name)`), also after
    `model = model.to(device)` (module methods that hand the module back keep the
    object; a binding on its own line of the function's body replaces what the name
    held before), so does a tensor the call computes (an activation, `torch.from_numpy(x)`,
    an element of a model's outputs, through plain aliases, also a tensor parameter of
    a function that every call of the file hands such a tensor; not a parameter looked
    up, `next(model.parameters())`, nor what `p.to(device)` may hand back as `p`;
    and a tensor the statement before binds in this call, `x = layer(x)`, when the
    store is emptied at the start of the call: it holds this call's gradients; a
    tensor a forward hook is handed, its output or inputs, or a part a call picks from
    one, that the hook keeps nowhere, when every registration of that forward hook is
    removed: the taps come and go with the forward hook), and a tensor hook put on a
    module's parameters in every
    `autograd.Function.forward` is HL003's pile-up, not a capture. A handle kept in
    a `self.*` list that no class of the file binds, in a class that extends one from
    another file (`self.handles.append(...)` under a base that creates `handles` and
    a `release_hooks()` that empties it), is that base's to remove: with cross-file
    analysis the base's methods decide (flagged when every base is read and none of
    their methods removes the list, also one no file calls); without it, or with a
    base outside the project, not flagged (`object`, `nn.Module`, `ABC`, `Generic`
    and `Protocol` hold no such list).

    ## Why is this bad?
    The store grows with every forward (or backward) for as long as the hook is
    installed, and each stored tensor can pin the autograd graph behind it.
    llm-compressor's `AutoRoundModifier` registered an input-capture pre-hook on
    every decoding layer and removed the hooks only at calibration end; meanwhile
    the SignSGD tuning loop re-ran each layer, and the hook appended the layer's
    hidden states on every mini-batch: +204 MB per iteration until out of memory.

    ## Example
    ```python
    def extract(model, batch):
        feats = []
        model.layer4.register_forward_hook(lambda m, i, o: feats.append(o.detach()))
        model(batch)
        return torch.cat(feats)
    ```

    ## Use instead
    ```python
    def extract(model, batch):
        feats = []
        with model.layer4.register_forward_hook(lambda m, i, o: feats.append(o.detach())):
            model(batch)
        return torch.cat(feats)
    ```
    For a capture that another method consumes, keep each handle (keyed like the
    store) and remove it before the captured data is consumed:
    ```python
    self._capture_hooks[module.name] = module.register_forward_pre_hook(self.capture)
    ...
    if layer.name in self._capture_hooks:
        self._capture_hooks.pop(layer.name).remove()
    inputs = self._inputs[layer.name]
    ```

    ## Fix safety
    When registration, model run and the read of the capture are all in one
    function, the fix wraps the statements that need the hook in
    `with <registration>:` (a registration loop goes under a
    `contextlib.ExitStack`). This is safe: the hook is removed once nothing in the
    function runs the model any more.
    When the capture is consumed in another method of the class and the store is
    keyed by the hooked module (`self._inputs[module.name].append(...)`), the fix
    keeps each handle in a dict keyed the same way, declared like the store, and
    removes it right before the store's entry is first read. This is unsafe: it
    assumes that the captured data for a key is complete when it is first read.
    Otherwise no fix is offered and the message says what to do.

    ## Options
    `registration-wrappers`: functions and methods of other packages that register
    the hook they are given and return (or keep) its handle, such as
    llm-compressor's `HooksMixin.register_hook`:
    ```toml
    [tool.hooklint]
    registration-wrappers = ["HooksMixin.register_hook"]
    ```
    The last dotted part is matched against the called name
    (`self.register_hook(...)` matches). A call of a wrapper is read as a
    registration whose hook is the first argument that resolves to a hook body,
    whose target is the first other positional argument, and whose kind comes from
    a string argument (`"forward_pre"` is `register_forward_pre_hook`). Wrappers in
    the same file, and in other files of the project (`cross-file = true`, the
    default), are found without it.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py`):
    2 findings, 2 true positives, no false positive (100%): timm's
    `extract_spp_stats` leaves its capture hooks on the caller's model, and one
    brevitas subclass discards the handles its `remove_hooks()` would need.
    """

    code = "HL002"
    name = "capture-hook-not-removed"
    fix_applicability = "safe"
    some_fixes_unsafe = True  # a fix that moves the removal to where another method reads the store

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        # One bug, one finding: hooks of one block that capture into the same store (the
        # same hook on several layers, or the branches of one `if`, each case capturing
        # its own way) are reported at the first.
        groups: dict[tuple, list] = {}
        for finding, registration, store in self._findings(facts):
            block = registering_block(registration.site)
            key = (
                id(registration.site.function),
                id(block.node) if block is not None else None,
                store,
            )
            groups.setdefault(key, []).append((finding, registration))
        for group in groups.values():
            finding = group[0][0]
            others = [registration.call for _, registration in group[1:]]
            if others:
                finding = dataclasses.replace(
                    finding,
                    message=_counted(finding.message, len(others)),
                    related=(*finding.related, *others),
                )
            yield finding

    def _findings(self, facts: ModuleFacts) -> Iterable[tuple[Finding, Registration, str]]:
        for registration in facts.registrations:
            leak = leaking_capture(facts, registration)
            if leak is None:
                continue
            fate = leak.fate
            finding = self._finding(
                facts, registration, leak.hook, leak.found, fate.kind, fate.targets, leak.made, fate.finalizer
            )
            yield with_evidence(finding, registration), registration, leak.found[0].store

    def _finding(
        self,
        facts,
        registration: Registration,
        hook: HookBody,
        found,
        kind,
        kept,
        made: str | None = None,
        finalizer: bool = False,
    ) -> Finding:
        capture = found[0]
        event = _EVENT.get(registration.api.kind, "call")
        if made is not None:
            owner = registration.site.function.name.value  # type: ignore[union-attr]
            lost = "handle discarded" if kind == "discarded" else "handle never removed"
            message = (
                f"capture hook `{hook.name}` stores into `{made}`, new per `{owner}` call; "
                f"{lost}: each call adds a hook"
            )
            edits = with_block(facts, registration, found, kind, kept)
            if edits:
                return Finding(
                    registration.call, message, edits, "Scope the hook to a `with` block around its use"
                )
            return Finding(registration.call, message)
        bulk = bulk_removal(facts, registration.site.class_name)
        if kind == "discarded":
            if registration.wrapper or bulk:
                tail = "its handle is discarded"
            else:
                tail = "its handle is discarded, so it is never removed"
        else:
            names = ", ".join(f"`{t}`" for t in kept)
            tail = f"its handle ({names}) is never removed"
            if finalizer:
                tail = "only `__del__` removes it, which the hook blocks"
        message = f"capture hook `{hook.name}` {capture.verb} `{capture.store}` on every {event}; {tail}"

        edits = with_block(facts, registration, found, kind, kept)
        if edits:
            return Finding(
                registration.call, message, edits, "Scope the hook to a `with` block around its use"
            )
        params = hook.params
        module_param = params[0] if params and registration.api.owner in ("module", "global_module") else None
        for candidate in found:
            if candidate.key is None:
                continue
            edits = keyed_removal(facts, registration, candidate, module_param)
            if edits:
                return Finding(
                    registration.call,
                    message,
                    edits,
                    f"Keep each handle keyed like `{candidate.store}` and remove it before that entry is read",
                    unsafe_fix=True,
                )
        return Finding(registration.call, message)

    VALID = [
        # Each call builds its own network (one of two, picked by an `if`) and hooks a
        # part of it looked up by name: the network and its hook go with the call. (The
        # hook's own parameter named `net` is not the function's `net`.)
        Valid(
            """
import torchvision


def pooled_features(images, size="small", part="avgpool"):
    if size == "small":
        net = torchvision.models.resnet18(weights=None)
    elif size == "large":
        net = torchvision.models.resnet50(weights=None)
    else:
        raise ValueError(size)
    found = {}

    def grab(net, inputs, output):
        found[part] = output.detach()

    getattr(net, part).register_forward_hook(grab)
    net(images)
    return found[part].flatten(1)
"""
        ),
        # The handles go on the model the function is handed (here through its
        # `__dict__`), and a sibling function handed the same model removes them.
        Valid(
            """
from torch import nn


def _keep_grad(layer, grad_input, grad_output):
    layer.__dict__.setdefault("grads", []).append(grad_output[0].detach())


def watch(model):
    handles = [m.register_full_backward_hook(_keep_grad) for m in model.modules() if isinstance(m, nn.Linear)]
    model.__dict__.setdefault("watch_handles", []).extend(handles)


def unwatch(model):
    for handle in model.watch_handles:
        handle.remove()
    del model.watch_handles
"""
        ),
        Valid(
            """
def _keep(module, args, output):
    module.outputs.append(output.detach())


def watch(model):
    model.watch_handles = [m.register_forward_hook(_keep) for m in model.children()]


def unwatch(model):
    for handle in model.watch_handles:
        handle.remove()
"""
        ),
        # A compiler hook receives code objects, not activations: a process-wide hook
        # never removed is HL009's finding, not a capture.
        Valid(
            """
import torch


class CodeLog:
    def __init__(self):
        self.seen = []
        torch._dynamo.convert_frame.register_bytecode_hook(self._log)

    def _log(self, old_code, new_code):
        self.seen.append(new_code)
"""
        ),
        # A factory nested in the function builds each hook over the call's dict, and
        # the hooks come off in `finally`.
        Valid(
            """
def block_maps(net, batch):
    maps = {}

    def recorder(label):
        def record(module, args, output):
            maps[label] = output.detach()

        return record

    handles = [block.register_forward_hook(recorder(label)) for label, block in net.named_children()]
    try:
        net(batch)
    finally:
        for handle in handles:
            handle.remove()
    return maps
"""
        ),
        # The name first holds a shared model (read for its layer names), then, on its
        # own line, the model this call loads: the hooks go on the loaded one.
        Valid(
            """
from transformers import AutoModel


def first_token_states(checkpoint, registry, names, batches):
    model = registry.lookup(checkpoint)
    layer_names = [model.layer_name(n) for n in names]
    model = AutoModel.from_pretrained(checkpoint)
    states = []
    for name in layer_names:
        model.get_submodule(name).register_forward_hook(lambda m, a, out: states.append(out[:, 0]))
    for batch in batches:
        model(**batch)
    return states
"""
        ),
        # The object builds its backbone and taps it in helpers its constructor runs;
        # the one method that runs the backbone empties what the taps kept.
        Valid(
            """
import torch
from torch import nn


class PatchScorer:
    def __init__(self):
        self._make_backbone()
        self._tap_layers()

    def _make_backbone(self):
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 8, 3))
        self.backbone.eval()

    def _tap_layers(self):
        self.maps = []
        self.backbone[0].register_forward_hook(lambda m, a, out: self.maps.append(out))
        self.backbone[2].register_forward_hook(lambda m, a, out: self.maps.append(out))

    def score(self, image):
        with torch.no_grad():
            self.backbone(image)
        low, high = self.maps
        self.maps.clear()
        return float(low.mean() + high.mean())
"""
        ),
        # A helper hooks the tensor it is given; its one caller hands it each step's new
        # state, an activation that goes (hook and all) once backward is done.
        Valid(
            """
import torch


def record_grad_norm(tensor, norms):
    def keep(grad):
        norms.append(float(grad.norm()))

    tensor.register_hook(keep)


def unrolled_norms(cell, inputs, steps):
    norms = []
    state = torch.zeros(1, 8)
    for x in inputs[:steps]:
        state = cell(x, state)
        record_grad_norm(state, norms)
    state.sum().backward()
    return norms
"""
        ),
        # `__exit__` takes the hooks off without their handles, through a helper of the
        # file that empties each part's forward-hook dict.
        Valid(
            """
def strip_forward_hooks(net):
    for part in net.modules():
        part._forward_hooks.clear()


class RecordShapes:
    def __init__(self, net):
        self.net = net
        self.shapes = []

    def _keep(self, module, args, output):
        self.shapes.append(tuple(output.shape))

    def __enter__(self):
        for part in self.net.modules():
            part.register_forward_hook(self._keep)
        return self.shapes

    def __exit__(self, *exc):
        strip_forward_hooks(self.net)
"""
        ),
        # Moving the model this call loads (`encoder = encoder.to(device).eval()`) keeps
        # the same object: the hook still goes with it.
        Valid(
            """
from transformers import AutoModel


def pooled_outputs(checkpoint, texts, device):
    encoder = AutoModel.from_pretrained(checkpoint)
    encoder = encoder.to(device).eval()
    pooled = []
    encoder.pooler.register_forward_hook(lambda m, a, out: pooled.append(out.detach().cpu()))
    for batch in texts:
        encoder(**batch)
    return pooled
"""
        ),
        # The parts hooked are looked up by name in a model this call loads and never
        # hands out: the hooks and what they keep go with it.
        Valid(
            """
from transformers import AutoModel


def layer_outputs(checkpoint, names, batches):
    net = AutoModel.from_pretrained(checkpoint)
    seen = {name: [] for name in names}
    for name in names:
        net.get_submodule(name).register_forward_hook(lambda m, a, out, name=name: seen[name].append(out.detach()))
    for batch in batches:
        net(**batch)
    return seen
"""
        ),
        # The extractor builds its own backbone, only ever calls it, and takes what the
        # hooks captured on every call: the store holds one call's maps.
        Valid(
            """
import torch


class PatchFeatures:
    def __init__(self):
        self.maps = []
        self.backbone = None
        self._build()

    def _build(self):
        self.backbone = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.Conv2d(8, 8, 3))
        self.backbone.eval()

        def collect(module, args, output):
            self.maps.append(output)

        self.backbone[0].register_forward_hook(collect)
        self.backbone[1].register_forward_hook(collect)

    def __call__(self, images):
        with torch.no_grad():
            self.backbone(images)
        maps, self.maps = self.maps, []
        return maps
"""
        ),
        # The hook starts its store anew on every call before filling it: it holds the
        # last forward's pieces, never more.
        Valid(
            """
def keep_pieces(module, args, output):
    module.pieces = []
    for piece in output:
        module.pieces.append(piece.detach())


def attach(model):
    for block in model.children():
        block.register_forward_hook(keep_pieces)
"""
        ),
        # The hook remembers what kind of output it could not cast (`type(output)`):
        # a few kinds, each once, not what it received; the hook is meant to stay.
        Valid(
            """
import logging

log = logging.getLogger(__name__)


def cast_outputs(model):
    reported = set()

    def to_float(module, args, output):
        if hasattr(output, "float"):
            return output.float()
        kind = type(output)
        if kind not in reported:
            reported.add(kind)
            log.warning("left %s as it was", kind.__name__)
        return output

    model.register_forward_hook(to_float)
    return model
"""
        ),
        # A forward hook that puts a gradient tap on the output it is handed, and keeps
        # that output nowhere: the tap dies with the tensor, and the taps come only while
        # the forward hook is on, which `release()` takes off.
        Valid(
            """
class GradTaps:
    def __init__(self, layer):
        self.grads = []
        self.handles = [layer.register_forward_hook(self._on_forward)]

    def _on_forward(self, module, inputs, output):
        if not output.requires_grad:
            return

        def keep(grad):
            self.grads.append(grad.detach())

        output.register_hook(keep)

    def run(self, model, x):
        self.grads = []
        return model(x)

    def release(self):
        for handle in self.handles:
            handle.remove()
"""
        ),
        # A tensor hook on a tensor this call computes (a conversion of its argument,
        # read back after one backward): the hook goes when the tensor does.
        Valid(
            """
import torch


def saliency(model, array):
    inputs = torch.from_numpy(array).float()
    inputs.requires_grad_(True)
    scores = model(inputs)
    grads = []
    inputs.register_hook(lambda grad: grads.append(grad.abs()))
    scores[:, 0].sum().backward()
    return grads[0]
"""
        ),
        # The same on an element of the model's outputs.
        Valid(
            """
def output_gradients(model, batch, index):
    outputs = model(batch)
    chosen = outputs[index]
    seen = []
    chosen.register_hook(lambda grad: seen.append(grad.detach()))
    outputs[-1].sum().backward()
    return seen
"""
        ),
        # The handles go into a module-level book whose own method removes them all.
        Valid(
            """
class HookBook:
    def __init__(self):
        self.entries = {}

    def close_all(self):
        for handle in self.entries.values():
            handle.remove()
        self.entries = {}


BOOK = HookBook()


class Tracer:
    def __init__(self):
        self.seen = []

    def watch(self, model):
        for name, child in model.named_children():
            handle = child.register_forward_hook(lambda m, a, o: self.seen.append(o.detach()))
            BOOK.entries[name] = handle
"""
        ),
        # Keyed by the hooked module's identity: one slot per module, rewritten on each forward.
        Valid(
            """
class ShapeTable:
    def __init__(self):
        self.shapes = {}

    def _note(self, module, args, output):
        self.shapes[id(module)] = tuple(output.shape)

    def attach(self, model):
        for child in model.children():
            child.register_forward_hook(self._note)
"""
        ),
        # The handle is dropped, but the teardown takes the hook out of the module's own hook
        # dict, which needs no handle.
        Valid(
            """
class Tap:
    def __init__(self):
        self.seen = []

    def __call__(self, module, args, output):
        self.seen.append(output.detach())


class Probe:
    def __init__(self, layer):
        self.layer = layer
        self.tap = Tap()
        layer.register_forward_hook(self.tap)

    def close(self):
        for key, hook in list(self.layer._forward_hooks.items()):
            if hook is self.tap:
                del self.layer._forward_hooks[key]
"""
        ),
        # One loop removes two stores run one after the other (`a + b`, `chain(a, b)`).
        Valid(
            """
class Tracer:
    def __init__(self, model):
        self.model = model
        self.outputs = []
        self.grads = []
        self.seen = []

    def _keep_out(self, module, args, output):
        self.seen.append(output.detach())

    def _keep_grad(self, module, grad_in, grad_out):
        self.seen.append(grad_out[0].detach())

    def attach(self):
        for module in self.model.children():
            self.outputs.append(module.register_forward_hook(self._keep_out))
            self.grads.append(module.register_full_backward_hook(self._keep_grad))

    def detach(self):
        for handle in self.outputs + self.grads:
            handle.remove()
"""
        ),
        # The handle taken off the instance by a swap (`h, self._h = self._h, None`), then
        # removed: the local name and the attribute hold the same handle.
        Valid(
            """
class Recorder:
    def __init__(self, module):
        self.module = module
        self.samples = []
        self._handle = None

    def install(self):
        self._handle = self.module.register_forward_pre_hook(self._record)

    def _record(self, module, args):
        self.samples.append(args[0].detach())

    def _remove_hook(self):
        handle, self._handle = self._handle, None
        if handle is not None:
            handle.remove()
"""
        ),
        # A module hooks its own blocks and empties what they captured in its own forward
        # (through `self._fuse`): the list holds one forward's outputs at most.
        Valid(
            """
import torch
from torch import nn

class Encoder(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = blocks
        self._taps = []
        for block in self.blocks:
            block.register_forward_hook(self._tap)

    def _tap(self, module, args, output):
        self._taps.append(output)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self._fuse(x)

    def _fuse(self, x):
        taps = torch.stack(self._taps)
        self._taps.clear()
        return x + taps.sum(0)
"""
        ),
        # A pre-hook pushes the input length and the forward hook on the same module pops
        # it: one entry per forward in flight (HL001's question if it lacks always_call).
        Valid(
            """
def _push_len(module, args):
    module.lengths.append(args[0].shape[1])

def _trim(module, args, output):
    length = module.lengths.pop()
    return output[:, :length]

def attach(decoder):
    decoder.lengths = []
    decoder.register_forward_pre_hook(_push_len)
    decoder.register_forward_hook(_trim, always_call=True)
"""
        ),
        # Handles bound, appended to a list, and the list returned: the caller owns them.
        Valid(
            """
def feature_hooks(model, feats):
    handles = []
    for module in model.children():
        h = module.register_forward_hook(lambda m, i, o: feats.append(o))
        handles.append(h)
    return handles
"""
        ),
        # The list is reached through an alias and emptied with a while/pop loop in another method.
        Valid(
            """
class Tap:
    def __init__(self, model):
        self.model = model
        self.seen = []

    def _keep(self, module, args, output):
        self.seen.append(output.detach())

    def attach(self):
        self.model.tap_handles = []
        self.taps = self.model.tap_handles
        for module in self.model.children():
            self.model.tap_handles.append(module.register_forward_hook(self._keep))

    def detach(self):
        while self.taps:
            self.taps.pop().remove()
"""
        ),
        # A network built in this call and never handed out: its hooks die with it.
        Valid(
            """
import torch

def describe(images):
    feats = []
    net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    net[1].register_forward_hook(lambda m, i, o: feats.append(o))
    for image in images:
        net(image)
    return len(feats)
"""
        ),
        # The build hands back the network with its input scale; both stay in this call.
        Valid(
            """
import timm

def feature_norms(images, size):
    norms = []
    net, scale = timm.create_model_and_scale(f"resnet{size}")
    net.layer1.register_forward_hook(lambda m, i, o: norms.append(o.norm()))
    for image in images:
        net(image * scale)
    return norms
"""
        ),
        # Removed through `with`: the hook lives only while the model runs.
        Valid(
            """
import torch

def penultimate_features(model, images):
    feats = []
    with model.avgpool.register_forward_hook(lambda m, i, o: feats.append(o.flatten(1))):
        model(images)
    return torch.cat(feats)
"""
        ),
        # Handles kept in a list and removed in `finally` by a helper.
        Valid(
            """
def remove_handles(handles):
    for handle in handles:
        handle.remove()

class ActivationRecorder:
    def __init__(self, model):
        self.model = model
        self.records = {}

    def _record(self, name, module, args, output):
        self.records.setdefault(name, []).append(output.detach().cpu())

    def run(self, batch):
        handles = []
        try:
            for name, module in self.model.named_modules():
                handles.append(module.register_forward_hook(functools.partial(self._record, name)))
            return self.model(batch)
        finally:
            remove_handles(handles)
"""
        ),
        # Handles entered into an ExitStack.
        Valid(
            """
import contextlib

def collect_inputs(model, layers, batch):
    inputs = []
    with contextlib.ExitStack() as stack:
        for layer in layers:
            stack.enter_context(layer.register_forward_pre_hook(lambda m, args: inputs.append(args[0])))
        model(batch)
    return inputs
"""
        ),
        # Bounded accumulation: a running Hessian per module (GPTQ's shape), never grows.
        Valid(
            """
class HessianObserver(HooksMixin):
    def calibrate_module(self, module, args, _output):
        inp = args[0]
        if module not in self._num_samples:
            self._hessians[module] = make_empty_hessian(module)
            self._num_samples[module] = 0
        self._hessians[module], self._num_samples[module] = accumulate_hessian(
            inp, module, self._hessians[module], self._num_samples[module]
        )

    def on_calibration_start(self, model):
        for module in model.modules():
            self.register_hook(module, self.calibrate_module, "forward")

    def on_calibration_end(self, model):
        self.remove_hooks()
"""
        ),
        # Bounded: a fixed key overwritten, and a running sum replaced.
        Valid(
            """
class Stats:
    def __init__(self, model):
        self.last = {}
        self.sq_sum = {}
        for name, module in model.named_modules():
            module.register_forward_hook(partial(self.observe, name))

    def observe(self, name, module, args, output):
        self.last[name] = output.detach()
        self.sq_sum[name] = self.sq_sum.get(name, 0) + output.pow(2).sum()
"""
        ),
        # A store obtained per call: nothing accumulates across calls.
        Valid(
            """
from contextvars import ContextVar

_current = ContextVar("current_trace")

def trace_hook(module, args, output):
    buffer = _current.get()
    buffer.append(output.shape)

def install(model):
    for module in model.modules():
        module.register_forward_hook(trace_hook)
"""
        ),
        # A hook that removes itself on its first (certain) call.
        Valid(
            """
class FirstBatchCatcher:
    def __init__(self, model):
        self.batches = []
        self.handle = model.register_forward_pre_hook(self.catch)

    def catch(self, module, args):
        self.batches.append(args)
        self.handle.remove()
"""
        ),
        # The handle is returned: removing it is the caller's job.
        Valid(
            """
def attach_probe(module, store):
    return module.register_forward_hook(lambda m, i, o: store.append(o.detach()))
"""
        ),
        # Handles kept on the caller's object; a teardown function of this file removes
        # that attribute of its parameter of the same name (through `getattr`, too).
        Valid(
            """
def install(session, modules, log):
    for module in modules:
        def note(m, args, output):
            log.append(output.shape)

        session.handles.append(module.register_forward_hook(note))

def uninstall(session):
    for handle in session.handles:
        remove = getattr(handle, "remove", None)
        if remove is not None:
            remove()
    session.handles.clear()
"""
        ),
        # The handle list is a base class's (imported: its file defines the list and the
        # method that empties it, which the callers run): nothing here says it is kept.
        Valid(
            """
from .trackers import TrackerBase


class InputTracker(TrackerBase):
    def attach(self):
        def record(module, args, output):
            self.inputs.append(args[0].detach())

        self.handles.append(self.module.register_forward_hook(record))
"""
        ),
        # Hooking to hand out a live view: the function runs nothing, the caller reads
        # `latest` after its own forwards (one hook per call of an installer, on purpose).
        Valid(
            """
def watch_head(model):
    latest = {}

    def hook(module, args, output):
        latest["head"] = output.detach()

    model.head.register_forward_hook(hook)
    return latest
"""
        ),
        # A recorder kept on the module for good: it stores only inside a `with` window,
        # which starts with an empty buffer.
        Valid(
            """
class ActivationRecorder:
    def __init__(self, layer):
        self.active = False
        self.seen = []
        layer.register_forward_hook(self._keep)

    def _keep(self, module, args, output):
        if self.active:
            self.seen.append(output.detach())

    def __enter__(self):
        self.seen = []
        self.active = True
        return self

    def __exit__(self, *exc):
        self.active = False
"""
        ),
        # `__del__` can run here: the hook is a function handed the list, not the object.
        Valid(
            """
from functools import partial


def keep(outputs, module, inputs, output):
    outputs.append(output.detach())


class ActivationMap:
    def __init__(self, layer):
        self.outputs = []
        self.handles = [layer.register_forward_hook(partial(keep, self.outputs))]

    def __del__(self):
        for handle in self.handles:
            handle.remove()
"""
        ),
        # A module keeps a tap object as its hook and empties it, through the
        # tap's own method, in every forward: one forward's outputs at most.
        Valid(
            """
import torch
from torch import nn


class Tap:
    def __init__(self):
        self.by_device = {}

    def __call__(self, module, inputs, output):
        self.by_device.setdefault(output.device, []).append(output)

    def reset(self, device):
        self.by_device[device] = []


class MultiScale(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = blocks
        self.tap = Tap()
        for block in self.blocks:
            block.register_forward_hook(self.tap)

    def forward(self, x):
        self.blocks(x)
        features = torch.cat(self.tap.by_device[x.device], dim=1)
        self.tap.reset(x.device)
        return features
"""
        ),
        # A test builds its own model (from a local config and literal arguments), hooks
        # the blocks it walks, runs it once and drops it: the hooks go with the model.
        Valid(
            """
import torch
from torch import nn


class Stack(nn.Module):
    def __init__(self, widths, scale):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(w, w) for w in widths)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def test_every_block_runs():
    options = dict(scale=0.5)
    model = Stack([4, 4, 4], options).eval()
    seen = []
    for block in model.blocks:
        block.register_forward_hook(lambda module, args, out: seen.append(out.shape))
    model(torch.zeros(1, 4))
    assert len(seen) == 3
"""
        ),
        # `add` here is the file's own method, which keeps one entry per layer name.
        Valid(
            """
from functools import partial


class SizeTable:
    def __init__(self):
        self.sizes = {}

    def add(self, name, size):
        self.sizes[name] = size


class SizeProfiler:
    def __init__(self, model):
        self.table = SizeTable()
        for name, module in model.named_modules():
            module.register_forward_hook(partial(self._record, name))

    def _record(self, name, module, args, output):
        self.table.add(name, output.numel())
"""
        ),
        # The table is reached through another object of the file, one per model chunk:
        # `add` is still the file's own method, keyed by layer name.
        Valid(
            """
from functools import partial


class SizeTable:
    def __init__(self):
        self.sizes = {}

    def add(self, name, size):
        self.sizes[name] = size


class ChunkTables:
    def __init__(self, chunks):
        self.tables = [SizeTable() for _ in range(chunks)]


class ChunkProfiler:
    def __init__(self, chunks):
        self.memory = ChunkTables(len(chunks))
        for index, chunk in enumerate(chunks):
            for name, module in chunk.named_modules():
                module.register_forward_hook(partial(self._record, index, name))

    def _record(self, index, name, module, args, output):
        self.memory.tables[index].add(name, output.numel())
"""
        ),
        # The hook keeps the first output's shape only: the list never holds more.
        Valid(
            """
class FirstShape:
    def __init__(self, module):
        self.shapes = []
        module.register_forward_hook(self._keep)

    def _keep(self, module, args, output):
        if not self.shapes:
            self.shapes.append(tuple(output.shape))
"""
        ),
        # Each call starts `self.grads` anew and hooks the activations it computes: the
        # hooks go with them, and the list holds one call's gradients.
        Valid(
            """
class GradTap:
    def __init__(self, net, names):
        self.net = net
        self.names = set(names)
        self.grads = []

    def _keep(self, grad):
        self.grads.append(grad)

    def __call__(self, x):
        self.grads = []
        for name, layer in self.net.named_children():
            x = layer(x)
            if name in self.names:
                x.register_hook(self._keep)
        return x
"""
        ),
        # The handle goes into a registry another module owns (and removes from).
        Valid(
            """
import telemetry


def watch(model, sizes):
    def record(module, args, output):
        sizes.append(output.numel())

    for name, child in model.named_children():
        telemetry.session.handles[name] = child.register_forward_hook(record)
"""
        ),
        # One handle or the other, by the module's type, handed back to the caller.
        Valid(
            """
from torch import nn


class ShapeProbe:
    def __init__(self):
        self.shapes = []

    def attach(self, module):
        if isinstance(module, nn.Conv2d):
            handle = module.register_forward_hook(self._conv)
        else:
            handle = module.register_forward_hook(self._other)
        return handle

    def _conv(self, module, args, output):
        self.shapes.append(tuple(output.shape))

    def _other(self, module, args, output):
        self.shapes.append(output.dim())
"""
        ),
        # The handle passes through a local on its way to the caller's model, whose
        # list another function of the file removes.
        Valid(
            """
class Keep:
    def __init__(self, store):
        self.store = store

    def __call__(self, module, args, output):
        self.store.append(output.detach())


def start_capture(model):
    model.outs = []
    model.hooks = []
    for layer in model.children():
        h = layer.register_forward_hook(Keep(model.outs))
        model.hooks.append(h)


def stop_capture(model):
    for h in model.hooks:
        h.remove()
    model.hooks = []
"""
        ),
        # The handles go into a dict kept on the caller's model under a name the file
        # computes: whatever reads that attribute back may remove them.
        Valid(
            """
class Collect:
    def __init__(self, slot):
        self.slot = slot

    def __call__(self, model):
        setattr(model, self.slot, {"outs": [], "handles": []})
        cache = getattr(model, self.slot)

        def keep(module, args, output):
            cache["outs"].append(output.detach())

        for layer in model.children():
            cache["handles"].append(layer.register_forward_hook(keep))
"""
        ),
    ]
    INVALID = [
        # The same lookup by name on the caller's model: each call leaves one more hook
        # on that part, each holding the dict of its own call.
        Invalid(
            """
def pooled_features(model, images, part="avgpool"):
    found = {}

    def grab(module, inputs, output):
        found[part] = output.detach()

    getattr(model, part).register_forward_hook(grab)
    model(images)
    return found[part].flatten(1)
""",
            line=7,
            expected="""
def pooled_features(model, images, part="avgpool"):
    found = {}

    def grab(module, inputs, output):
        found[part] = output.detach()

    with getattr(model, part).register_forward_hook(grab):
        model(images)
    return found[part].flatten(1)
""",
        ),
        # The layer is handed in beside the model it belongs to, and the function runs
        # the model: each call leaves one more hook on the layer, holding that call's dict.
        Invalid(
            """
def layer_output(net, layer, x):
    kept = {}

    def keep(module, args, output):
        kept["out"] = output.detach()

    layer.register_forward_hook(keep)
    net(x)
    return kept["out"]
""",
            line=7,
            expected="""
def layer_output(net, layer, x):
    kept = {}

    def keep(module, args, output):
        kept["out"] = output.detach()

    with layer.register_forward_hook(keep):
        net(x)
    return kept["out"]
""",
        ),
        # Each layer's handles go into a list kept under its name
        # (`setdefault(name, []).append(...)`): nothing ever removes them.
        Invalid(
            """
class ActivationLog:
    def __init__(self):
        self.by_layer = {}
        self.outputs = []

    def watch(self, name, module):
        self.by_layer.setdefault(name, []).append(module.register_forward_hook(self._log))

    def _log(self, module, args, output):
        self.outputs.append(output.detach())
""",
            line=7,
            expected=None,
            message="its handle (`self.by_layer`) is never removed",
        ),
        # Here the shared model may replace the loaded one (under an `if`): the hooks may
        # stay on the registry's model after the call.
        Invalid(
            """
from transformers import AutoModel


def first_token_states(checkpoint, registry, names, batches):
    model = AutoModel.from_pretrained(checkpoint)
    if registry is not None:
        model = registry.lookup(checkpoint)
    states = []
    for name in names:
        model.get_submodule(name).register_forward_hook(lambda m, a, out: states.append(out[:, 0]))
    for batch in batches:
        model(**batch)
    return states
""",
            line=10,
            expected="""
from transformers import AutoModel
import contextlib


def first_token_states(checkpoint, registry, names, batches):
    model = AutoModel.from_pretrained(checkpoint)
    if registry is not None:
        model = registry.lookup(checkpoint)
    states = []
    with contextlib.ExitStack() as stack:
        for name in names:
            stack.enter_context(model.get_submodule(name).register_forward_hook(lambda m, a, out: states.append(out[:, 0])))
        for batch in batches:
            model(**batch)
    return states
""",
        ),
        # The same scorer that reads the last two maps and keeps the rest: the list grows
        # by two tensors on every call.
        Invalid(
            """
import torch
from torch import nn


class PatchScorer:
    def __init__(self):
        self._make_backbone()
        self._tap_layers()

    def _make_backbone(self):
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 8, 3))
        self.backbone.eval()

    def _tap_layers(self):
        self.maps = []
        self.backbone[0].register_forward_hook(lambda m, a, out: self.maps.append(out))
        self.backbone[2].register_forward_hook(lambda m, a, out: self.maps.append(out))

    def score(self, image):
        with torch.no_grad():
            self.backbone(image)
        low, high = self.maps[-2:]
        return float(low.mean() + high.mean())
""",
            line=16,
        ),
        # The same helper given the model's weights, which live on: every call adds one
        # more hook to each weight, and each keeps appending.
        Invalid(
            """
def record_grad_norm(tensor, norms):
    def keep(grad):
        norms.append(float(grad.norm()))

    tensor.register_hook(keep)


def watch_weights(model, norms):
    for weight in model.parameters():
        record_grad_norm(weight, norms)
""",
            line=5,
        ),
        # The same recorder whose `__exit__` only drops the list: every `with` adds one
        # more hook to each part, and all of them keep appending.
        Invalid(
            """
class RecordShapes:
    def __init__(self, net):
        self.net = net
        self.shapes = []

    def _keep(self, module, args, output):
        self.shapes.append(tuple(output.shape))

    def __enter__(self):
        for part in self.net.modules():
            part.register_forward_hook(self._keep)
        return self.shapes

    def __exit__(self, *exc):
        self.shapes = []
""",
            line=11,
        ),
        # The same move of the caller's model: the hook stays on it after the call.
        Invalid(
            """
def pooled_outputs(encoder, texts, device):
    encoder = encoder.to(device).eval()
    pooled = []
    encoder.pooler.register_forward_hook(lambda m, a, out: pooled.append(out.detach().cpu()))
    for batch in texts:
        encoder(**batch)
    return pooled
""",
            line=4,
            expected="""
def pooled_outputs(encoder, texts, device):
    encoder = encoder.to(device).eval()
    pooled = []
    with encoder.pooler.register_forward_hook(lambda m, a, out: pooled.append(out.detach().cpu())):
        for batch in texts:
            encoder(**batch)
    return pooled
""",
        ),
        # The same lookup on the caller's model: every call leaves one more hook per name.
        Invalid(
            """
def layer_outputs(net, names, batches):
    seen = {name: [] for name in names}
    for name in names:
        net.get_submodule(name).register_forward_hook(lambda m, a, out, name=name: seen[name].append(out.detach()))
    for batch in batches:
        net(batch)
    return seen
""",
            line=4,
            expected="""
import contextlib

def layer_outputs(net, names, batches):
    seen = {name: [] for name in names}
    with contextlib.ExitStack() as stack:
        for name in names:
            stack.enter_context(net.get_submodule(name).register_forward_hook(lambda m, a, out, name=name: seen[name].append(out.detach())))
        for batch in batches:
            net(batch)
    return seen
""",
        ),
        # The same extractor on a backbone it is given: whoever else runs the backbone
        # fills the store, and the hooks stay on the caller's model. One finding for the
        # two layers hooked into one store.
        Invalid(
            """
import torch


class PatchFeatures:
    def __init__(self, backbone):
        self.maps = []
        self.backbone = backbone

        def collect(module, args, output):
            self.maps.append(output)

        self.backbone[0].register_forward_hook(collect)
        self.backbone[1].register_forward_hook(collect)

    def __call__(self, images):
        with torch.no_grad():
            self.backbone(images)
        maps, self.maps = self.maps, []
        return maps
""",
            line=12,
            message="capture hook `collect` appends to `self.maps` on every forward; its handle is discarded (and 1 more",
        ),
        # The store is set up empty only once (`if not hasattr`): every later call
        # appends to what the earlier ones left.
        Invalid(
            """
def keep_pieces(module, args, output):
    if not hasattr(module, "pieces"):
        module.pieces = []
    for piece in output:
        module.pieces.append(piece.detach())


def attach(model):
    for block in model.children():
        block.register_forward_hook(keep_pieces)
""",
            line=10,
            message="capture hook `keep_pieces` appends to `module.pieces` on every forward",
        ),
        # The same hook keyed by `id(output)`: a new entry for every output.
        Invalid(
            """
import logging

log = logging.getLogger(__name__)


def cast_outputs(model):
    reported = set()

    def to_float(module, args, output):
        if hasattr(output, "float"):
            return output.float()
        kind = id(output)
        if kind not in reported:
            reported.add(kind)
            log.warning("left %s as it was", kind)
        return output

    model.register_forward_hook(to_float)
    return model
""",
            line=18,
            message="capture hook `to_float` adds to `reported` on every forward",
        ),
        # The same tap, but the forward hook also keeps the output: each kept output
        # keeps its tap, and `release()` empties nothing.
        Invalid(
            """
class GradTaps:
    def __init__(self, layer):
        self.grads = []
        self.handles = [layer.register_forward_hook(self._on_forward)]

    def _on_forward(self, module, inputs, output):
        self.outputs.append(output)
        if not output.requires_grad:
            return

        def keep(grad):
            self.grads.append(grad.detach())

        output.register_hook(keep)

    def run(self, model, x):
        self.grads = []
        return model(x)

    def release(self):
        for handle in self.handles:
            handle.remove()
""",
            line=14,
            message="capture hook `keep` appends to `self.grads` on every backward",
        ),
        # A gradient tap that puts each gradient in front of the ones before it: the list
        # is rebuilt longer on every backward, and the handle is dropped.
        Invalid(
            """
class GradientTap:
    def __init__(self, layer):
        self.grads = []
        layer.register_full_backward_hook(self._keep)

    def _keep(self, module, grad_input, grad_output):
        self.grads = [grad_output[0].detach()] + self.grads
""",
            line=4,
            message="concatenates onto `self.grads`",
        ),
        # `embedding` comes from a loop variable's method, not a build: the caller's
        # model keeps the hooks.
        Invalid(
            """
def watch_embeddings(model, seen):
    def record(module, args, output):
        seen.append(output.detach())

    for block in model.children():
        embedding = block.get_input_embeddings()
        embedding.register_forward_hook(record)
""",
            line=7,
            message="capture hook `record` appends to `seen` on every forward; its handle is discarded",
        ),
        # Under a fixed attribute, nothing in the file removes `model.capture`'s handles.
        Invalid(
            """
class Collect:
    def __call__(self, model):
        model.capture = {"outs": [], "handles": []}
        cache = model.capture

        def keep(module, args, output):
            cache["outs"].append(output.detach())

        for layer in model.children():
            cache["handles"].append(layer.register_forward_hook(keep))
""",
            line=10,
            message="capture hook `keep` appends to `cache` on every forward; its handle (`model.capture`)",
        ),
        # Nothing in the file removes `model.hooks`.
        Invalid(
            """
class Keep:
    def __init__(self, store):
        self.store = store

    def __call__(self, module, args, output):
        self.store.append(output.detach())


def start_capture(model):
    model.outs = []
    model.hooks = []
    for layer in model.children():
        h = layer.register_forward_hook(Keep(model.outs))
        model.hooks.append(h)
""",
            line=13,
            message="capture hook `Keep.__call__` appends to `self.store` on every forward",
        ),
        # Here the second registration runs after the first and takes the name: the
        # first handle is lost, and only the second goes back to the caller.
        Invalid(
            """
from torch import nn


class ShapeProbe:
    def __init__(self):
        self.shapes = []

    def attach(self, module):
        handle = module.register_forward_hook(self._conv)
        if not isinstance(module, nn.Conv2d):
            handle = module.register_forward_hook(self._other)
        return handle

    def _conv(self, module, args, output):
        self.shapes.append(tuple(output.shape))

    def _other(self, module, args, output):
        self.shapes.append(output.dim())
""",
            line=9,
            message="capture hook `_conv` appends to `self.shapes` on every forward; its handle (`handle`)",
        ),
        # Without the reset, every call's gradients stay in `self.grads`.
        Invalid(
            """
class GradTap:
    def __init__(self, net, names):
        self.net = net
        self.names = set(names)
        self.grads = []

    def _keep(self, grad):
        self.grads.append(grad)

    def __call__(self, x):
        for name, layer in self.net.named_children():
            x = layer(x)
            if name in self.names:
                x.register_hook(self._keep)
        return x
"""
        ),
        # The same chain, but the other object holds plain lists: every forward appends.
        Invalid(
            """
from functools import partial


class ChunkLogs:
    def __init__(self, chunks):
        self.logs = [[] for _ in range(chunks)]


class ChunkProfiler:
    def __init__(self, chunks):
        self.memory = ChunkLogs(len(chunks))
        for index, chunk in enumerate(chunks):
            for name, module in chunk.named_modules():
                module.register_forward_hook(partial(self._record, index, name))

    def _record(self, index, name, module, args, output):
        self.memory.logs[index].append(output.numel())
"""
        ),
        # A tensor hook on one of the model's parameters (looked up, not computed): it
        # stays after the call, and every later backward appends to the list it holds.
        Invalid(
            """
def first_weight_grads(model, batch):
    grads = []
    weight = next(model.parameters())
    weight.register_hook(lambda grad: grads.append(grad.clone()))
    model(batch).sum().backward()
    return grads
""",
            expected="""
def first_weight_grads(model, batch):
    grads = []
    weight = next(model.parameters())
    with weight.register_hook(lambda grad: grads.append(grad.clone())):
        model(batch).sum().backward()
    return grads
""",
            line=4,
            message="capture hook `<lambda>` appends to `grads` on every backward",
        ),
        # The same book with no method that removes what it holds.
        Invalid(
            """
class HookBook:
    def __init__(self):
        self.entries = {}


BOOK = HookBook()


class Tracer:
    def __init__(self):
        self.seen = []

    def watch(self, model):
        for name, child in model.named_children():
            handle = child.register_forward_hook(lambda m, a, o: self.seen.append(o.detach()))
            BOOK.entries[name] = handle
""",
            line=15,
            message="its handle (`BOOK.entries`, `handle`) is never removed",
        ),
        # Keyed by the output's identity: every forward makes a new tensor, so a new key.
        Invalid(
            """
class OutputTable:
    def __init__(self):
        self.outputs = {}

    def _note(self, module, args, output):
        self.outputs[id(output)] = output.detach()

    def attach(self, model):
        for child in model.children():
            child.register_forward_hook(self._note)
""",
            line=10,
            message="adds a new key to `self.outputs`",
        ),
        # A callable object kept on `self` is the hook: emptying its list per run bounds one
        # probe, but every probe ever built keeps its hook appending on later forwards.
        Invalid(
            """
class Tap:
    def __init__(self):
        self.seen = []

    def __call__(self, module, args, output):
        self.seen.append(output)


class Probe:
    def __init__(self, model, names):
        self.model = model
        self.tap = Tap()
        for name in names:
            model.get_submodule(name).register_forward_hook(self.tap)

    def collect(self, batch):
        self.tap.seen = []
        self.model(batch)
        return self.tap.seen
""",
            line=14,
            message="capture hook `Tap.__call__` appends to `self.seen`",
        ),
        # The same object through a local name, handed back to the caller without its handles.
        Invalid(
            """
class Tap:
    def __init__(self):
        self.seen = []

    def __call__(self, module, args, output):
        self.seen.append(output.detach())


def watch(layers):
    tap = Tap()
    for layer in layers:
        layer.register_forward_hook(tap)
    return tap
""",
            line=12,
            message="its handle is discarded, so it is never removed",
        ),
        # The chained loop leaves out the store the backward hooks' handles went into.
        Invalid(
            """
import itertools


class Tracer:
    def __init__(self, model):
        self.model = model
        self.outputs = []
        self.grads = []
        self.seen = []

    def _keep_out(self, module, args, output):
        self.seen.append(output.detach())

    def _keep_grad(self, module, grad_in, grad_out):
        self.seen.append(grad_out[0].detach())

    def attach(self):
        for module in self.model.children():
            self.outputs.append(module.register_forward_hook(self._keep_out))
            self.grads.append(module.register_full_backward_hook(self._keep_grad))

    def detach(self):
        for handle in itertools.chain(self.outputs, self.seen):
            handle.remove()
""",
            line=20,
            message="its handle (`self.grads`) is never removed",
        ),
        # The same swap with no removal after it: the hook keeps appending.
        Invalid(
            """
class Recorder:
    def __init__(self, module):
        self.module = module
        self.samples = []
        self._handle = None

    def install(self):
        self._handle = self.module.register_forward_pre_hook(self._record)

    def _record(self, module, args):
        self.samples.append(args[0].detach())

    def _forget(self):
        handle, self._handle = self._handle, None
        return handle is not None
""",
            line=8,
            message="its handle (`self._handle`) is never removed",
        ),
        # The list is emptied only when the caller asks for the result, not by forward.
        Invalid(
            """
import torch
from torch import nn

class Encoder(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = blocks
        self._taps = []
        for block in self.blocks:
            block.register_forward_hook(self._tap)

    def _tap(self, module, args, output):
        self._taps.append(output)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x

    def fused(self):
        taps = torch.stack(self._taps)
        self._taps.clear()
        return taps.sum(0)
""",
            line=10,
            message="appends to `self._taps` on every forward",
        ),
        # The forward hook on the same module only reads the list: the pushes pile up.
        Invalid(
            """
def _push_len(module, args):
    module.lengths.append(args[0].shape[1])

def _trim(module, args, output):
    return output[:, : module.lengths[-1]]

def attach(decoder):
    decoder.lengths = []
    decoder.register_forward_pre_hook(_push_len)
    decoder.register_forward_hook(_trim)
""",
            line=9,
            message="appends to `module.lengths` on every forward",
        ),
        # Bindings are per scope: the `handle.remove()` of another function is another handle.
        Invalid(
            """
def watch(model, seen):
    handle = model.register_forward_hook(lambda m, i, o: seen.append(o))

def check_once(model, x, seen, handle):
    handle.remove()
""",
            line=2,
            message="its handle (`handle`) is never removed",
        ),
        # A removal after `return` never runs: it removes nothing.
        Invalid(
            """
def first_outputs(model, x):
    outputs = []
    handle = model.register_forward_hook(lambda m, i, o: outputs.append(o))
    model(x)
    return outputs
    handle.remove()
""",
            expected="""
def first_outputs(model, x):
    outputs = []
    with model.register_forward_hook(lambda m, i, o: outputs.append(o)) as handle:
        model(x)
        return outputs
        handle.remove()
""",
            line=3,
            message="its handle (`handle`) is never removed",
        ),
        # The AutoRound shape: discarded into the HooksMixin wrapper, consumed in another method.
        Invalid(
            """
class AutoRoundLike(HooksMixin):
    _all_module_input: dict[str, list[tuple]] = PrivateAttr(default_factory=dict)

    def input_capture_hook(self, module, args, kwargs):
        if module._tmp_name not in self._all_module_input:
            self._all_module_input[module._tmp_name] = []
        self._all_module_input[module._tmp_name].append((args, kwargs))

    def on_calibration_start(self, state):
        for _, module in state.model.named_modules():
            if self._is_decoding_layer(module):
                self.register_hook(module, self.input_capture_hook, "forward_pre", with_kwargs=True)

    def apply_autoround(self, layer):
        cur_inputs = self._all_module_input[layer._tmp_name]
        self.tune(layer, cur_inputs)

    def on_calibration_end(self, state):
        self.remove_hooks()
""",
            expected="""
class AutoRoundLike(HooksMixin):
    _all_module_input: dict[str, list[tuple]] = PrivateAttr(default_factory=dict)
    _capture_hooks: dict = PrivateAttr(default_factory=dict)

    def input_capture_hook(self, module, args, kwargs):
        if module._tmp_name not in self._all_module_input:
            self._all_module_input[module._tmp_name] = []
        self._all_module_input[module._tmp_name].append((args, kwargs))

    def on_calibration_start(self, state):
        for _, module in state.model.named_modules():
            if self._is_decoding_layer(module):
                self._capture_hooks[module._tmp_name] = self.register_hook(module, self.input_capture_hook, "forward_pre", with_kwargs=True)

    def apply_autoround(self, layer):
        if layer._tmp_name in self._capture_hooks:
            self._capture_hooks.pop(layer._tmp_name).remove()
        cur_inputs = self._all_module_input[layer._tmp_name]
        self.tune(layer, cur_inputs)

    def on_calibration_end(self, state):
        self.remove_hooks()
""",
            line=12,
            message=(
                "capture hook `input_capture_hook` appends to `self._all_module_input` on every forward; "
                "its handle is discarded"
            ),
        ),
        # Register, run, read in one function: scoped with `with`.
        Invalid(
            """
import torch

def penultimate_features(model, images):
    feats = []
    model.avgpool.register_forward_hook(lambda m, i, o: feats.append(o.flatten(1)))
    model(images)
    return torch.cat(feats)
""",
            expected="""
import torch

def penultimate_features(model, images):
    feats = []
    with model.avgpool.register_forward_hook(lambda m, i, o: feats.append(o.flatten(1))):
        model(images)
    return torch.cat(feats)
""",
            line=5,
            message="capture hook `<lambda>` appends to `feats` on every forward; its handle is discarded",
        ),
        # A registration loop: an ExitStack.
        Invalid(
            """
import torch

def layer_inputs(model, batch):
    inputs = {}

    def save(name, module, args):
        inputs.setdefault(name, []).append(args[0].detach())

    for name, layer in model.named_children():
        layer.register_forward_pre_hook(functools.partial(save, name))
    with torch.no_grad():
        model(batch)
    return {k: torch.cat(v) for k, v in inputs.items()}
""",
            expected="""
import torch
import contextlib

def layer_inputs(model, batch):
    inputs = {}

    def save(name, module, args):
        inputs.setdefault(name, []).append(args[0].detach())

    with contextlib.ExitStack() as stack:
        for name, layer in model.named_children():
            stack.enter_context(layer.register_forward_pre_hook(functools.partial(save, name)))
        with torch.no_grad():
            model(batch)
    return {k: torch.cat(v) for k, v in inputs.items()}
""",
            line=10,
            message="appends to `inputs`",
        ),
        # Kept but never removed; the capture is consumed elsewhere: no fix, advice instead.
        Invalid(
            """
class GradientLogger:
    def __init__(self, model):
        self.grads = []
        self.handle = model.fc.weight.register_hook(self._log)

    def _log(self, grad):
        self.grads.append(grad.clone())
""",
            line=4,
            message="its handle (`self.handle`) is never removed",
        ),
        # A global accumulating through torch.cat, a process-wide hook.
        Invalid(
            """
import torch
from torch.nn.modules.module import register_module_forward_hook

ALL_OUTPUTS = torch.empty(0)

def _grab(module, args, output):
    global ALL_OUTPUTS
    ALL_OUTPUTS = torch.cat([ALL_OUTPUTS, output.flatten()])

register_module_forward_hook(_grab)
""",
            line=10,
            message="concatenates onto `ALL_OUTPUTS`",
        ),
        # The teardown removes another attribute: these handles stay.
        Invalid(
            """
def install(session, modules, log):
    for module in modules:
        session.probes.append(module.register_forward_hook(lambda m, i, o: log.append(o)))

def uninstall(session):
    for handle in session.handles:
        handle.remove()
""",
            line=3,
            message="its handle (`session.probes`) is never removed",
        ),
        # Registered through a local name bound to the method.
        Invalid(
            """
def output_norms(model, batch):
    norms = []
    attach = model.register_forward_hook
    attach(lambda module, inputs, output: norms.append(output.norm()))
    model(batch)
    return norms
""",
            expected="""
def output_norms(model, batch):
    norms = []
    attach = model.register_forward_hook
    with attach(lambda module, inputs, output: norms.append(output.norm())):
        model(batch)
    return norms
""",
            line=4,
            message="appends to `norms`",
        ),
        # The same tracker with a list of its own (it binds `self.handles`), which no
        # method removes: the hooks stay, whatever its base class does.
        Invalid(
            """
from .trackers import TrackerBase


class InputTracker(TrackerBase):
    def __init__(self, module):
        super().__init__()
        self.module = module
        self.inputs = []
        self.handles = []

    def attach(self):
        def record(module, args, output):
            self.inputs.append(args[0].detach())

        self.handles.append(self.module.register_forward_hook(record))
""",
            line=15,
            message="its handle (`self.handles`) is never removed",
        ),
        # A slot overwritten per forward, but in a dict each call makes anew: every call
        # leaves one more hook on the caller's model, holding that call's dict.
        Invalid(
            """
def last_output(model, batch):
    seen = {}

    def hook(module, args, output):
        seen["out"] = output.detach()

    model.head.register_forward_hook(hook)
    model(batch)
    return seen["out"]
""",
            expected="""
def last_output(model, batch):
    seen = {}

    def hook(module, args, output):
        seen["out"] = output.detach()

    with model.head.register_forward_hook(hook):
        model(batch)
    return seen["out"]
""",
            line=7,
            message="stores into `seen`, new per `last_output` call; handle discarded",
        ),
        # The same through a hook factory given the call's dict, on layers looked up by name.
        Invalid(
            """
import torch


def layer_outputs(model, names, batch):
    outputs = {}

    def keep(name, store):
        def hook(module, args, output):
            store[name] = output.detach()

        return hook

    modules = dict(model.named_modules())
    for name in names:
        modules[name].register_forward_hook(keep(name, outputs))
    with torch.no_grad():
        model(batch)
    return outputs
""",
            line=15,
            message="stores into `outputs`, new per `layer_outputs` call",
        ),
        # A factory nested in the function builds each hook, closing over the call's dict.
        Invalid(
            """
def block_maps(net, batch):
    maps = {}

    def recorder(label):
        def record(module, args, output):
            maps[label] = output.detach()

        return record

    for label, block in net.named_children():
        block.register_forward_hook(recorder(label))
    net(batch)
    return maps
""",
            expected="""
import contextlib

def block_maps(net, batch):
    maps = {}

    def recorder(label):
        def record(module, args, output):
            maps[label] = output.detach()

        return record

    with contextlib.ExitStack() as stack:
        for label, block in net.named_children():
            stack.enter_context(block.register_forward_hook(recorder(label)))
        net(batch)
    return maps
""",
            line=11,
            message="stores into `maps`, new per `block_maps` call; handle discarded",
        ),
        # The window never empties the buffer: every `with` adds to what the last left.
        Invalid(
            """
class ActivationRecorder:
    def __init__(self, layer):
        self.active = False
        self.seen = []
        layer.register_forward_hook(self._keep)

    def _keep(self, module, args, output):
        if self.active:
            self.seen.append(output.detach())

    def __enter__(self):
        self.active = True
        return self

    def __exit__(self, *exc):
        self.active = False
""",
            line=5,
        ),
        # Removed only by `__del__`: the layer holds the bound method, the method holds the
        # explainer, so the explainer is never collected while the layer lives, and every
        # forward of the user's model keeps appending.
        Invalid(
            """
class ActivationMap:
    def __init__(self, layer):
        self.handles = []
        self.outputs = []
        self.handles.append(layer.register_forward_hook(self._keep))

    def _drop_hooks(self):
        for handle in self.handles:
            handle.remove()

    def __del__(self):
        self._drop_hooks()

    def _keep(self, module, inputs, output):
        self.outputs.append(output.detach())
""",
            expected=None,
            line=5,
            message="only `__del__` removes it, which the hook blocks",
        ),
        # The same tap, read by the forward and never emptied: every forward
        # adds its outputs to those of all the earlier ones.
        Invalid(
            """
import torch
from torch import nn


class Tap:
    def __init__(self):
        self.outputs = []

    def __call__(self, module, inputs, output):
        self.outputs.append(output)


class MultiScale(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = blocks
        self.tap = Tap()
        for block in self.blocks:
            block.register_forward_hook(self.tap)

    def forward(self, x):
        self.blocks(x)
        return torch.cat(self.tap.outputs[-len(self.blocks) :], dim=1)
""",
            expected=None,
            line=19,
            message="appends to `self.outputs` on every forward",
        ),
        # The same model handed back to the caller: its blocks keep appending to `seen`
        # (kept alive by the hooks) on every forward of the caller's.
        Invalid(
            """
import torch
from torch import nn


class Stack(nn.Module):
    def __init__(self, widths):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(w, w) for w in widths)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def checked_stack(widths):
    model = Stack(list(widths))
    seen = []
    for block in model.blocks:
        block.register_forward_hook(lambda module, args, out: seen.append(out.shape))
    model(torch.zeros(1, widths[0]))
    assert len(seen) == len(widths)
    return model
""",
            expected="""
import torch
from torch import nn
import contextlib


class Stack(nn.Module):
    def __init__(self, widths):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(w, w) for w in widths)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def checked_stack(widths):
    model = Stack(list(widths))
    seen = []
    with contextlib.ExitStack() as stack:
        for block in model.blocks:
            stack.enter_context(block.register_forward_hook(lambda module, args, out: seen.append(out.shape)))
        model(torch.zeros(1, widths[0]))
    assert len(seen) == len(widths)
    return model
""",
            line=20,
            message="appends to `seen` on every forward",
        ),
        # Either branch hooks the same layer into the same list: one bug, one finding, at
        # the first; the gradient hook fills another list and is its own finding.
        Invalid(
            """
class Saliency:
    def __init__(self, layer, inputs_side):
        self.acts = []
        self.grads = []
        if inputs_side:
            layer.register_forward_hook(self._keep_input)
        else:
            layer.register_forward_hook(self._keep_output)
        layer.register_full_backward_hook(self._keep_grad)

    def _keep_input(self, module, args, output):
        self.acts.append(args[0].detach())

    def _keep_output(self, module, args, output):
        self.acts.append(output.detach())

    def _keep_grad(self, module, grad_input, grad_output):
        self.grads.append(grad_output[0].detach())
""",
            line=6,
            message="appends to `self.acts` on every forward; its handle is discarded (and 1 more here)",
        ),
    ]


def _counted(message: str, others: int) -> str:
    """``message`` saying how many more registrations the finding stands for; within
    :data:`~hooklint.rules.base.MESSAGE_LIMIT`, the tail after "discarded" goes first
    (it says no more)."""
    more = more_registrations(others)
    if len(message) + len(more) > MESSAGE_LIMIT:
        message = message.replace(
            "its handle is discarded, so it is never removed", "its handle is discarded"
        )
    if len(message) + len(more) > MESSAGE_LIMIT:
        more = f" (and {others} more here)"
    return message + more
