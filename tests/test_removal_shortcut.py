"""HL004 stops before building the handle model when nothing in the module can remove
a hook (:func:`hooklint.analysis.handles.may_remove`) and no ``__enter__`` can keep
one: the shortcut gives exactly the findings of building the model.

Checked three ways: each removal form the model reads makes ``may_remove`` say yes
(and code without one makes it say no); on every rule example, every file in
``examples/`` and generated programs, a model holding any removal always comes with
``may_remove`` saying yes; and HL004's findings (fixes included) are the same with the
shortcut on and forced off, on those programs and on a project whose only removal is
another file's helper.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from _hooklint_cli import check
from test_fast_path_equivalence import EVERY, EXAMPLES, generated

import hooklint.rules.hl004_hook_removal_not_exception_safe as hl004
from hooklint.analysis.collector import collect
from hooklint.analysis.handles import handle_model, may_remove
from hooklint.engine import lint_text
from hooklint.engine.parse import parse_module
from hooklint.rules.base import RuleContext

#: Code holding a removal the handle model reads, one form each.
REMOVING = {
    "method": "def f(m):\n    h = m.register_forward_hook(g)\n    m(1)\n    h.remove()\n",
    "loop": "def f(m, hs):\n    hs.append(m.register_forward_hook(g))\n    for h in hs:\n        h.remove()\n",
    "comprehension": "def f(hs):\n    [h.remove() for h in hs]\n",
    "map": "def f(hs):\n    list(map(lambda h: h.remove(), hs))\n",
    "helper by name": "def f(m):\n    hs = [m.register_forward_hook(g)]\n    remove_hooks(hs)\n",
    "helper imported under another name": "from tools import remove_hooks as wipe\n"
    "def f(m, x):\n    hs = [m.register_forward_hook(g)]\n    m(x)\n    wipe(hs)\n",
    "helper in camel case": "class A:\n    def f(self):\n        self.removeAll(self.hs)\n",
    "handed to a finalizer": "import atexit\ndef f(m):\n    h = m.register_forward_hook(g)\n    atexit.register(h.remove)\n",
    "looked up": 'def f(h):\n    undo = getattr(h, "remove", None)\n    undo()\n',
    "looked up and called": 'def f(h):\n    getattr(h, "remove")()\n',
    "module level": "h = m.register_forward_hook(g)\nrun()\nh.remove()\n",
}

#: Code in which nothing removes a hook.
KEEPING = {
    "registrations only": "def f(m):\n    m.register_forward_hook(g)\n    m.register_forward_pre_hook(g)\n",
    "handles kept": "class A:\n    def attach(self, m):\n        self.h = m.register_forward_hook(self.g)\n",
    "handles dropped": "def f(m):\n    hs = [m.register_forward_hook(g)]\n    hs.clear()\n    del hs\n",
    "with": "def f(m, x):\n    with m.register_forward_hook(g):\n        m(x)\n",
    "a word in a comment": "def f(m):\n    m.register_forward_hook(g)  # remove it later\n",
}


def _facts(code: str):
    return collect(parse_module(code))


@pytest.mark.parametrize("name", sorted(REMOVING))
def test_every_removal_form_may_remove(name):
    assert may_remove(_facts(REMOVING[name]))


@pytest.mark.parametrize("name", sorted(KEEPING))
def test_code_without_a_removal_may_not(name):
    facts = _facts(KEEPING[name])
    assert not may_remove(facts)
    model = handle_model(facts)
    assert not any(model.removals_in(scope) for scope in model.scopes())


def _programs():
    for rule in EVERY:
        for kind in ("VALID", "INVALID"):
            for index, example in enumerate(getattr(rule, kind)):
                code = textwrap.dedent(example.code).lstrip("\n")
                yield pytest.param(
                    code, RuleContext(**example.options), id=f"{rule.code}-{kind.lower()}-{index}"
                )
    for path in sorted(EXAMPLES.glob("*.py")):
        yield pytest.param(path.read_text(encoding="utf-8"), RuleContext(), id=path.name)
    for seed in range(60):
        yield pytest.param(generated(seed), RuleContext(), id=f"generated-{seed}")
    for name, code in {**REMOVING, **KEEPING}.items():
        yield pytest.param(code, RuleContext(), id=name)


def _without_shortcut(monkeypatch) -> None:
    monkeypatch.setattr(hl004, "may_remove", lambda facts: True)


def _hl004(text: str, context: RuleContext):
    found = lint_text(text, "m.py", [hl004.HookRemovalNotExceptionSafe], context)
    return [(v.start, v.end, v.message, v.fix, v.fix_withheld) for v in found]


@pytest.mark.parametrize(("code", "context"), list(_programs()))
def test_a_model_with_a_removal_is_one_that_may_remove(code, context):
    facts = _facts(code)
    model = handle_model(facts)
    if any(model.removals_in(scope) for scope in model.scopes()):
        assert may_remove(facts)


@pytest.mark.parametrize(("code", "context"), list(_programs()))
def test_hl004_finds_the_same_with_and_without_the_shortcut(code, context, monkeypatch):
    with_shortcut = _hl004(code, context)
    _without_shortcut(monkeypatch)
    assert _hl004(code, context) == with_shortcut


def test_the_programs_hold_hl004_findings_and_files_the_shortcut_skips():
    """The comparison above means something: some programs have HL004 findings, and
    some have registrations but nothing that removes (where the shortcut acts)."""
    programs = [p.values for p in _programs()]
    assert sum(bool(_hl004(code, context)) for code, context in programs) >= 20
    skipped = 0
    for code, _ in programs:
        facts = _facts(code)
        skipped += bool(facts.registrations) and not may_remove(facts)
    assert skipped >= 20


#: A project whose checked file removes its hooks only through a base class's method
#: in another file: no word ``remove`` in the file itself.
PROJECT = {
    "pyproject.toml": "[tool.hooklint]\n",
    "pkg/__init__.py": "",
    "pkg/base.py": "class Base:\n    def cleanup(self):\n        for h in self.handles:\n            h.remove()\n",
    "pkg/layer.py": textwrap.dedent(
        """\
        from .base import Base


        class Layer(Base):
            def grab(self, module, args, output):
                self.seen = output

            def run(self, model, x):
                self.handles = [model.register_forward_hook(self.grab)]
                model(x)
                self.cleanup()
        """
    ),
}


def test_another_files_removal_helper_is_not_skipped(tmp_path: Path, monkeypatch):
    for name, text in PROJECT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    def findings():
        result = check("--format", "json", "--no-cache", "--select", "HL004", ".")
        assert result.exit_code == 1, result.output
        return [(f["filename"], f["location"]["row"], f["message"]) for f in json.loads(result.stdout)]

    found = findings()
    assert [(f, r) for f, r, _ in found] == [("pkg/layer.py", 9)]
    assert "removed outside `finally`" in found[0][2]
    _without_shortcut(monkeypatch)
    assert findings() == found
