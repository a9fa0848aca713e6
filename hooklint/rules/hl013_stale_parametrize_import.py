"""HL013 stale-parametrize-import."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.names import names_imported_from, record_import
from hooklint.fixes.parametrize_import import PARAMETRIZE, import_parametrize_module
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid

if TYPE_CHECKING:
    import libcst as cst

#: Module globals of ``torch.nn.utils.parametrize`` that ``cached()`` rebinds.
STALE_NAMES = frozenset({"_cache", "_cache_enabled"})


class StaleParametrizeImport(Rule):
    """`_cache` / `_cache_enabled` are imported by name from `torch.nn.utils.parametrize`.

    ## What it does
    Finds `from torch.nn.utils.parametrize import _cache, _cache_enabled` (either
    name, with or without `as`).

    ## Why is this bad?
    Both are module globals that `parametrize` rebinds: `cached()` does
    `_cache_enabled += 1` and, on exit, `_cache = {}`. An imported name is a copy of
    the binding at import time. `_cache_enabled += 1` on it only rebinds your own
    global (ints are immutable), so caching is never switched on; `_cache` keeps
    pointing at a dict that torch has replaced, so reading or clearing it does
    nothing to the real cache.

    ## Example
    ```python
    from torch.nn.utils.parametrize import _cache, _cache_enabled

    def enable_cache(module, args):
        global _cache_enabled
        _cache_enabled += 1
    ```

    ## Use instead
    ```python
    from torch.nn.utils import parametrize

    def enable_cache(module, args):
        parametrize._cache_enabled += 1
    ```
    Better still, wrap the forward in `with parametrize.cached():`.

    ## Fix safety
    Safe: the fix imports the module (reusing an existing alias when there is one),
    rewrites every use of the names in the import's scope to module attributes,
    and drops them from `global` statements. It is withheld when a name is also
    bound locally (a parameter or a non-global assignment), where the rewrite would
    change which variable is meant.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py`)
    and torch 2.13's own sources (`hooklint check --select HL013
    <site-packages>/torch`): no finding. The rule is stable because it matches one
    exact import, whose effect follows from how Python binds imported names.
    """

    code = "HL013"
    name = "stale-parametrize-import"
    fix_applicability = "safe"
    prefilter = ("parametrize import",)
    whole_module = True  # the fix rewrites every use of the imported names
    whole_module_tokens = tuple(sorted(STALE_NAMES))  # only an import of one can be stale

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        for node, site in facts.import_statements:
            stale = {}
            for bound, name in names_imported_from(node, PARAMETRIZE):
                if name in STALE_NAMES:
                    stale[bound] = name
            if not stale:
                continue
            yield self._finding(facts, node, site, stale)

    def _finding(self, facts: ModuleFacts, node: cst.ImportFrom, site, stale: dict[str, str]) -> Finding:
        names = ", ".join(f"`{n}`" for n in sorted(set(stale.values())))
        message = (
            f"importing {names} by name binds a stale copy: `parametrize.cached()` rebinds the module globals"
        )
        function = site.function
        scope = function if function is not None else facts.module
        module_name = _module_alias(facts)
        already = (
            module_name is not None
            and facts.imports.get(module_name) == PARAMETRIZE
            and module_name not in stale
        )
        already = already and _imported_elsewhere(facts, node, module_name)
        edits, withheld = [], None
        if module_name is None:
            withheld = "`parametrize` is already bound to something else"
        else:
            edits, withheld = import_parametrize_module(
                facts, site.statement, node, stale, scope, module_name, already
            )
        return Finding(
            node=node,
            message=message,
            fix_edits=edits,
            fix_message=f"Import the module and use `{module_name}.{next(iter(stale.values()))}`",
            fix_withheld=withheld,
        )


def _imported_elsewhere(facts: ModuleFacts, node: cst.ImportFrom, name: str) -> bool:
    """Whether an import statement other than ``node`` binds ``name`` to the module."""
    for other, _site in facts.import_statements:
        if other is node:
            continue
        bound: dict[str, str] = {}
        record_import(other, bound)
        if bound.get(name) == PARAMETRIZE:
            return True
    return False


def _module_alias(facts: ModuleFacts) -> str | None:
    """A name for ``torch.nn.utils.parametrize``: an existing alias, else ``parametrize``."""
    for bound, origin in facts.imports.items():
        if origin == PARAMETRIZE:
            return bound
    taken = facts.imports.get("parametrize")
    if taken is not None or "parametrize" in facts.classes or facts.module_function("parametrize"):
        return None
    return "parametrize"


StaleParametrizeImport.VALID = [
    # The module attribute, through an alias.
    Valid(
        """
import torch.nn.utils.parametrize as P

def _enable(module, inputs):
    P._cache_enabled += 1

def _disable(module, inputs, output):
    P._cache_enabled = max(0, P._cache_enabled - 1)
    if not P._cache_enabled:
        P._cache = {}
"""
    ),
    # Public names imported by name are fine: they are functions, not rebound globals.
    Valid(
        """
from torch.nn.utils.parametrize import cached, register_parametrization, is_parametrized

def forward_cached(model, x):
    with cached():
        return model(x)
"""
    ),
    # A different module's _cache (functools-style memo in a project module).
    Valid(
        """
from mypkg.utils.parametrize import _cache

def clear():
    _cache.clear()
"""
    ),
]

StaleParametrizeImport.INVALID = [
    # The counter gate of a quantization library, through a global statement.
    Invalid(
        """
from torch.nn.utils.parametrize import _cache, _cache_enabled

def _enable_cache(module, inputs):
    global _cache_enabled
    _cache_enabled += 1

def _disable_cache(module, inputs, output):
    global _cache_enabled, _cache
    _cache_enabled -= 1
    if not _cache_enabled:
        _cache = {}
""",
        expected="""
from torch.nn.utils import parametrize

def _enable_cache(module, inputs):
    parametrize._cache_enabled += 1

def _disable_cache(module, inputs, output):
    parametrize._cache_enabled -= 1
    if not parametrize._cache_enabled:
        parametrize._cache = {}
""",
        line=1,
        message="`_cache_enabled`",
    ),
    # Mixed with public names, an alias, and an existing module alias to reuse.
    Invalid(
        """
import torch.nn.utils.parametrize as P
from torch.nn.utils.parametrize import register_parametrization, _cache as param_cache

def cached_entries():
    return len(param_cache)
""",
        expected="""
import torch.nn.utils.parametrize as P
from torch.nn.utils.parametrize import register_parametrization

def cached_entries():
    return len(P._cache)
""",
        line=2,
        message="`_cache`",
    ),
    # Inside a function: only that function's uses are rewritten.
    Invalid(
        """
def debug_cache_state():
    from torch.nn.utils.parametrize import _cache_enabled
    print("parametrization cache depth:", _cache_enabled)
""",
        expected="""
def debug_cache_state():
    from torch.nn.utils import parametrize
    print("parametrization cache depth:", parametrize._cache_enabled)
""",
        line=2,
    ),
    # A local rebinding of the name: reported, fix withheld.
    Invalid(
        """
from torch.nn.utils.parametrize import _cache

def reset(_cache=None):
    return _cache or {}
""",
        line=1,
        message="(fix withheld",
    ),
]
