"""HL004 hook-removal-not-exception-safe beyond its VALID/INVALID examples: line
endings, indentation and comments kept by the rewrite, no fix over a multi-line
string, silence without a removal, and the example files under ``examples/``."""

from __future__ import annotations

import textwrap

import pytest
from _checks import LIFETIME_RULES, check_example_files, findings

from hooklint.engine import fix_text, parses
from hooklint.rules import rules_by_code
from hooklint.rules.base import RuleContext


def test_hl004_rewrite_keeps_crlf_and_tabs():
    source = "def run(model, x):\r\n\th = model.register_forward_hook(fn)\r\n\tmodel(x)\r\n\th.remove()\r\n"
    outcome = fix_text(source, "t.py", [rules_by_code()["HL004"]], RuleContext(), unsafe=False)
    assert outcome.text == "def run(model, x):\r\n\twith model.register_forward_hook(fn):\r\n\t\tmodel(x)\r\n"
    assert parses(outcome.text)


def test_hl004_keeps_comments_and_multiline_calls():
    source = textwrap.dedent(
        """\
        def run(model, x):
            handle = model.register_forward_hook(
                fn,  # capture
            )
            # run it
            model(x)
            handle.remove()  # done
            return x
        """
    )
    outcome = fix_text(source, "t.py", [rules_by_code()["HL004"]], RuleContext(), unsafe=False)
    assert outcome.text == textwrap.dedent(
        """\
        def run(model, x):
            with model.register_forward_hook(
                fn,  # capture
            ):
                # run it
                model(x)
            # done
            return x
        """
    )


def test_hl004_no_fix_over_a_multiline_string():
    violations = findings(
        '''
        def run(model, x):
            h = model.register_forward_hook(fn)
            model(x, prompt="""a
        b""")
            h.remove()
        ''',
        ("HL004",),
    )
    assert len(violations) == 1 and violations[0].fix is None


def test_hl004_is_silent_without_a_removal():
    # No removal at all is HL002's "never removed", not HL004's.
    assert (
        findings(
            """
        def run(model, x):
            h = model.register_forward_hook(fn)
            model(x)
        """,
            ("HL004",),
        )
        == []
    )


@pytest.mark.parametrize("code", ["HL004"])
def test_example_files(code):
    check_example_files(code, LIFETIME_RULES)
