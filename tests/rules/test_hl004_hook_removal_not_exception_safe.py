"""HL003, HL004, HL009, HL011 beyond their VALID/INVALID examples: fix safety tiers,
line endings and indentation kept by the rewrites, no double reports, and the
example files under ``examples/``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from hooklint.engine import fix_text, lint_text, parses
from hooklint.rules import rules_by_code
from hooklint.rules.base import RuleContext

CODES = ("HL003", "HL004", "HL009", "HL011")
RULES = [rules_by_code()[c] for c in CODES]
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _lint(source: str, codes=CODES):
    rules = [rules_by_code()[c] for c in codes]
    return [
        v
        for v in lint_text(textwrap.dedent(source), "t.py", rules, RuleContext())
        if v.code in codes
    ]


def test_fix_tiers():
    assert rules_by_code()["HL003"].fix_applicability == "unsafe"
    for code in ("HL004", "HL009", "HL011"):
        assert rules_by_code()[code].fix_applicability == "safe"


def test_hl003_fix_needs_unsafe_fixes():
    source = textwrap.dedent(
        """\
        def forward(self, x):
            self.encoder.register_forward_hook(self._store)
            return self.encoder(x)
        """
    )
    safe = fix_text(
        source, "t.py", [rules_by_code()["HL003"]], RuleContext(), unsafe=False
    )
    assert safe.text == source and safe.fixed == 0
    unsafe = fix_text(
        source, "t.py", [rules_by_code()["HL003"]], RuleContext(), unsafe=True
    )
    assert "with self.encoder.register_forward_hook(self._store):" in unsafe.text


def test_hl004_rewrite_keeps_crlf_and_tabs():
    source = "def run(model, x):\r\n\th = model.register_forward_hook(fn)\r\n\tmodel(x)\r\n\th.remove()\r\n"
    outcome = fix_text(
        source, "t.py", [rules_by_code()["HL004"]], RuleContext(), unsafe=False
    )
    assert (
        outcome.text
        == "def run(model, x):\r\n\twith model.register_forward_hook(fn):\r\n\t\tmodel(x)\r\n"
    )
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
    outcome = fix_text(
        source, "t.py", [rules_by_code()["HL004"]], RuleContext(), unsafe=False
    )
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
    violations = _lint(
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
        _lint(
            """
        def run(model, x):
            h = model.register_forward_hook(fn)
            model(x)
        """,
            ("HL004",),
        )
        == []
    )


def test_one_report_for_a_removal_inside_the_loop():
    # Registered and removed in each pass: only HL004 (not exception-safe), not HL003.
    violations = _lint(
        """
        def probe(model, loader, fn):
            for batch in loader:
                h = model.register_forward_hook(fn)
                model(batch)
                h.remove()
        """
    )
    assert [v.code for v in violations] == ["HL004"]


def test_hl003_install_once_flag_and_early_return():
    assert (
        _lint(
            """
        class Wrapper(nn.Module):
            def forward(self, x):
                if self._hooked:
                    return self.inner(x)
                self.inner.register_forward_hook(self._record)
                self._hooked = True
                return self.inner(x)
        """,
            ("HL003",),
        )
        == []
    )


def test_hl003_lost_handles_only_for_the_same_target():
    assert (
        _lint(
            """
        def attach(model, states):
            for module, state in zip(model.modules(), states):
                state.handle = module.register_forward_hook(fn)
        """,
            ("HL003",),
        )
        == []
    )


def test_hl009_module_level_with_finally_is_clean():
    assert (
        _lint(
            """
        from torch.nn.modules.module import register_module_forward_hook
        handle = register_module_forward_hook(print)
        try:
            main()
        finally:
            handle.remove()
        """,
            ("HL009",),
        )
        == []
    )


def test_hl011_alias_exit_in_another_hook_is_not_never_exited():
    assert (
        _lint(
            """
        import torch
        def install(module):
            cx = None
            def pre(m, args):
                ctx = torch.autograd.graph.saved_tensors_hooks(pack, unpack)
                ctx.__enter__()
                nonlocal cx
                cx = ctx
            def post(m, args, out):
                cx.__exit__()
            module.register_forward_pre_hook(pre)
            module.register_forward_hook(post)
        """,
            ("HL011",),
        )
        == []
    )


@pytest.mark.parametrize("code", CODES)
def test_example_files(code):
    number = code[2:]
    buggy = sorted(
        p for p in EXAMPLES.glob(f"hl{number}_*.py") if not p.stem.endswith("_clean")
    )
    clean = sorted(EXAMPLES.glob(f"hl{number}_*_clean.py"))
    assert buggy and clean
    for path in buggy:
        assert _lint(path.read_text(), (code,)), f"{path.name} is not flagged"
    for path in clean:
        assert _lint(path.read_text(), CODES) == [], f"{path.name} is flagged"
