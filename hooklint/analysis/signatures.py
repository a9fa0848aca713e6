"""How many positional arguments a hook accepts, and how many torch passes it
(HL018's questions).

torch calls a forward hook as ``hook(module, args, output)``, or as
``hook(module, args, kwargs, output)`` when it was registered with
``with_kwargs=True``; a forward pre-hook as ``hook(module, args)`` or
``hook(module, args, kwargs)``.  The global ``register_module_forward_hook`` takes
``with_kwargs`` since torch 2.6; ``register_module_forward_pre_hook`` never does (its
hooks always get two arguments).

A hook's *arity* is read from its signature as the registration sees it: ``self`` of
a bound method and the leading arguments ``functools.partial`` binds are left out, a
parameter with a default is optional, ``*args`` accepts any number.  Only the hook's
own ``def``/``lambda`` is looked at.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from hooklint.analysis.facts import HookBody, ModuleFacts, Registration

#: ``with_kwargs`` of module forward (pre-)hooks appeared in torch 2.0, of the global
#: forward hook in 2.6 (PR #137403).
MODULE_WITH_KWARGS_SINCE = (2, 0)
GLOBAL_WITH_KWARGS_SINCE = (2, 6)

#: What torch passes, by hook kind and ``with_kwargs``.
_PASSED = {
    ("forward", False): ("module", "args", "output"),
    ("forward", True): ("module", "args", "kwargs", "output"),
    ("forward_pre", False): ("module", "args"),
    ("forward_pre", True): ("module", "args", "kwargs"),
}
#: Parameter names that say what a parameter is meant to receive.
_OUTPUT_NAMES = frozenset({"output", "outputs", "out", "result", "results", "res", "y", "out_"})
#: Decorators that keep the signature of what they decorate (matched at the end of the
#: resolved name: ``torch.no_grad``, ``torch.compiler.disable``, ``functools.wraps``...).
_SIGNATURE_KEEPING_DECORATORS = (
    "staticmethod",
    "classmethod",
    "no_grad",
    "inference_mode",
    "enable_grad",
    "disable",
    "wraps",
)
_KWARGS_NAMES = frozenset({"kwargs", "kwds", "kw", "kw_args", "input_kwargs", "inputs_kwargs", "hook_kwargs"})


@dataclass(frozen=True)
class Arity:
    """The positional arguments a callable accepts: ``required`` to ``maximum``
    (None: any number, ``*args``); ``names`` of its positional parameters."""

    required: int
    maximum: int | None
    names: tuple[str, ...]

    def accepts(self, count: int) -> bool:
        return self.required <= count and (self.maximum is None or count <= self.maximum)

    def describe(self) -> str:
        if self.maximum is None:
            return f"{self.required} or more"
        if self.maximum == self.required:
            return str(self.required)
        return f"{self.required} to {self.maximum}"


def hook_arity(hook: HookBody) -> Arity | None:
    """The hook's arity as torch sees it; None when it cannot be told (a keyword-only
    parameter without default, a ``partial`` that binds a middle parameter by name)."""
    params = hook.node.params
    if any(p.default is None and p.name.value not in hook.bound_keywords for p in params.kwonly_params):
        return None  # every call fails, whatever the count: not a count mismatch
    decorators = hook.function.decorators if hook.function is not None else ()
    if any(not d.endswith(_SIGNATURE_KEEPING_DECORATORS) for d in decorators):
        return None  # a decorator may change what the function accepts
    positional = list(params.posonly_params) + list(params.params)
    bound_self = hook.is_method and not any(d.endswith("staticmethod") for d in decorators)
    skip = (1 if bound_self else 0) + len(hook.bound_args)
    if skip > len(positional):
        return None
    positional = positional[skip:]
    star = isinstance(params.star_arg, cst.Param)
    if hook.bound_keywords:
        names = [p.name.value for p in positional]
        bound = [i for i, name in enumerate(names) if name in hook.bound_keywords]
        if bound:
            first = bound[0]
            if bound != list(range(first, len(names))) or star:
                return None  # torch's positional arguments would run into a bound one
            positional = positional[:first]
    required = sum(1 for p in positional if p.default is None)
    return Arity(required, None if star else len(positional), tuple(p.name.value for p in positional))


@dataclass(frozen=True)
class CallShape:
    """How torch calls a registration's hook: ``passed`` names what it passes;
    ``with_kwargs`` the flag as registered; ``other`` what it would pass with the flag
    flipped (None when the API has no such flag)."""

    kind: str
    with_kwargs: bool
    passed: tuple[str, ...]
    other: tuple[str, ...] | None
    #: The torch release that added ``with_kwargs`` to this API (None: it has none).
    since: tuple[int, int] | None


def call_shape(registration: Registration) -> CallShape | None:
    """How torch calls the hook of a forward or forward pre-hook registration (module
    or global); None for other APIs, wrappers, or a ``with_kwargs`` that is not a
    literal."""
    api = registration.api
    if registration.wrapper is not None or registration.has_star_kwargs:
        return None
    if api.kind not in ("forward", "forward_pre") or api.owner not in ("module", "global_module"):
        return None
    flag = registration.keywords.get("with_kwargs")
    if flag is None:
        with_kwargs = False
    elif isinstance(flag, cst.Name) and flag.value in ("True", "False"):
        with_kwargs = flag.value == "True"
    else:
        return None
    if api.owner == "global_module":
        if api.kind == "forward_pre":
            if flag is not None:
                return None  # the registration itself raises TypeError
            return CallShape(api.kind, False, _PASSED[(api.kind, False)], None, None)
        since = GLOBAL_WITH_KWARGS_SINCE
    else:
        since = MODULE_WITH_KWARGS_SINCE
    return CallShape(
        api.kind, with_kwargs, _PASSED[(api.kind, with_kwargs)], _PASSED[(api.kind, not with_kwargs)], since
    )


@dataclass(frozen=True)
class Mismatch:
    """A hook whose signature does not take what torch passes it.

    ``silent``: the count is accepted (defaults absorb it) but a parameter named for
    one role receives another (``output`` gets the kwargs dict); otherwise torch's call
    raises ``TypeError``.  ``fits_other``: the signature matches the call with
    ``with_kwargs`` flipped."""

    shape: CallShape
    arity: Arity
    silent: bool
    fits_other: bool
    misbound: str | None = None  # the parameter that receives the wrong value
    receives: str | None = None  # what it receives


def signature_mismatch(facts: ModuleFacts, registration: Registration, hook: HookBody) -> Mismatch | None:
    shape = call_shape(registration)
    if shape is None or _expected_to_raise(facts, registration):
        return None
    arity = hook_arity(hook)
    if arity is None:
        return None
    fits_other = shape.other is not None and arity.accepts(len(shape.other))
    if not arity.accepts(len(shape.passed)):
        return Mismatch(shape, arity, silent=False, fits_other=fits_other)
    # The count fits: does a parameter named for one role receive another?
    if shape.kind != "forward" or shape.other is None or arity.maximum is None:
        return None
    names = arity.names
    if len(names) < 4 or not fits_other:
        return None
    third = names[2].lower().lstrip("_")
    if shape.with_kwargs and third in _OUTPUT_NAMES:
        return Mismatch(shape, arity, True, True, names[2], "kwargs")
    if not shape.with_kwargs and third in _KWARGS_NAMES:
        return Mismatch(shape, arity, True, True, names[2], "output")
    return None


def _expected_to_raise(facts: ModuleFacts, registration: Registration) -> bool:
    """The registration sits in ``with self.assertRaises...:`` / ``with pytest.raises(...):``:
    a test that expects it (or its first call) to fail."""
    for frame in registration.site.frames:
        if frame.kind == "with":
            for item in frame.node.items:  # type: ignore[attr-defined]
                code = facts.code(item.item)
                if "assertRaises" in code or "raises(" in code:
                    return True
    return False


def tolerates_three_arguments(registration: Registration) -> bool:
    """The hook takes ``*rest`` (or defaults its last parameters): called with three
    arguments instead of four, it does not raise (HL012)."""
    hook = registration.hook
    if hook is None:
        return False
    params = hook.node.params
    if isinstance(params.star_arg, cst.Param):
        return True
    return len(hook.params) < 4 or any(p.default is not None for p in params.params[-2:])
