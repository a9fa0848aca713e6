"""HL004 hook-removal-not-exception-safe beyond its VALID/INVALID examples: line
endings, indentation and comments kept by the rewrite, no fix over a multi-line
string, silence without a removal, and the example files under ``examples/``."""

from __future__ import annotations

import textwrap

import pytest
from _checks import LIFETIME_RULES, check_example_files, dedented, findings

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


# The fixed code, run: with a stand-in module whose registration or forward raises,
# the error that comes out is that one (not a `finally` failing on a name the rewrite
# left unbound), and no hook is left behind once the function has returned or raised.


class _Handle:
    def __init__(self, live):
        self.live = live
        live.add(self)

    def remove(self):
        self.live.discard(self)

    def __enter__(self):  # as torch's RemovableHandle
        return self

    def __exit__(self, *exc):
        self.remove()


class _Failed(Exception):
    pass


class _Module:
    def __init__(self, fail, live=None):
        self.fail, self.live = fail, set() if live is None else live
        self.a = self.b = self

    def register_forward_hook(self, hook):
        if self.fail == "register":
            raise _Failed("register")
        return _Handle(self.live)

    def prepare(self):
        pass

    def __call__(self, x):
        if self.fail == "forward":
            raise _Failed("forward")
        return x


_SHAPES = {
    "bound": """
        def f(model, x, hook):
            h = model.register_forward_hook(hook)
            model(x)
            h.remove()
        """,
    "kept in a list after the registration": """
        def f(model, x, hook):
            h = model.register_forward_hook(hook)
            hooks = [h]
            model(x)
            hooks[0].remove()
        """,
    "an alias removes it": """
        def f(model, x, hook):
            h = model.register_forward_hook(hook)
            a = b = h
            model(x)
            a.remove()
        """,
    "two handles, the second removed first": """
        def f(model, x, hook):
            h = model.a.register_forward_hook(hook)
            g = model.b.register_forward_hook(hook)
            model.prepare()
            model(x)
            g.remove()
            h.remove()
        """,
    "a list filled by append": """
        def f(model, x, hook):
            handles = [model.a.register_forward_hook(hook)]
            handles.append(model.b.register_forward_hook(hook))
            model(x)
            for h in handles:
                h.remove()
        """,
}


def _run(source: str, fail: str):
    namespace: dict = {}
    exec(compile(textwrap.dedent(source), "t.py", "exec"), namespace)
    model = _Module(fail)
    try:
        namespace["f"](model, 1, None)
    except _Failed as error:
        return str(error), model.live
    return None, model.live


@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_hl004_fixed_code_raises_the_original_error_and_leaves_no_hook(shape):
    source = textwrap.dedent(_SHAPES[shape])
    outcome = fix_text(source, "t.py", [rules_by_code()["HL004"]], RuleContext(), unsafe=False)
    assert outcome.text != source and parses(outcome.text)
    assert findings(outcome.text, ("HL004",)) == []
    assert _run(source, "forward")[1], "the unfixed code leaks when forward raises"
    for fail in ("forward", "register", None):
        error, live = _run(outcome.text, fail)
        assert error == fail and not live, (fail, outcome.text)


def test_hl004_offers_no_fix_when_the_store_is_bound_after_code_that_can_raise():
    # Moving `hooks = [h]` above `try` would leave `model.prepare()` outside it too.
    violations = findings(
        """
        def f(model, x, hook):
            h = model.register_forward_hook(hook)
            model.prepare()
            hooks = [h]
            model(x)
            hooks[0].remove()
        """,
        ("HL004",),
    )
    assert len(violations) == 1 and violations[0].fix is None


def test_hl004_two_handles_removed_first_in_first_out_are_fixed_one_of_two():
    # `h` becomes a `with` around `g`'s registration; `g`, removed after that `with`,
    # stays reported (no fix): the code is left valid, never with an unbound name.
    source = textwrap.dedent(
        """\
        def f(model, x, hook):
            h = model.a.register_forward_hook(hook)
            g = model.b.register_forward_hook(hook)
            model(x)
            h.remove()
            g.remove()
        """
    )
    outcome = fix_text(source, "t.py", [rules_by_code()["HL004"]], RuleContext(), unsafe=False)
    assert outcome.fixed == 1
    assert [(v.start.line, v.fix) for v in outcome.violations] == [(3, None)]
    assert _run(outcome.text, "register") == ("register", set())
    assert _run(outcome.text, None) == (None, set())


def test_hl004_with_rewrite_keeps_the_forward_inside():
    # Every statement between registration and removal goes inside the `with`, the
    # forward the hook is for included.
    source = textwrap.dedent(
        """\
        def f(model, x, hook):
            h = model.register_forward_hook(hook)
            model.prepare()
            model(x)
            h.remove()
        """
    )
    outcome = fix_text(source, "t.py", [rules_by_code()["HL004"]], RuleContext(), unsafe=False)
    assert outcome.text == textwrap.dedent(
        """\
        def f(model, x, hook):
            with model.register_forward_hook(hook):
                model.prepare()
                model(x)
        """
    )


def test_hl004_no_fix_when_nothing_runs_between_the_loop_and_the_removal():
    """The registration's own statement is a loop whose body also runs the model, and
    the removal follows the loop at once: nothing at that level goes in a `try`, so
    the finding comes without a fix (the fix used to crash on the empty span)."""
    source = """
    def run_all(model, batches):
        handles = []
        for batch in batches:
            handles = [m.register_forward_hook(lambda *a: None) for m in model.modules()]
            model(batch)
        for handle in handles:
            handle.remove()
    """
    found = findings(source, ["HL004"])
    assert [v.start.line for v in found] == [4]
    assert found[0].fix is None
    outcome = fix_text(dedented(source), "t.py", [rules_by_code()["HL004"]], RuleContext(), unsafe=True)
    assert outcome.text == dedented(source) and not outcome.failures
