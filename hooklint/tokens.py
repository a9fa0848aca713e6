"""The text a rule's finding needs: the prefilter tokens.

A token is literal text, with ``*`` standing for any identifier characters
(``register_*hook``).  Kept apart from :mod:`hooklint.rules.base` (which imports
``dataclasses`` and ``typing``) so that the console script's pre-commit path
(:mod:`hooklint.entry`) can pass over a file without any token importing nothing else.
"""

#: The names of torch's hook registration APIs: the prefilter tokens of a registration
#: (the names :mod:`hooklint.analysis.vocabulary`'s tables hold, which recognise one:
#: ``tests/test_tokens.py`` keeps the two equal; kept here, where importing costs nothing).
#: Exact names, not ``register_*hook``: a call of ``comm.register_comm_hook(...)`` or
#: ``self._register_hook(...)`` registers no torch hook, and a file holding only such
#: names is none of a rule's business.
REGISTRATION_NAMES = (
    "_register_load_state_dict_pre_hook",
    "_register_state_dict_hook",
    "register_backward_hook",
    "register_bytecode_hook",
    "register_forward_hook",
    "register_forward_pre_hook",
    "register_full_backward_hook",
    "register_full_backward_pre_hook",
    "register_hook",
    "register_load_state_dict_post_hook",
    "register_load_state_dict_pre_hook",
    "register_module_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
    "register_multi_grad_hook",
    "register_optimizer_step_post_hook",
    "register_optimizer_step_pre_hook",
    "register_post_accumulate_grad_hook",
    "register_prehook",
    "register_state_dict_post_hook",
    "register_state_dict_pre_hook",
    "register_step_post_hook",
    "register_step_pre_hook",
)
#: A registration method named by a string: ``getattr(module, "register_forward_hook")``
#: (the facts take any ``register_...hook`` name so given as a registration).
REGISTRATION_STRINGS = ('register_*hook"', "register_*hook'")
#: Every registration: a call or binding of an API (``REGISTRATION_NAMES``), a method
#: named by a string, and ``getattr(module, f"register_{kind}_hook")``.
REGISTRATION_TOKENS = (*REGISTRATION_NAMES, *REGISTRATION_STRINGS, "register_{")
#: Every rule's prefilter tokens (``tests/test_lazy_imports.py`` keeps this true): a
#: file with none of them, nor of a configured registration wrapper, is none of any
#: rule's business, and is passed over before any rule (or libcst) is imported.
ANY_RULE_TOKENS = (
    *REGISTRATION_TOKENS,
    "always_call",
    "register_module_",
    "register_optimizer_step_",
    "register_step_",
    "register_full_backward_",
    "register_forward_hook",
    "register_module_forward_hook",
    "register_forward_pre_hook",
    "register_module_forward",
    "register_backward_hook",
    "register_module_backward_hook",
    "saved_tensors_hooks",
    "save_on_cpu",
    "parametrize import",
    ".forward(",
    "_forward_hooks",
    "_forward_pre_hooks",
)


def literal_parts(tokens) -> tuple[str, ...]:
    """Text that every match of one of ``tokens`` contains: each token's part before
    its first ``*``, without those that contain a shorter one (``register_`` covers
    ``register_forward_hook``).  A text holding none of them matches no token."""
    prefixes = sorted({token.split("*", 1)[0] for token in tokens}, key=len)
    parts: list[str] = []
    for prefix in prefixes:
        if not any(part in prefix for part in parts):
            parts.append(prefix)
    return tuple(parts)


_MENTIONS_HL: list = []


def mentions_hooklint_code(text: str) -> bool:
    """Whether ``text`` may hold a ``# noqa: HL...`` directive (a cheap test): HL100
    (unused-noqa) needs one, as the other rules need their tokens.  Many files hold a
    ``# noqa`` for another linter; in ASCII text the directive's regex is tried only
    where a ``noqa`` starts (a case-insensitive search of the whole text is slower)."""
    lowered = text.lower()
    start = lowered.find("noqa")
    if start < 0:
        return False
    if not _MENTIONS_HL:
        import re

        #: A line directive that names a hooklint code.
        _MENTIONS_HL.append(re.compile(r"noqa\s*:[^\r\n]*?\bHL\d", re.IGNORECASE))
    directive = _MENTIONS_HL[0]
    if not text.isascii():  # lower() may change the length of other text: offsets differ
        return directive.search(text) is not None
    while start >= 0:
        if directive.match(text, start) is not None:
            return True
        start = lowered.find("noqa", start + 4)
    return False
