"""The names hooklint's facts are built from, in one place."""


# -- acquire/release pairs ----------------------------------------------------------------
# How hook state is taken and given back: what a forward pre-hook does that its forward
# hook must undo (HL001), and which undo assumes the take happened (HL005).
# Read by hooklint.analysis.effects; nothing else should spell these names.

#: Methods that put an item into a container (``stack.append(x)``, ``active.add(x)``).
CONTAINER_ADDS = frozenset({"add", "append", "appendleft", "insert", "push"})
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
)
ACQUIRING_VERBS = {acquire: f"{acquire}/{release}" for acquire, release in METHOD_PAIRS}
RELEASING_VERBS: dict = {}
for _acquire, _release in METHOD_PAIRS:
    RELEASING_VERBS.setdefault(_release, []).append(f"{_acquire}/{_release}")
del _acquire, _release

#: Assigned values that lower a flag (the release of ``flag = True``).
FALSY_CONSTANTS = frozenset({"False", "None"})
