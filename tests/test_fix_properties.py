"""Property test for the hook-lifetime fixes (HL003, HL004, HL009, HL011).

Hypothesis builds small functions that mix registrations, removals, loops, ``try``
and ``with`` blocks, global hooks and hand-entered ``saved_tensors_hooks``.  For every
fix offered: the fixed code parses, the rule reports fewer violations (its own is
gone), none of the four rules reports more than before, and fixing the whole file
reaches a fixed point (a second run changes nothing).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hooklint.engine import apply_edits, fix_text, lint_text, parses
from hooklint.rules import rules_by_code
from hooklint.rules.base import RuleContext

CODES = ("HL003", "HL004", "HL009", "HL011")
RULES = [rules_by_code()[c] for c in CODES]
CONTEXT = RuleContext()

HEADER = """\
import torch
from torch.autograd.graph import save_on_cpu
from torch.nn.modules.module import register_module_forward_hook

"""

_names = st.sampled_from(["h", "handle", "hook"])
_modules = st.sampled_from(["model", "model.encoder", "self.layer", "layer"])
_simple = st.sampled_from(["model(x)", "y = 1", "out = model(x)", "x = x + 1", "print(x)", "loss.backward()"])


@st.composite
def _registration(draw):
    form = draw(st.integers(0, 6))
    name = draw(_names)
    module = draw(_modules)
    if form == 0:
        return [f"{name} = {module}.register_forward_hook(fn)"]
    if form == 1:
        return [f"{module}.register_forward_hook(fn)"]
    if form == 2:
        return [
            f"{name} = {module}.register_forward_pre_hook(fn)",
            draw(_simple),
            f"{name}.remove()",
        ]
    if form == 3:
        return [
            "handles = []",
            "for m in model.modules():",
            "    handles.append(m.register_forward_hook(fn))",
            draw(_simple),
            "for h in handles:",
            "    h.remove()",
        ]
    if form == 4:
        return [
            f"{name} = register_module_forward_hook(fn)"
            if draw(st.booleans())
            else "register_module_forward_hook(fn)"
        ]
    if form == 5:
        return [
            "ctx = save_on_cpu()",
            "ctx.__enter__()",
            draw(_simple),
            "ctx.__exit__(None, None, None)",
        ]
    return ["p = model.weight", "p.register_hook(lambda g: g * 0.5)"]


@st.composite
def _block(draw, depth):
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.integers(0, 5 if depth < 2 else 1))
        if kind == 0:
            lines += draw(_registration())
        elif kind == 1:
            lines.append(draw(_simple))
        elif kind == 2:
            inner = draw(_block(depth + 1))
            lines += ["for batch in loader:"] + ["    " + line for line in inner]
        elif kind == 3:
            inner = draw(_block(depth + 1))
            final = draw(_block(depth + 1))
            lines += (
                ["try:"]
                + ["    " + line for line in inner]
                + ["finally:"]
                + ["    " + line for line in final]
            )
        elif kind == 4:
            inner = draw(_block(depth + 1))
            lines += ["with torch.no_grad():"] + ["    " + line for line in inner]
        else:
            inner = draw(_block(depth + 1))
            lines += ["if x is not None:"] + ["    " + line for line in inner]
    return lines


@st.composite
def programs(draw):
    name = draw(st.sampled_from(["run", "forward", "training_step", "attach"]))
    body = draw(_block(0))
    if draw(st.booleans()):
        body.append("return x")
    return (
        HEADER
        + f"def {name}(self, model, loader, x, fn, loss, layer):\n"
        + "".join(f"    {line}\n" for line in body)
    )


def _lifetime_violations(text: str):
    return [v for v in lint_text(text, "gen.py", RULES, CONTEXT) if v.code in CODES]


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(programs())
def test_every_fix_parses_removes_its_violation_and_is_idempotent(source):
    assert parses(source), source
    before = _lifetime_violations(source)
    for violation in before:
        if violation.fix is None:
            continue
        fixed = apply_edits(source, violation.fix.edits)
        assert parses(fixed), f"{violation.code} fix does not parse:\n{source}\n---\n{fixed}"
        after = _lifetime_violations(fixed)
        own_before = sum(v.code == violation.code for v in before)
        own_after = sum(v.code == violation.code for v in after)
        assert own_after < own_before, f"{violation.code} fix left its violation:\n{source}\n---\n{fixed}"
        for code in CODES:
            if code != violation.code:
                assert sum(v.code == code for v in after) <= sum(v.code == code for v in before), (
                    f"{violation.code} fix added a {code} violation:\n{source}\n---\n{fixed}"
                )
    outcome = fix_text(source, "gen.py", RULES, CONTEXT, unsafe=True)
    assert parses(outcome.text)
    assert not outcome.failures, outcome.failures
    again = fix_text(outcome.text, "gen.py", RULES, CONTEXT, unsafe=True)
    assert again.text == outcome.text and again.fixed == 0, f"not idempotent:\n{outcome.text}"


# -- fixes keep the file's newline style and its trailing comments ---------------------------
import re as _re  # noqa: E402
import textwrap as _textwrap  # noqa: E402

import pytest  # noqa: E402

from hooklint.rules import all_rules  # noqa: E402


def _invalid_examples_with_fixes():
    for rule in all_rules():
        for index, example in enumerate(rule.INVALID):
            if example.expected is not None:
                yield pytest.param(rule, example, id=f"{rule.code}-invalid-{index}")


def _crlf(text: str) -> str:
    return _textwrap.dedent(text).lstrip("\n").replace("\n", "\r\n")


@pytest.mark.parametrize(("rule", "example"), list(_invalid_examples_with_fixes()))
def test_fixes_of_a_crlf_file_write_crlf_lines(rule, example):
    source = _crlf(example.code)
    outcome = fix_text(source, "example.py", [rule], RuleContext(**example.options), unsafe=True)
    assert outcome.fixed, f"{rule.code}: nothing fixed in the CRLF file"
    assert _re.search(r"\r(?!\n)|(?<!\r)\n", outcome.text) is None, (
        f"{rule.code} wrote a lone line break:\n{outcome.text!r}"
    )
    assert parses(outcome.text)
    assert outcome.text == _crlf(example.expected)


def _with_comments(source: str) -> tuple[str, list[str]]:
    """``source`` with a comment at the end of every line that can take one."""
    from hooklint.lexical import lex

    lexed = lex(source)
    lines, markers = [], []
    for index, line in enumerate(lexed.lines):
        body = line.rstrip("\r\n")
        if (
            lexed.in_string[index]
            or not body.strip()
            or body.endswith("\\")
            or "#" in lexed.code([index + 1])
        ):
            lines.append(line)
            continue
        marker = f"# kept-{index}"
        markers.append(marker)
        lines.append(f"{body}  {marker}{line[len(body) :]}")
    return "".join(lines), markers


@pytest.mark.parametrize(("rule", "example"), list(_invalid_examples_with_fixes()))
def test_fixes_keep_every_comment(rule, example):
    source = _textwrap.dedent(example.code).lstrip("\n")
    commented, markers = _with_comments(source)
    assert parses(commented)
    outcome = fix_text(commented, "example.py", [rule], RuleContext(**example.options), unsafe=True)
    assert parses(outcome.text)
    lost = [m for m in markers if m not in outcome.text]
    assert not lost, f"{rule.code} fix dropped {lost}:\n{outcome.text}"


def test_the_with_fix_keeps_the_comments_of_the_registration_and_the_removal():
    source = (
        "def probe(model, layer, x):\n"
        "    saved = []\n"
        "    h = layer.register_forward_hook(lambda m, a, o: saved.append(o))  # type: ignore[arg-type]\n"
        "    model(x)\n"
        "    h.remove()  # pragma: no cover\n"
        "    return saved\n"
    )
    fixed = fix_text(source, "m.py", [rules_by_code()["HL004"]], CONTEXT, unsafe=True).text
    assert fixed == (
        "def probe(model, layer, x):\n"
        "    saved = []\n"
        "    with layer.register_forward_hook(lambda m, a, o: saved.append(o)):  # type: ignore[arg-type]\n"
        "        model(x)\n"
        "    # pragma: no cover\n"
        "    return saved\n"
    )
    crlf = fix_text(
        source.replace("\n", "\r\n"), "m.py", [rules_by_code()["HL004"]], CONTEXT, unsafe=True
    ).text
    assert crlf == fixed.replace("\n", "\r\n")


def test_the_with_fix_keeps_each_dropped_statements_comment_as_its_own_comment():
    # Two statements fold into one `with` line: the call's own comment trails the
    # `with`, the other keeps a line of its own (two comments never merge into one).
    source = (
        "from torch.autograd.graph import save_on_cpu\n"
        "\n"
        "ctx = save_on_cpu()  # type: ignore\n"
        "ctx.__enter__()  # entered by hand\n"
        "run()\n"
        "ctx.__exit__(None, None, None)\n"
    )
    fixed = fix_text(source, "m.py", [rules_by_code()["HL011"]], CONTEXT, unsafe=True).text
    assert fixed == (
        "from torch.autograd.graph import save_on_cpu\n"
        "\n"
        "# entered by hand\n"
        "with save_on_cpu():  # type: ignore\n"
        "    run()\n"
    )
