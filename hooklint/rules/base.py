"""The rule contract.

A rule is a class: its docstring is the user documentation (ruff's sections: *What it
does*, *Why is this bad?*, *Example*, *Use instead*, *Fix safety*), its ``VALID`` and
``INVALID`` examples are turned into tests automatically and shown by
``hooklint explain``, and :meth:`Rule.check` is a small query over the module's
facts that yields :class:`Finding` values.  A rule never walks the tree, reads
files or prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

# The prefilter tokens live in hooklint.tokens (light: the console script's pre-commit path reads them).
from hooklint.tokens import ANY_RULE_TOKENS, REGISTRATION_TOKENS  # noqa: F401

if TYPE_CHECKING:
    import libcst as cst

    from hooklint.analysis.facts import ModuleFacts


#: The longest message a finding gets: one short line (``tests/test_messages.py``).
MESSAGE_LIMIT = 120


def more_registrations(others: int) -> str:
    """What a finding that stands for several registrations of one bug adds to its
    message: `` (and 2 more registrations here)``."""
    return f" (and {others} more registration{'s' if others > 1 else ''} here)"


@dataclass(frozen=True)
class Valid:
    """Code the rule must not flag (``options`` are per-example settings, e.g.
    ``{"target_torch": (2, 0)}``)."""

    code: str
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Invalid:
    """Code the rule must flag: ``line`` is the 1-based line the finding starts on (when
    given), ``expected`` the code after applying the rule's fix (None: no fix offered),
    ``message`` a substring the message must contain."""

    code: str
    expected: str | None = None
    line: int | None = None
    message: str | None = None
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class RuleContext:
    """Settings a rule may read."""

    target_torch: tuple[int, int] = (2, 4)
    registration_wrappers: tuple[str, ...] = ()
    #: Read other modules of the project (``cross-file`` setting, ``--no-cross-file``).
    cross_file: bool = True
    #: The checked file's view of its project (:class:`hooklint.project.resolve.FileView`),
    #: set per file by the engine; not part of the settings' identity.
    project: object = field(default=None, compare=False, repr=False)


@dataclass
class Finding:
    """A violation as a rule sees it: the node to point at, the message, and an
    optional fix (edit primitives from :mod:`hooklint.fixes.edits`)."""

    node: cst.CSTNode
    message: str
    fix_edits: Sequence = ()
    fix_message: str = ""
    unsafe_fix: bool = False
    fix_withheld: str | None = None
    #: Other nodes of the same bug (the other registrations of one hook into one store),
    #: reported as related locations (SARIF ``relatedLocations``, JSON ``related``).
    related: Sequence = ()


def with_evidence(finding: Finding, registration) -> Finding:
    """``finding`` saying where the other file's evidence its registration rests on is
    (a wrapper in a base class or an imported module), and listing those places as
    related locations."""
    evidence = getattr(registration, "evidence", ())
    if not evidence:
        return finding
    first = evidence[0]
    where = f"{first.path.rsplit('/', 1)[-1]}:{first.line}"
    if registration.wrapper:
        finding.message += f" (via `{registration.wrapper}`, {where})"
    else:
        finding.message += f" (hook defined in {where})"
    finding.related = (*finding.related, *evidence)
    return finding


def with_places(finding: Finding, facts, nodes, what: str) -> Finding:
    """``finding`` saying that some of ``nodes`` (the evidence it rests on) are code of
    another file whose body the analysis read (``what`` happens there), and listing
    those places as related locations."""
    project = getattr(facts, "project", None)
    if project is None:
        return finding
    places = []
    for node in nodes:
        where = project.elsewhere(node)
        if where is not None and where not in places:
            places.append(where)
    if places:
        first = places[0]
        finding.message += f" ({what} in {first.path.rsplit('/', 1)[-1]}:{first.line})"
        finding.related = (*finding.related, *places)
    return finding


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    #: On unless deselected (off-by-default rules need an explicit select).
    default_on: ClassVar[bool] = True
    #: Preview rules run only with ``--preview`` / ``preview = true``.
    preview: ClassVar[bool] = False
    #: ``safe``, ``unsafe`` or None when the rule offers no fix.
    fix_applicability: ClassVar[str | None] = None
    #: A ``safe`` rule some of whose fixes are unsafe (``Finding.unsafe_fix``): listed
    #: as ``safe, some unsafe`` by ``hooklint rules`` and ``explain``.
    some_fixes_unsafe: ClassVar[bool] = False
    #: Tokens of which a file must contain at least one for the rule to apply: literal
    #: text, where ``*`` stands for any run of identifier characters.
    prefilter: ClassVar[tuple[str, ...]] = REGISTRATION_TOKENS
    #: With cross-file analysis, a file that removes handles (``h.remove()``) and holds
    #: none of the ``prefilter`` tokens is still a candidate: what it removes may come
    #: from another file's helper (``h = attach(model)``), which is this rule's evidence.
    reads_removals: ClassVar[bool] = False
    #: The rule reasons about every use of a name in the module, so no definition may
    #: be skipped (see :mod:`hooklint.sparse`).
    whole_module: ClassVar[bool] = False
    #: Text without which a ``whole_module`` rule cannot fire (literal, ``*`` as in
    #: ``prefilter``): a file holding none of it takes the fast path like any other.
    #: Empty: the prefilter's tokens alone decide.
    whole_module_tokens: ClassVar[tuple[str, ...]] = ()
    #: The evidence for a finding sits in the definitions that use a token, the hooks
    #: they name and the in-file wrappers' callers, so a file may be screened on that
    #: alone first (see :mod:`hooklint.screen`).  False for a rule whose evidence may
    #: sit elsewhere (where a module was compiled and run).
    screenable: ClassVar[bool] = True
    #: Code the screen drops (a removal, a ``with``, an ``__exit__`` in another method)
    #: can clear a finding of this rule, so a finding on the screen is confirmed on the
    #: fuller text.  False for a rule whose evidence, for and against, is all in what
    #: the screen keeps: the registration, its function and its hook.
    cleared_elsewhere: ClassVar[bool] = True
    VALID: ClassVar[list[Valid]] = []
    INVALID: ClassVar[list[Invalid]] = []

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        raise NotImplementedError

    @classmethod
    def summary(cls) -> str:
        """The first line of the docs."""
        import inspect

        return inspect.getdoc(cls).splitlines()[0] if cls.__doc__ else cls.name

    @classmethod
    def documentation(cls) -> str:
        import inspect

        return inspect.getdoc(cls) or ""


def format_version(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"
