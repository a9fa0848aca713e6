"""hooklint's vocabulary: every name the analysis matches, in one place.

Nothing here imports torch; names are matched syntactically.  Sections:

* the hook-registration API table (which object a ``register_*hook`` hangs the hook
  on, what kind of hook it is, whether it accepts ``always_call``, since when);
* context managers that install hooks for a thread, and ``@contextmanager``;
* handle stores: the container methods that put a handle into a store, that take
  one element out, the views a loop iterates, the builtins that build a container;
* removal forms: ``.remove()``, the ``ExitStack`` methods and finalizers that remove
  later, the words a removal helper's name carries;
* lifecycles: methods that run once per call, installer names, and the
  setup/teardown method pairs of a class;
* acquire/release pairs: what a forward pre-hook does that its forward hook must undo;
* torch's hook dicts and the flag dicts beside them, and the setup/teardown verbs
  that pair a class's methods (HL016, HL017).
"""

from __future__ import annotations

from dataclasses import dataclass


# -- the hook API table -------------------------------------------------------------------
@dataclass(frozen=True)
class HookApi:
    """One registration API, e.g. ``Module.register_forward_hook``."""

    name: str
    kind: str  # forward_pre, forward, backward, full_backward, full_backward_pre, tensor, ...
    owner: str  # module, tensor, optimizer, global_module, global_optimizer, global_dynamo, autograd_node
    since: tuple[int, int] = (1, 8)
    accepts_always_call: bool = False
    #: The most positional arguments torch's signature takes: a call with more is
    #: another library's method of the same name (``self.register_backward_hook(site, fn)``).
    positional: int = 1
    #: The keywords torch's signatures of that name take (module, tensor, optimizer and
    #: autograd-node methods together; checked on torch 2.13): a call with another one is
    #: another library's method (``manager.register_forward_hook(fn, activate=False)``).
    keywords: frozenset = frozenset({"hook"})

    @property
    def is_global(self) -> bool:
        """A process-wide hook: it fires for every module (or optimizer, or frame that
        dynamo compiles) in the process."""
        return self.owner in ("global_module", "global_optimizer", "global_dynamo")


_HOOK = frozenset({"hook"})
_MODULE = [
    HookApi(
        "register_forward_pre_hook", "forward_pre", "module", keywords=_HOOK | {"prepend", "with_kwargs"}
    ),
    HookApi(
        "register_forward_hook",
        "forward",
        "module",
        accepts_always_call=True,
        keywords=_HOOK | {"prepend", "with_kwargs", "always_call"},
    ),
    HookApi(
        "register_full_backward_pre_hook",
        "full_backward_pre",
        "module",
        (2, 0),
        positional=2,
        keywords=_HOOK | {"prepend"},
    ),
    HookApi(
        "register_full_backward_hook", "full_backward", "module", positional=2, keywords=_HOOK | {"prepend"}
    ),
    HookApi("register_backward_hook", "backward", "module"),
    HookApi("register_state_dict_pre_hook", "state_dict_pre", "module", (2, 0), keywords=_HOOK | {"prepend"}),
    HookApi("register_state_dict_post_hook", "state_dict_post", "module", (2, 5)),
    HookApi(
        "register_load_state_dict_pre_hook",
        "load_state_dict_pre",
        "module",
        (2, 5),
        keywords=_HOOK | {"prepend"},
    ),
    HookApi("register_load_state_dict_post_hook", "load_state_dict_post", "module", (1, 12)),
    HookApi("_register_state_dict_hook", "state_dict_post", "module"),
    HookApi(
        "_register_load_state_dict_pre_hook",
        "load_state_dict_pre",
        "module",
        positional=2,
        keywords=_HOOK | {"with_module"},
    ),
]
_TENSOR = [
    HookApi("register_hook", "tensor", "tensor", keywords=_HOOK | {"fn"}),  # ``Node.register_hook(fn)`` too
    HookApi("register_post_accumulate_grad_hook", "post_accumulate_grad", "tensor", (2, 1)),
    HookApi("register_prehook", "node_pre", "autograd_node", (2, 0), keywords=frozenset({"fn"})),
]
#: The methods that put a hook on a tensor (the screen keeps callers of a function that
#: hooks a tensor it is given: they say whether it is a new activation).
TENSOR_HOOK_METHODS = frozenset(api.name for api in _TENSOR if api.owner == "tensor")
_OPTIMIZER = [
    HookApi("register_step_pre_hook", "step_pre", "optimizer", (2, 0)),
    HookApi("register_step_post_hook", "step_post", "optimizer", (2, 0)),
]
_GLOBAL = [
    HookApi("register_module_forward_pre_hook", "forward_pre", "global_module"),
    HookApi(
        "register_module_forward_hook",
        "forward",
        "global_module",
        accepts_always_call=True,
        keywords=_HOOK | {"with_kwargs", "always_call"},
    ),
    HookApi("register_module_backward_hook", "backward", "global_module"),
    HookApi("register_module_full_backward_hook", "full_backward", "global_module"),
    HookApi("register_module_full_backward_pre_hook", "full_backward_pre", "global_module", (2, 0)),
    HookApi("register_module_buffer_registration_hook", "buffer_registration", "global_module", (2, 0)),
    HookApi("register_module_module_registration_hook", "module_registration", "global_module", (2, 0)),
    HookApi("register_module_parameter_registration_hook", "parameter_registration", "global_module", (2, 0)),
    HookApi("register_optimizer_step_pre_hook", "step_pre", "global_optimizer", (2, 0)),
    HookApi("register_optimizer_step_post_hook", "step_post", "global_optimizer", (2, 0)),
    HookApi(
        "register_multi_grad_hook",
        "multi_grad",
        "autograd_graph",
        (2, 0),
        positional=2,
        keywords=frozenset({"tensors", "fn", "mode"}),
    ),
    # ``torch._dynamo.convert_frame.register_bytecode_hook``: runs on every frame dynamo
    # compiles, in the whole process.
    HookApi("register_bytecode_hook", "bytecode", "global_dynamo", (2, 1)),
]

#: Methods called on a receiver (``module.register_forward_hook(fn)``).
METHOD_APIS: dict[str, HookApi] = {api.name: api for api in _MODULE + _TENSOR + _OPTIMIZER}
#: Process-wide functions (``register_module_forward_hook(fn)``), matched by their last name.
GLOBAL_APIS: dict[str, HookApi] = {api.name: api for api in _GLOBAL}
#: The kinds of hook that run during a backward pass (after the forward that
#: registers them has returned).
BACKWARD_KINDS = frozenset(
    {
        "backward",
        "full_backward",
        "full_backward_pre",
        "tensor",
        "post_accumulate_grad",
        "multi_grad",
        "node_pre",
    }
)
#: A registration reached through ``getattr(obj, f"register_{kind}_hook")``.
DYNAMIC_API = HookApi(
    "register_<dynamic>_hook",
    "dynamic",
    "module",
    positional=2,
    keywords=frozenset().union(*(api.keywords for api in _MODULE + _TENSOR + _OPTIMIZER + _GLOBAL)),
)

#: Context managers that install saved-tensor (pack/unpack) hooks for the thread
#: (import aliases resolved).
SAVED_TENSORS_HOOKS = frozenset(
    {
        "torch.autograd.graph.saved_tensors_hooks",
        "torch.autograd.graph.save_on_cpu",
        "torch.autograd.graph.disable_saved_tensors_hooks",
        "torch.autograd.saved_tensors_hooks",
        "torch.autograd.save_on_cpu",
    }
)
#: Decorators that turn a generator into a context manager.
CONTEXTMANAGERS = frozenset({"contextlib.contextmanager", "contextmanager", "contextlib.asynccontextmanager"})
#: Module methods that give a module a new buffer, parameter or submodule: a change
#: to the module that lasts as long as it does.
MODULE_ADDITIONS = frozenset({"register_buffer", "register_parameter", "add_module", "register_module"})
#: Decorators (last name) that make a function run once per process and hand back the
#: first result after that (``functools.cache``), or that are named for it
#: (``call_once``; not ``once_differentiable``, which is about autograd).
RUN_ONCE_DECORATORS = frozenset(
    {"cache", "lru_cache", "once", "call_once", "run_once", "do_once", "only_once", "run_only_once"}
)


def runs_once(decorators) -> bool:
    """Whether one of ``decorators`` (dotted names) makes the function run once."""
    return any(d.rsplit(".", 1)[-1] in RUN_ONCE_DECORATORS for d in decorators)


def lookup(name: str) -> HookApi | None:
    """The API a called name refers to, if it is a known registration."""
    return METHOD_APIS.get(name) or GLOBAL_APIS.get(name)


# -- handle stores ---------------------------------------------------------------------------
#: Methods that put one item into a container (``hs.append(h)``, ``active.add(x)``): the
#: one list, from which the handle stores and the hook-state containers below are made.
ITEM_ADDS = frozenset({"add", "append", "appendleft", "insert"})
#: ``store.append(h)`` and friends: the argument goes into ``store``.
STORE_METHODS = ITEM_ADDS | {"extend"}
#: How a finding says what each of the :data:`STORE_METHODS` does to its store (HL002).
STORE_VERBS = {
    "append": "appends to",
    "extend": "extends",
    "insert": "inserts into",
    "appendleft": "appends to",
    "add": "adds to",
}
#: Methods that put a keyed value into a mapping (``d.update(...)``, ``d.setdefault(k, h)``).
KEYED_STORE_METHODS = frozenset({"update", "setdefault"})
#: Calls by which a function records something on their receiver (``self._hooked.add(m)``),
#: so that a later test of the receiver can be an install-once check (HL003).
RECORDING_METHODS = frozenset({"add", "append", "update", "setdefault", "__setitem__", "extend"})
#: Store methods a hook can keep a tensor with, and the index of the argument that is
#: kept (None: every argument) (HL006).
STORED_ARGUMENT: dict[str, int | None] = {
    "append": 0,
    "appendleft": 0,
    "extend": 0,
    "add": 0,
    "put": 0,
    "put_nowait": 0,
    "insert": 1,
    "setdefault": 1,
    "__setitem__": 1,
    "update": None,
}
#: Methods that take one element out of a store (``hs.pop()``, ``d.get(k)``).
ELEMENT_METHODS = frozenset({"pop", "popleft", "popitem", "get"})
#: Calls that take an item out of a container for good (``queue.pop()``,
#: ``heapq.heappop(heap)``): a loop that makes one each pass drains a work list.
TAKE_ITEM_METHODS = frozenset({"pop", "popleft", "popitem", "get_nowait"})
TAKE_ITEM_FUNCTIONS = frozenset({"heappop", "next"})
#: Views a loop iterates instead of the store itself (``for h in d.values()``).
STORE_VIEWS = frozenset({"values", "items", "copy", "keys"})
#: Builtins whose result holds what their argument yields (``set(reg(m) for m in ms)``).
COLLECTION_BUILTINS = frozenset({"list", "set", "tuple", "frozenset", "sorted", "dict", "reversed"})
#: Builtins whose result is, or is reached from, their first argument
#: (``dict(model.named_children())``, ``enumerate(model.modules())``, ``getattr(model, name)``).
PASS_THROUGH_BUILTINS = COLLECTION_BUILTINS | {"enumerate", "iter", "zip", "getattr"}
#: Functions (a library's own helpers, by the names they are usually given) that look a
#: part of their first argument up by a name: ``rgetattr(model, "layer1.0.relu")``,
#: ``get_module_by_name(model, name)``.  What they return is reached from that argument.
PART_LOOKUPS = frozenset(
    {
        "rgetattr",
        "recursive_getattr",
        "getattr_recursive",
        "deepgetattr",
        "nested_getattr",
        "get_module",
        "_get_module",
        "get_module_by_name",
        "get_module_from_name",
        "get_submodule",
        "get_layer_by_name",
    }
)
#: ``Module`` methods that walk a module's own parts (``m.named_parameters()``).
MODULE_PARTS = frozenset(
    {
        "parameters",
        "named_parameters",
        "buffers",
        "named_buffers",
        "modules",
        "named_modules",
        "children",
        "named_children",
    }
)
#: ``Module`` methods that switch its mode (``model.eval()``, ``model.train(False)``): they
#: set a flag on each submodule and do not fail in practice.
MODE_SWITCHES = frozenset({"eval", "train"})
#: Attributes every tensor or module has (``first.device``, ``model.training``): reading
#: one does not fail in practice.
STANDARD_ATTRIBUTES = frozenset({"device", "dtype", "training", "is_cuda"})
#: Builtins whose result is computed from their argument, never the argument itself
#: (``return len(handles)`` hands back no handle).
COMPUTING_BUILTINS = frozenset({"len", "bool", "int", "str", "repr", "hash", "id", "isinstance", "type"})
#: ``Module`` methods that hand back the module itself (``model = model.to(device)``
#: rebinds the name to the same object).
SELF_RETURNING = frozenset(
    {"to", "cuda", "cpu", "xpu", "half", "float", "double", "bfloat16", "eval", "train", "requires_grad_"}
)
#: A module's methods that walk its parameters (a tensor hook put on each of them).
PARAMETER_LISTS = frozenset({"parameters", "named_parameters"})
#: Class methods that load a new model from a name or a config
#: (``AutoModel.from_pretrained(model_id)``): what they return is the caller's own,
#: whatever their arguments name.
LOADERS = frozenset({"from_pretrained", "from_config"})
#: Other frameworks whose modules have hook methods named as torch's: MindSpore's
#: ``Cell.register_backward_hook`` is its own (and only) backward hook, not torch's
#: deprecated one.  A file that imports one of these and not torch is not torch code
#: (the screen keeps their imports, :mod:`hooklint.screen`).
OTHER_FRAMEWORKS = frozenset({"mindspore"})
#: Builtin and ``collections`` containers: a call of one makes a new, separate object
#: (hook state local to one call, :mod:`hooklint.analysis.call_local`).
NEW_CONTAINER_CALLS = frozenset({"list", "dict", "set", "defaultdict", "OrderedDict", "Counter", "deque"})

# -- removal forms ---------------------------------------------------------------------------
#: ``handle.remove()``.
REMOVE_METHOD = "remove"
#: ``stack.enter_context(h)``, ``stack.callback(h.remove)``, ``stack.push(h)``.
EXIT_STACK_METHODS = frozenset({"enter_context", "callback", "push"})
#: A function whose name holds one of these removes what it is given (``remove_hooks(hs)``).
REMOVAL_WORDS = ("remove",)

# -- lifecycles ------------------------------------------------------------------------------
#: Methods that run once per forward, step or generated token.
PER_CALL_NAMES = frozenset({"forward", "_forward", "__call__", "generate", "step"})
#: Functions whose job is to install something for later.
INSTALLER_PREFIXES = (
    "install",
    "register",
    "enable",
    "setup",
    "set_up",
    "add",
    "attach",
    "init",
    "__init__",
    "__enter__",
    "start",
    "patch",
    "hook",
)
#: Setup/teardown method pairs of one class: what the first installs, the second undoes.
LIFECYCLE_PAIRS = (
    ("__enter__", "__exit__"),
    ("__aenter__", "__aexit__"),
)
#: A method whose name holds one of these words installs hooks (``self.register_hooks(m)``).
SETUP_WORDS = ("register_hook", "add_hook", "attach_hook", "install_hook")


# -- acquire/release pairs ----------------------------------------------------------------
# How hook state is taken and given back: what a forward pre-hook does that its forward
# hook must undo (HL001), and which undo assumes the take happened (HL005).
# Read by hooklint.analysis.effects; nothing else should spell these names.

#: Methods that put an item into a container (``stack.append(x)``, ``active.add(x)``,
#: ``frames.push(x)``).
CONTAINER_ADDS = ITEM_ADDS | {"push"}
#: Methods that take an item out, and the kind of removal: ``remove`` assumes the item
#: is there (it raises, or pops the wrong frame, when it is not), ``discard`` tolerates
#: a missing one, ``clear`` empties the container.
CONTAINER_REMOVALS = {
    "remove": "remove",
    "pop": "remove",
    "popleft": "remove",
    "popitem": "remove",
    "discard": "discard",
    "clear": "clear",
}

#: Method-call pairs: a call of the first verb on an object is undone by a call of the
#: second on the same object.  A method matches a verb exactly (``timer.start()``), as
#: a prefix (``coordinator.fetch_sub_module(m)`` / ``release_sub_module(m)``) or as a
#: suffix (``nvtx.range_push(name)`` / ``range_pop()``); prefixed and suffixed names
#: pair only when the rest of the name agrees.  ``push``/``pop`` are container methods
#: first (see above): they pair as a container add and removal.
METHOD_PAIRS = (
    ("start", "stop"),
    ("enter", "exit"),
    ("__enter__", "__exit__"),
    ("acquire", "release"),
    ("fetch", "release"),
    ("set", "reset"),
    ("begin", "end"),
    ("push", "pop"),
    ("disallow", "allow"),
)
ACQUIRING_VERBS = {acquire: f"{acquire}/{release}" for acquire, release in METHOD_PAIRS}
RELEASING_VERBS: dict = {}
for _acquire, _release in METHOD_PAIRS:
    RELEASING_VERBS.setdefault(_release, []).append(f"{_acquire}/{_release}")
del _acquire, _release

#: Assigned values that lower a flag (the release of ``flag = True``).
FALSY_CONSTANTS = frozenset({"False", "None"})
#: The constants libcst spells as names: never a variable, never a handle.
CONSTANT_NAMES = frozenset({"None", "True", "False"})

#: ``Module`` methods that look a part up by its dotted name and raise for a name the
#: module does not have (``model.get_submodule("encoder.layer.3")``).
NAME_LOOKUP_METHODS = frozenset({"get_submodule", "get_parameter", "get_buffer"})
#: Builtins that iterate the values of the iterables they are given (``for name in
#: sorted(names)``, ``for i, block in enumerate(model.blocks)``: ``enumerate`` adds a
#: count, ``zip`` pairs several).
ITERATING_BUILTINS = frozenset({"sorted", "list", "tuple", "set", "reversed", "zip", "enumerate"})


# -- hook dicts and the flags kept beside them (HL016, HL017) -------------------------------
#: torch's dicts of a module's hooks, keyed by handle id, and the side dicts that keep the
#: flags a registration was given (also keyed by handle id): dict -> (the registration
#: that fills it, ((keyword, side dict, since), ...)).  ``prepend`` is not kept: it only
#: decides where in the dict the hook goes.
HOOK_FLAG_DICTS = {
    "_forward_hooks": (
        "register_forward_hook",
        (
            ("with_kwargs", "_forward_hooks_with_kwargs", (2, 0)),
            ("always_call", "_forward_hooks_always_called", (2, 1)),
        ),
    ),
    "_forward_pre_hooks": (
        "register_forward_pre_hook",
        (("with_kwargs", "_forward_pre_hooks_with_kwargs", (2, 0)),),
    ),
}
#: The hook dict each kind of module registration fills (``HookApi.kind``).
HOOK_DICT_OF_KIND = {
    "forward": "_forward_hooks",
    "forward_pre": "_forward_pre_hooks",
    "backward": "_backward_hooks",
    "full_backward": "_backward_hooks",
    "full_backward_pre": "_backward_pre_hooks",
}
#: Every hook dict of a module: clearing one (``m._forward_hooks.clear()``) removes hooks
#: without their handles.
MODULE_HOOK_DICTS = frozenset(
    {
        "_forward_hooks",
        "_forward_pre_hooks",
        "_backward_hooks",
        "_backward_pre_hooks",
        "_state_dict_hooks",
        "_state_dict_pre_hooks",
        "_load_state_dict_pre_hooks",
        "_load_state_dict_post_hooks",
    }
)
#: Words in a called name that say it takes hooks off (``remove_hooks(model)``,
#: ``self._unhook()``), when handles are not followed.
UNHOOK_WORDS = ("remove", "unregister", "unhook", "uninstall", "clear_hooks", "reset_hooks", "detach_hooks")

# -- lifecycles with a teardown (HL016) ------------------------------------------------------
#: Verbs of a setup method and of the teardown that undoes it, matched as a whole
#: underscore-separated word of the name: ``on_train_start``/``on_train_end``,
#: ``register_hooks``/``remove_hooks``, ``_attach``/``_detach``, ``before_fit``/``after_fit``,
#: ``_fuse_preprocess``/``_fuse_postprocess``.
LIFECYCLE_VERBS = (
    ("start", "end"),
    ("start", "stop"),
    ("begin", "end"),
    ("setup", "teardown"),
    ("attach", "detach"),
    ("register", "remove"),
    ("register", "unregister"),
    ("add", "remove"),
    ("install", "uninstall"),
    ("install", "remove"),
    ("enable", "disable"),
    ("hook", "unhook"),
    ("enter", "exit"),
    ("before", "after"),
    ("preprocess", "postprocess"),
    ("wrap", "unwrap"),
    ("bind", "unbind"),
)
#: Methods that undo what an object set up when it was built: a class with one of them
#: owns the hooks its ``__init__`` puts on a module it was given, and a hook that such a
#: teardown leaves registered outlives the object (HL016).
OWNER_TEARDOWNS = (
    "close",
    "release",
    "remove",
    "remove_hooks",
    "detach",
    "teardown",
    "cleanup",
    "destroy",
    "__exit__",
    "__aexit__",
    "__del__",
)
#: Whole-name pairs that the verbs do not spell.
LIFECYCLE_NAMES = (("setUp", "tearDown"), *(("__init__", name) for name in OWNER_TEARDOWNS), *LIFECYCLE_PAIRS)


def _word_swapped(name: str, pairs) -> list[str]:
    """``name`` with one whole underscore-separated word ``a`` replaced by ``b``, for each
    ``(a, b)`` of ``pairs``: ``on_train_start`` -> ``on_train_end``."""
    words = name.split("_")
    return [
        "_".join(words[:index] + [b] + words[index + 1 :])
        for a, b in pairs
        for index, word in enumerate(words)
        if word == a
    ]


def lifecycle_teardowns(name: str) -> tuple[str, ...]:
    """The names of the methods that undo what a method called ``name`` sets up."""
    found = [b for a, b in LIFECYCLE_NAMES if a == name] + _word_swapped(name, LIFECYCLE_VERBS)
    return tuple(dict.fromkeys(found))


def lifecycle_partners(name: str) -> tuple[str, ...]:
    """The methods paired with ``name`` either way (setup to teardown, teardown to setup)."""
    found = list(lifecycle_teardowns(name)) + [a for a, b in LIFECYCLE_NAMES if b == name]
    found += _word_swapped(name, [(b, a) for a, b in LIFECYCLE_VERBS])
    return tuple(dict.fromkeys(found))


# -- bases ----------------------------------------------------------------------------------
#: Bases that keep no hook bookkeeping of their own: a subclass of one of these owns the
#: stores it fills (a class extending anything else may inherit its stores, and their
#: removal, from a base in another file).
PLAIN_BASES = frozenset(
    {
        "object",
        "Module",
        "nn.Module",
        "torch.nn.Module",
        "optim.Optimizer",  # torch's: it keeps and removes no hook of a subclass
        "torch.optim.Optimizer",
        "ABC",
        "Generic",
        "Protocol",
    }
)


# -- module classes (HL014, HL015) ------------------------------------------------------------
#: ``torch.nn`` modules whose forward is one autograd node taking the one input: the
#: deprecated backward hook's ``grad_input`` is the input's gradient there, as the full
#: hook's (checked on torch 2.13: ``Softsign``, ``Tanhshrink``, ``PReLU`` and
#: ``Dropout`` are not; HL007).
SINGLE_NODE_MODULES = frozenset(
    {
        "ReLU",
        "ReLU6",
        "LeakyReLU",
        "ELU",
        "SELU",
        "CELU",
        "GELU",
        "SiLU",
        "Mish",
        "Sigmoid",
        "Tanh",
        "Hardtanh",
        "Hardsigmoid",
        "Hardswish",
        "Softplus",
        "Threshold",
        "LogSigmoid",
        "Softshrink",
        "Hardshrink",
    }
)
#: ``torch.nn`` classes that are not modules.
NOT_MODULE_NN_CLASSES = frozenset({"Parameter", "UninitializedParameter", "UninitializedBuffer", "Buffer"})
#: torch classes (qualified) that are not modules and keep no hooks: a subclass is a
#: helper object (``class KFAC(torch.optim.Optimizer)`` that hooks the model it is given).
TORCH_HELPER_BASES = frozenset(
    {"torch.optim.Optimizer", "torch.optim.optimizer.Optimizer", "torch.autograd.Function"}
)
#: ``torch.nn`` containers whose elements are modules.
MODULE_CONTAINERS = frozenset({"ModuleList", "ModuleDict", "Sequential"})
#: Bases (last name) that make a class something other than an ``nn.Module``; a base
#: whose name ends with ``Mixin`` or ``Pipeline`` does not make it a module either.
NOT_MODULE_BASES = frozenset(
    {
        "object",
        "ABC",
        "Protocol",
        "Generic",
        "NamedTuple",
        "TypedDict",
        "Enum",
        "IntEnum",
        "Exception",
        "dict",
        "list",
        "tuple",
        "set",
        "str",
        "int",
        "Function",
        "SimpleNamespace",
    }
)


# -- grad mode (HL006) ---------------------------------------------------------------------
#: Context managers / decorators (last name) under which forward builds no autograd graph.
#: ``calibration_forward_context`` is llm-compressor's calibration context (it enters
#: ``torch.no_grad()``).
NO_GRAD_CONTEXTS = frozenset({"no_grad", "inference_mode", "calibration_forward_context"})
#: torch's grad-mode contexts (``torch.no_grad()``): entering and leaving one switches a
#: thread-local flag, which does not fail.
GRAD_MODE_SWITCHES = frozenset({"no_grad", "inference_mode", "enable_grad"})
#: Reading a clock, as written (without arguments): it does not fail
#: (``start = time.monotonic()`` between hooks going on and the ``try`` that takes
#: them off raises nothing).  A bare ``time()`` may be anything: not listed.
CLOCK_READINGS = frozenset(
    {
        *(
            f"time.{clock}{ns}"
            for clock in ("time", "monotonic", "perf_counter", "process_time")
            for ns in ("", "_ns")
        ),
        *(f"{clock}{ns}" for clock in ("monotonic", "perf_counter", "process_time") for ns in ("", "_ns")),
        "timeit.default_timer",
        "default_timer",
        "datetime.now",
        "datetime.datetime.now",
    }
)
#: Tensor methods whose result is a new tensor, never the receiver or a view of it
#: (``.cpu()``, ``.to()``, ``.contiguous()`` may return the receiver; ``.view()`` and
#: indexing share its storage): computed under no-grad, it holds no graph.
FRESH_RESULT_METHODS = frozenset(
    {
        "abs",
        "sum",
        "mean",
        "norm",
        "pow",
        "sqrt",
        "square",
        "exp",
        "log",
        "prod",
        "std",
        "var",
        "amax",
        "amin",
        "clone",
        "matmul",
        "mm",
        "bmm",
        "max",
        "min",
        "argmax",
        "argmin",
        "count_nonzero",
    }
)
#: ``torch.set_grad_enabled(False)``: a no-grad context only with a literal ``False``.
SET_GRAD_ENABLED = "set_grad_enabled"
#: Functions (last name) that run a model's calibration passes under ``no_grad``
#: (llm-compressor's pipelines).
NO_GRAD_RUNNERS = frozenset({"run_calibration"})
#: Calls that differentiate what a hook stored: the graph is the point.
DIFFERENTIATING_CALLS = frozenset({"torch.autograd.grad", "autograd.grad"})
