"""HL100 ``unused-noqa``: a ``# noqa: HL...`` code that suppresses nothing."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid


class UnusedNoqa(Rule):
    """A `# noqa` directive names a hooklint code that suppresses nothing on its line.

    ## What it does
    Reports each `HL` code in a `# noqa: ...` comment that is unknown (`HL999`),
    belongs to a rule that is not enabled for the file, or matches no violation on
    that line, as ruff's `RUF100` does. Codes of other tools (`E501`) and a bare
    `# noqa` are left alone: other linters read them.

    ## Why is this bad?
    A stale suppression hides the next real finding on its line, and a mistyped code
    (`# noqa: HL01`) suppresses nothing while looking as if it did.

    ## Example
    ```python
    handle = module.register_forward_hook(log)  # noqa: HL999
    ```

    ## Use instead
    ```python
    handle = module.register_forward_hook(log)
    ```

    ## Fix safety
    Safe: the fix removes only the stale codes, or the whole directive when none is
    left (the rest of the comment stays). Off by default, as `RUF100` is in ruff: a
    code for a rule that is not selected would otherwise be reported on every run
    that selects fewer rules (`--select HL001` in one CI job, all rules in another).
    Enable it with `--extend-select HL100`.
    """

    code = "HL100"
    name = "unused-noqa"
    default_on = False
    fix_applicability = "safe"
    prefilter = ()  # read from the comments by hooklint.noqa, not from the facts

    VALID = [
        Valid("x = compute()  # noqa: E501\n"),
        Valid("x = compute()  # noqa\n"),
        Valid('x = "# noqa: HL999"\n'),
    ]
    INVALID = [
        Invalid(
            "x = compute()  # noqa: HL999\n", expected="x = compute()\n", line=1, message="unknown: HL999"
        ),
        Invalid(
            "x = compute()  # noqa: E501, HL001\n",
            expected="x = compute()  # noqa: E501\n",
            message="not enabled: HL001",
        ),
        Invalid("x = compute()  # noqa: HL001  # the reason\n", expected="x = compute()  # the reason\n"),
        Invalid("x = compute()  # the reason  # noqa: HL999\n", expected="x = compute()  # the reason\n"),
    ]

    def check(self, facts, context: RuleContext) -> Iterable[Finding]:
        return ()
