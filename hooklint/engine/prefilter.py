"""The text prefilter: whether a file may hold what a selected rule looks for.

A file without any selected rule's token (or a configured registration wrapper's
name) is never parsed; :func:`may_concern_a_rule` asks the same of every rule's
tokens before any rule (or libcst) is imported.  :func:`seed_regex` finds where the
tokens name calls, the seeds of :mod:`hooklint.screen`'s parse.
"""

from __future__ import annotations

import re
from functools import lru_cache

from hooklint.engine.settings import Settings
from hooklint.rules.base import ANY_RULE_TOKENS
from hooklint.tokens import REGISTRATION_NAMES, REGISTRATION_TOKENS

#: What makes a definition a seed of the screening parse, whatever rules are selected.
SEED_TOKENS = REGISTRATION_TOKENS
_REGISTRATION_NAMES = frozenset(REGISTRATION_NAMES)


def prefilter_tokens(rules, wrappers: tuple[str, ...] = ()) -> tuple[str, ...]:
    return _prefilter_tokens(tuple(rules), tuple(wrappers))


@lru_cache(maxsize=256)
def _prefilter_tokens(rules: tuple, wrappers: tuple[str, ...]) -> tuple[str, ...]:
    """The selected rules' prefilter tokens (or given tokens), plus configured registration wrappers."""
    tokens = {token for rule in rules for token in ((rule,) if isinstance(rule, str) else rule.prefilter)}
    tokens.update(w.rsplit(".", 1)[-1] for w in wrappers)
    return tuple(sorted(tokens))


@lru_cache(maxsize=64)
def _prefilter_regex(tokens: tuple[str, ...]) -> re.Pattern:
    return re.compile("|".join(_token_regex(t) for t in tokens) or r"(?!)")


def _token_regex(token: str) -> str:
    return re.escape(token).replace(r"\*", r"\w*")


#: After a registration method's name: its call, or the end of an assignment that binds
#: it to a local name (``add = m.register_forward_hook``, also as either branch of a
#: conditional: ``... if forward else m.register_backward_hook``), which is called later.
_CALLED_OR_BOUND = r"(?=\s*\(|[ \t]+(?:if|else)\b|[ \t]*(?:\\?\r?\n|$))"


@lru_cache(maxsize=64)
def seed_regex(tokens: tuple[str, ...]):
    """Where the tokens occur in code *as what they name*: a call
    (``m.register_forward_hook(``, ``saved_tensors_hooks(``), a registration method
    bound to a local name (:data:`_CALLED_OR_BOUND`), a keyword (``always_call=``),
    an f-string name (``register_{``).  The prefilter may match
    ``register_hook`` in a dict key or ``saved_tensors_hooks`` inside a longer name; a
    seed may not.  A token ending in ``_`` is a prefix (``register_module_``); a
    name's leading ``_`` is allowed before other tokens (``saved_tensors_hooks`` in
    ``_saved_tensors_hooks``: :class:`hooklint.screen.NamePattern`), not before a
    registration API's name, which must be exact (``_register_state_dict_hook`` is
    one, ``_register_hook`` is not).  ``.names`` matches the
    whole names anywhere (for imports)."""
    from hooklint.screen import NamePattern

    names, uses = [], []
    for token in dict.fromkeys(tokens):  # the rules' tokens and the seeds' overlap
        part = _token_regex(token)
        if token.endswith("_"):
            part += r"\w*"
        if not part.endswith(r"\w*") and not token[-1:].isalnum():
            names.append(part)
            uses.append(part)  # ``register_{``, ``.forward(``: already a use
            continue
        part += r"(?![A-Za-z0-9_])"
        names.append(part)
        if token == "always_call":
            uses.append(part + r"(?=\s*=)")
        elif token in _REGISTRATION_NAMES:
            uses.append(part + _CALLED_OR_BOUND)
        else:
            uses.append(part + r"(?=\s*\()")
    pattern = NamePattern(_factored(uses) or r"(?!)")
    pattern.names = NamePattern(_factored(names) or r"(?!)")
    return pattern


#: Literal text many tokens start with.
_SHARED_STARTS = ("register_", "_register_")


def _factored(parts: list[str]) -> str:
    """``parts`` as one alternation, those that start with the same literal text
    (:data:`_SHARED_STARTS`) grouped under it: ``register_(?:forward_hook|hook|...)``
    costs the search one try of ``register_`` where each of thirty alternatives would
    be tried at every ``r`` of the text."""
    groups: dict[str, list[str]] = {}
    rest: list[str] = []
    for part in parts:
        start = next((s for s in _SHARED_STARTS if part.startswith(s)), None)
        if start is None:
            rest.append(part)
        else:
            groups.setdefault(start, []).append(part[len(start) :])
    grouped = [f"{re.escape(start)}(?:{'|'.join(tails)})" for start, tails in groups.items()]
    return "|".join(grouped + rest)


@lru_cache(maxsize=64)
def _prefilter_checks(tokens: tuple[str, ...]) -> tuple[tuple[str, re.Pattern], ...]:
    """The tokens grouped under *anchors*: literal text each token of the group
    contains (``register_`` for ``register_forward_hook``, ``register_*hook``...), with
    one regex for the group.  A file without an anchor skips its group; most files
    hold no anchor at all, and the rest need one regex search per anchor found."""
    prefixes = sorted({token.split("*", 1)[0] for token in tokens}, key=len)
    anchors: list[str] = []
    for prefix in prefixes:
        if not any(anchor in prefix for anchor in anchors):
            anchors.append(prefix)
    groups = []
    for anchor in anchors:
        members = sorted(t for t in tokens if anchor in t.split("*", 1)[0])
        # A text holding a member holds its anchor followed by the member's rest
        # (``_register_state_dict_hook``: ``register_`` then ``state_dict_hook``): the
        # search skips ahead to the anchor's literal text.
        rest = "|".join(_token_regex(t.split(anchor, 1)[1]) for t in members)
        groups.append((anchor, re.compile(f"{re.escape(anchor)}(?:{rest})")))
    return tuple(groups)


def is_candidate(text: str, tokens: tuple[str, ...]) -> bool:
    """Whether a file may hold something a selected rule looks for (else it is not parsed)."""
    return any(
        anchor in text and group.search(text) is not None for anchor, group in _prefilter_checks(tokens)
    )


def needs_whole_module(text: str, rules) -> bool:
    """Whether a selected rule that reasons about every use of a name
    (``Rule.whole_module``) may fire in ``text``: its prefilter matches and so does
    its ``whole_module_tokens`` when it has them (``from torch.nn.utils.parametrize
    import is_parametrized`` names no stale global: HL013 cannot fire, and the file
    is screened like any other)."""
    return any(
        r.whole_module
        and is_candidate(text, r.prefilter)
        and (not r.whole_module_tokens or is_candidate(text, r.whole_module_tokens))
        for r in rules
    )


def may_concern_a_rule(text: str, settings: Settings) -> bool:
    """Whether ``text`` holds a token of any rule or configured wrapper, or removes
    handles with cross-file analysis on (:func:`removes_handles`): the check that runs
    first, before the rules (and libcst) are imported; a file that fails it is done (a
    named one is still compiled: :func:`compile_only`)."""
    return is_candidate(
        text, prefilter_tokens(ANY_RULE_TOKENS, settings.context.registration_wrappers)
    ) or removes_handles(text, settings)


#: A handle's removal: ``.remove()`` with no argument (``list.remove(x)`` takes one).
_HANDLE_REMOVAL = re.compile(r"\.remove\([\s\\]*\)")


def removes_handles(text: str, settings: Settings, rules=None) -> bool:
    """With cross-file analysis on, whether ``text`` removes handles (``h.remove()``),
    which another file's helper may have registered for it, and a selected rule reads
    removals (``Rule.reads_removals``; ``rules`` None: not asked).  Whether any such
    helper is called is decided later, from the text and the other files' outlines
    (:meth:`hooklint.project.resolve.FileView.reaches_no_helper`): a file that calls
    none is never parsed."""
    if not settings.context.cross_file or ".remove(" not in text:
        return False
    if rules is not None and not any(getattr(r, "reads_removals", False) for r in rules):
        return False
    return _HANDLE_REMOVAL.search(text) is not None


def _noqa_candidate(text: str, settings: Settings) -> bool:
    """Whether HL100 (unused-noqa) is selected and ``text`` has a ``# noqa: HL...`` (no
    rule is loaded for this: a file without hook tokens stays cheap)."""
    if "noqa" not in text:
        return False
    from hooklint import noqa

    # HL100 first: it is off by default, and the text search costs a scan of the file
    return noqa.UNUSED_NOQA in settings.rule_codes and noqa.mentions_hooklint_code(text)
