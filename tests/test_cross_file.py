"""Cross-file analysis (hooklint/project): small packages of our own under
tests/cross_file/<case>/<valid|invalid>/, each checked as a project of its own (a copy
under an empty ``[tool.hooklint]``), and the released llm-compressor pair.

Cases: a mixin's registration wrapper re-exported through a package ``__init__``
(mixin_wrapper), a removal helper in a base class reached by a relative import
(base_removal), a handle list a base class binds and empties in a method other files
call (base_owned_store), a capture hook imported from a sibling module (imported_hook), a
mixin from outside the project (outside), a ``super()`` post-hook whose body is
in the base class's file (super_post_hook), and a base class's method that returns a
handle and another, run by ``Module.apply``, that keeps handles on ``self``
(base_acquire), and a constructor that hooks the model a plain base class of another
file keeps from the caller (plain_base_constructor), a backward hook made by a
factory of another module (imported_hook_factory), and a capture class of another module
whose object holds its hooks until its ``remove()`` (imported_capture_class).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _hooklint_cli import check
from _released import released

CASES = Path(__file__).parent / "cross_file"

#: case/kind -> the findings expected: (file, row, column, code, a part of the message)
EXPECTED = {
    "mixin_wrapper/invalid": [
        ("tapkit/probe.py", 24, 13, "HL002", "(via `WatchMixin.watch`, watching.py:10)")
    ],
    "mixin_wrapper/valid": [],
    "outside/valid": [],
    "base_removal/invalid": [
        ("rec/features.py", 15, 33, "HL002", "its handle (`self.handles`) is never removed")
    ],
    "base_removal/valid": [],
    # A list the base binds and empties in a method this file never calls (another file
    # does): the base's; the invalid base only forgets it.
    "base_owned_store/invalid": [
        ("probes/inputs.py", 9, 29, "HL002", "its handle (`self.handles`) is never removed")
    ],
    "base_owned_store/valid": [],
    "imported_hook/invalid": [("feats/run.py", 5, 5, "HL002", "(hook defined in taps.py:4)")],
    "imported_hook/valid": [],
    "super_post_hook/invalid": [("track/timing.py", 21, 13, "HL001", "(state change in base.py:7)")],
    "super_post_hook/valid": [],
    "base_acquire/invalid": [
        ("attr/layer.py", 14, 19, "HL004", "(hooks from `Saliency._scale_inputs`, base.py:16)"),
        ("attr/layer.py", 15, 9, "HL004", "(hooks from `Saliency._attach`, base.py:12)"),
        ("attr/layer.py", 16, 17, "HL004", "`watch` is removed outside"),
    ],
    "base_acquire/valid": [],
    # The helper comes through ``from .layers import *``: a name the module calls
    # without binding it is looked up there.
    "star_import_helper/invalid": [("probes/run.py", 6, 14, "HL004", "(via `attach_probe`, layers.py:1)")],
    "star_import_helper/valid": [],
    # A constructor hooks the model its base class (another file, an `ABC`) keeps from
    # the caller; the whole hierarchy is read and nothing in it can take the hook off.
    # The valid base has a teardown (`detach`): that lifecycle is HL016's business.
    "plain_base_constructor/invalid": [
        ("attacks/scaled.py", 10, 17, "HL019", "`GradScale` hooks a module its `__init__` was given")
    ],
    "plain_base_constructor/valid": [],
    # A backward hook made by a factory of another module: the valid one never reads
    # `grad_input` (the deprecated API's wrong gradients do not matter to it).
    "imported_hook_factory/invalid": [("tally/wiring.py", 6, 5, "HL007", "`register_backward_hook` reports")],
    "imported_hook_factory/valid": [],
    # A capture class of another module: its constructor keeps the handles on `self`,
    # its `remove()` takes them off; the object stands for its handles.
    "imported_capture_class/invalid": [
        ("capkit/study.py", 5, 11, "HL004", "(hooks from `LayerCapture`, capture.py:1)")
    ],
    "imported_capture_class/valid": [],
}
#: What the same packages give with each file analysed alone (--no-cross-file).
ALONE = {
    "mixin_wrapper/invalid": [],  # the wrapper is unknown: no registration seen
    # The list is the base's (bound there, not here): alone, its removal is out of sight
    # either way, and the rule stays silent; only the base's code says the invalid one
    # merely forgets its handles.
    "base_removal/valid": [],
    "base_removal/invalid": [],
    "base_owned_store/invalid": [],
    "imported_hook/invalid": [],  # the hook's body is unknown
    "super_post_hook/invalid": [],  # what super()._enter/_leave change is unknown
    # The base class's handle-returning helper and its setup method run by ``Module.apply``
    # are unknown: only the file's own registration is seen.
    "base_acquire/invalid": [("attr/layer.py", 16, 17, "HL004")],
    "star_import_helper/invalid": [],  # what `attach_probe` returns is unknown
    "plain_base_constructor/invalid": [],  # the base (and what it keeps) is unknown
    # what the factory's hook reads is unknown: reported as if it read `grad_input`
    "imported_hook_factory/valid": [("tally/wiring.py", 6, 5, "HL007")],
    "imported_capture_class/invalid": [],  # what building the object does is unknown
}


def _project(tmp_path: Path, case: str, config: str = "") -> Path:
    root = tmp_path / "project"
    shutil.copytree(CASES / case, root)
    (root / "pyproject.toml").write_text(f"[tool.hooklint]\n{config}", encoding="utf-8")
    return root


def _run(root: Path, monkeypatch, *args: str) -> list[dict]:
    monkeypatch.chdir(root)
    result = check("--format", "json", "--config", "pyproject.toml", *args)
    assert result.exception is None and "Traceback" not in result.output, result.output
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _where(findings: list[dict]) -> list[tuple]:
    return sorted((f["filename"], f["location"]["row"], f["location"]["column"], f["code"]) for f in findings)


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_case_gives_the_expected_findings(case, tmp_path, monkeypatch):
    findings = _run(_project(tmp_path, case), monkeypatch, "--no-cache", ".")
    assert _where(findings) == sorted(e[:4] for e in EXPECTED[case]), findings
    for expected in EXPECTED[case]:
        (finding,) = [f for f in findings if (f["filename"], f["location"]["row"]) == expected[:2]]
        assert expected[4] in finding["message"], finding["message"]
        assert "\n" not in finding["message"]


@pytest.mark.parametrize("case", sorted(ALONE))
def test_each_file_alone_misses_the_other_files_evidence(case, tmp_path, monkeypatch):
    root = _project(tmp_path, case)
    assert _where(_run(root, monkeypatch, "--no-cache", "--no-cross-file", ".")) == sorted(ALONE[case])
    (root / "pyproject.toml").write_text("[tool.hooklint]\ncross-file = false\n", encoding="utf-8")
    assert _where(_run(root, monkeypatch, "--no-cache", ".")) == sorted(ALONE[case])


def test_the_fix_of_a_super_post_hook_pair_edits_only_the_checked_file(tmp_path, monkeypatch):
    root = _project(tmp_path, "super_post_hook/invalid")
    base = (root / "track" / "base.py").read_bytes()
    monkeypatch.chdir(root)
    result = check("--no-cache", "--config", "pyproject.toml", "--fix", ".")
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    fixed = (root / "track" / "timing.py").read_text(encoding="utf-8")
    assert "block.register_forward_hook(self._leave, always_call=True)" in fixed
    assert (root / "track" / "base.py").read_bytes() == base
    assert _run(root, monkeypatch, "--no-cache", ".") == []


def test_cross_file_setting_must_be_a_boolean(tmp_path, monkeypatch):
    root = _project(tmp_path, "mixin_wrapper/invalid", 'cross-file = "no"\n')
    monkeypatch.chdir(root)
    result = check("--no-cache", "--config", "pyproject.toml", ".")
    assert result.exit_code == 2 and "cross-file" in result.output and "Traceback" not in result.output


def test_evidence_in_another_file_is_a_related_location(tmp_path, monkeypatch):
    root = _project(tmp_path, "mixin_wrapper/invalid")
    (finding,) = _run(root, monkeypatch, "--no-cache", ".")
    assert finding["related"] == [{"row": 10, "column": 1, "filename": "tapkit/watching.py"}]
    monkeypatch.chdir(root)
    result = check("--no-cache", "--format", "sarif", "--config", "pyproject.toml", ".")
    (sarif,) = json.loads(result.stdout)["runs"][0]["results"]
    (related,) = sarif["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "tapkit/watching.py"
    assert related["physicalLocation"]["region"]["startLine"] == 10


def _stop_registering(root: Path) -> None:
    """The mixin's ``watch`` no longer registers anything (and its size changes)."""
    path = root / "tapkit" / "watching.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("handle = register(guarded)", "handle = None  # registering switched off"),
        encoding="utf-8",
    )


def test_a_result_resting_on_another_file_is_recomputed_when_that_file_changes(tmp_path, monkeypatch):
    root = _project(tmp_path, "mixin_wrapper/invalid")
    assert len(_run(root, monkeypatch, ".")) == 1
    assert len(_run(root, monkeypatch, ".")) == 1  # warm: from the run index
    assert len(_run(root, monkeypatch, "tapkit/probe.py")) == 1  # another run key: from the content cache
    assert any((root / ".hooklint_cache" / "summaries").rglob("*.json"))
    _stop_registering(root)
    assert _run(root, monkeypatch, ".") == []  # the run index entry recorded watching.py's stamp
    shutil.rmtree(root / ".hooklint_cache" / "runs")
    assert _run(root, monkeypatch, "tapkit/probe.py") == []  # the content cache entry recorded its digest


def test_a_result_resting_on_a_star_imported_module_is_recomputed_when_it_gains_a_helper(
    tmp_path, monkeypatch
):
    # The helper is renamed away: the star import offers nothing the file calls, which
    # the module's text alone says (no summary of it is read); the result rests on it.
    root = _project(tmp_path, "star_import_helper/invalid")
    run = root / "probes" / "run.py"  # calls nothing else of the module: only its text is read
    run.write_text(run.read_text(encoding="utf-8").replace(", describe(model)", ""), encoding="utf-8")
    layers = root / "probes" / "layers.py"
    original = layers.read_text(encoding="utf-8")
    layers.write_text(original.replace("def attach_probe", "def attach_probe_later"), encoding="utf-8")
    assert _run(root, monkeypatch, ".") == []
    layers.write_text(original, encoding="utf-8")
    shutil.rmtree(root / ".hooklint_cache" / "runs")
    assert _where(_run(root, monkeypatch, "probes/run.py")) == [("probes/run.py", 6, 14, "HL004")]


def test_a_corrupt_summary_entry_is_a_miss(tmp_path, monkeypatch):
    root = _project(tmp_path, "mixin_wrapper/invalid")
    assert len(_run(root, monkeypatch, ".")) == 1
    entries = list((root / ".hooklint_cache" / "summaries").rglob("*.json"))
    assert entries
    for entry in entries:
        entry.write_text('{"imports": [], "classes": 1}', encoding="utf-8")
    shutil.rmtree(root / ".hooklint_cache" / "runs")
    for entry in (root / ".hooklint_cache").glob("??/*.json"):
        entry.unlink()
    assert len(_run(root, monkeypatch, ".")) == 1


def test_one_file_reads_only_the_modules_it_needs(tmp_path, monkeypatch):
    from hooklint.project import store

    root = _project(tmp_path, "mixin_wrapper/invalid")
    (root / "tapkit" / "unrelated.py").write_text(
        "def add(m, f):\n    return m.register_forward_hook(f)\n", encoding="utf-8"
    )
    store._memory.clear()
    assert len(_run(root, monkeypatch, "--no-cache", "tapkit/probe.py")) == 1
    read = {(Path(p).relative_to(root.resolve()).as_posix(), full) for p, full in store._memory}
    # Outlines of the modules resolution passes through (and the checked file's own,
    # kept from its lint's parse); hook facts of the mixin's only.
    assert read == {
        ("tapkit/probe.py", False),
        ("tapkit/__init__.py", False),
        ("tapkit/watching.py", False),
        ("tapkit/watching.py", True),
    }


# -- resolution, in process ----------------------------------------------------------------
def _tree(root: Path, files: dict[str, str]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_imports_aliases_star_imports_and_cycles_resolve_within_the_root(tmp_path):
    from hooklint.project.resolve import FileView

    _tree(tmp_path, {
        "pkg/__init__.py": "from .core import *\n",
        "pkg/core.py": "from pkg.more import Base as Root\n\nclass Mixin(Root):\n    def hook_in(self, m, fn):\n        pass\n",
        "pkg/more.py": "import pkg.cycle\n\nclass Base:\n    def done(self):\n        pass\n",
        "pkg/cycle.py": "from pkg.more import *\nfrom pkg.cycle import Nothing\n",
        "app/use.py": "import pkg.core as c\nimport torch.nn as nn\nfrom pkg import Mixin\n\n"
        "class A(c.Mixin, nn.Module):\n    pass\n\nclass B(Mixin):\n    pass\n",
    })  # fmt: skip
    text = (tmp_path / "app" / "use.py").read_text(encoding="utf-8")
    view = FileView(str(tmp_path / "app" / "use.py"), text)
    assert [r.name for r in view.mro("A")] == ["A", "Mixin", "Base"]  # nn.Module: outside, unknown
    assert [r.name for r in view.mro("B")] == ["B", "Mixin", "Base"]  # through the star re-export
    assert view.method("B", "done").name == "Base.done"
    assert view.method("B", "missing") is None
    assert view.lookup(str(tmp_path / "pkg" / "cycle.py"), "Nothing") is None  # a cycle ends
    assert view.dotted(view.path, "nn.Module") is None
    assert set(view.dependencies()) == {
        str(tmp_path / "pkg" / n) for n in ("__init__.py", "core.py", "more.py", "cycle.py")
    }


def test_a_module_outside_the_project_root_is_never_read(tmp_path):
    from hooklint.project.resolve import FileView

    _tree(tmp_path / "inner", {"app/use.py": "from lib import Mixin\n\nclass A(Mixin):\n    pass\n"})
    (tmp_path / "lib.py").write_text(
        "class Mixin:\n    def watch(self, m, fn):\n        return m.register_forward_hook(fn)\n"
    )
    view = FileView(
        str(tmp_path / "inner" / "app" / "use.py"), (tmp_path / "inner" / "app" / "use.py").read_text()
    )
    assert [r.name for r in view.mro("A")] == ["A"]
    assert view.dependencies() == {}


def test_a_link_inside_the_root_to_a_module_outside_it_is_never_read(tmp_path):
    from hooklint.project.resolve import forget_places

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "lib.py").write_text("def attach(m, fn):\n    return m.register_forward_hook(fn)\n")
    root = tmp_path / "inner"
    _tree(root, {
        "pkg/__init__.py": "",
        "app/use.py": "from pkg.ext import attach\nfrom vendor.lib import attach as again\n\n"
        "def go(m, f):\n    attach(m, f)\n    again(m, f)\n",
    })  # fmt: skip
    try:
        (root / "pkg" / "ext.py").symlink_to(outside / "lib.py")  # a file link
        (root / "vendor").symlink_to(outside, target_is_directory=True)  # a directory link
    except OSError:
        pytest.skip("this file system has no symbolic links")
    use = root / "app" / "use.py"
    view = _view(use)
    assert view.helper_names() == ()
    assert view.function("attach") is None and view.function("again") is None
    assert view.dependencies() == {}
    # the same module, inside the root, is read
    (root / "pkg" / "ext.py").unlink()
    (root / "pkg" / "ext.py").write_text((outside / "lib.py").read_text())
    view = _view(use)
    assert view.helper_names() == ()  # within a run, what the file system said stands
    forget_places()  # as the next run starts
    view = _view(use)
    assert view.helper_names() == ("attach",)


def test_a_run_sees_modules_created_since_the_last_run(tmp_path, monkeypatch):
    """The file system's answers are shared by one run's files, not kept from one run
    to the next in the same process (an editor's language server)."""
    from hooklint.config import load_config
    from hooklint.engine import check_text
    from hooklint.runner import CheckRequest, build_settings

    use_text = (
        "from lib.hooks import attach\n\ndef go(m, f):\n    attach(m, f)\n\n"
        "def once(m, f):\n    h = m.register_forward_hook(f)\n    h.remove()\n"
    )
    _tree(tmp_path, {"app/use.py": use_text})
    monkeypatch.chdir(tmp_path)
    settings = build_settings(CheckRequest([tmp_path], load_config(tmp_path / "pyproject.toml")))
    use = tmp_path / "app" / "use.py"
    first = check_text(use.read_text(encoding="utf-8"), str(use), settings)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "hooks.py").write_text("def attach(m, fn):\n    return m.register_forward_hook(fn)\n")
    second = check_text(use.read_text(encoding="utf-8"), str(use), settings)
    hooks = str(tmp_path / "lib" / "hooks.py")
    assert hooks not in first.dependencies and hooks in second.dependencies  # read: it is there now


#: Another file's wrappers and removal helpers, reached or not, and modules without hook code.
_WIDEN = {
    "lib/hooks.py": "def attach(m, fn):\n    return m.register_forward_hook(fn)\n\n"
    "def detach(handles):\n    for h in handles:\n        h.remove()\n\n"
    "def stored(m, fn):\n    m.register_forward_hook(fn)\n",
    # a plain module re-exporting the wrapper, across a parenthesised import list
    "lib/again.py": "from lib.hooks import (  # (re-exported)\n    detach,\n    attach,\n)\n",
    "lib/plain.py": "import os\n\ndef wipe(path):\n    os.remove(path)\n",
    "lib/named.py": "def register_forward_hook(m, fn):\n    \"\"\"Like m.register_forward_hook(fn).\"\"\"\n    return None\n",
    "lib/base.py": "class Base:\n    def add(self, m, fn):\n        return m.register_forward_hook(fn)\n\n"
    "    def never_called(self, m, fn):\n        return m.register_forward_hook(fn)\n",
    "app/use.py": "from lib.again import attach, detach\nfrom lib.plain import wipe\nfrom lib.named import register_forward_hook\n"
    "from lib.hooks import stored\nfrom lib.base import Base\n\n"
    "class A(Base):\n    def go(self, m, f):\n        self.h = self.add(m, f)\n        attach(m, f)\n"
    "        detach([])\n        wipe('x')\n        stored(m, f)\n        register_forward_hook(m, f)\n",
}  # fmt: skip


def test_only_other_files_wrappers_and_removal_helpers_the_file_calls_widen_the_fast_path(tmp_path):
    from hooklint.project import store

    _tree(tmp_path, _WIDEN)
    store._memory.clear()
    use = tmp_path / "app" / "use.py"
    view = _view(use)
    # ``stored`` registers but neither returns nor keeps the handle: no wrapper; ``wipe``
    # (os.remove) and a def only named like a registration hold no hook code.
    assert view.helper_names() == ("add", "attach", "detach")
    outlined = {Path(p).name for p, full in store._memory if not full}
    assert "plain.py" not in outlined  # no hook token, no import naming them: never parsed
    assert str(tmp_path / "lib" / "plain.py") in view.dependencies()


#: A module with hook code, and what it also defines without any: a class, a plain
#: function, a value; a package ``__init__`` with a plain helper.
_MIXED = {
    "lib/__init__.py": "def setup():\n    return 1\n",
    "lib/mixed.py": "class Thing:\n    def go(self, m, fn):\n        return m.register_forward_hook(fn)\n\n"
    "def plain(x):\n    return x + 1\n\nVALUE = dict\n\n"
    "def calls_attach(m, fn):\n    return attach(m, fn)\n\n"
    "def attach(m, fn):\n    return m.register_forward_hook(fn)\n",
    "app/use.py": "from lib import setup\nfrom lib.mixed import Thing, plain, VALUE, calls_attach\n\n"
    "def go(m, f):\n    setup()\n    Thing()\n    plain(1)\n    VALUE()\n    calls_attach(m, f)\n",
    "app/other.py": "from lib.mixed import Thing, VALUE\n\ndef go(m, f):\n    Thing()\n    VALUE()\n",
}


def test_a_module_with_hook_code_is_parsed_only_for_a_name_it_may_define_with_some(tmp_path):
    from hooklint.project import store

    _tree(tmp_path, _MIXED)
    store._memory.clear()
    other = tmp_path / "app" / "other.py"
    view = _view(other)
    assert view.helper_names() == ()
    # a value is no def or class: not looked up; the class is (its object may hold the
    # hooks its constructor registers), read from the module's outline alone: its
    # `__init__` holds no hook code, so no hook facts are computed
    assert set(store._memory) == {(view.path, False), (str(tmp_path / "lib" / "mixed.py"), False)}
    assert str(tmp_path / "lib" / "mixed.py") in view.dependencies()
    use = tmp_path / "app" / "use.py"
    view = _view(use)
    assert view.helper_names() == ("calls_attach",)  # it calls a wrapper of its module
    assert str(tmp_path / "lib" / "__init__.py") in view.dependencies()  # no hook text: not parsed
    assert (str(tmp_path / "lib" / "__init__.py"), False) not in store._memory


#: A module whose registration tokens are words for a reader (a warning's text, a
#: comment) beside one real wrapper, and a module that calls both kinds.
_PROSE = {
    "lib/__init__.py": "",
    "lib/hooks.py": "import warnings\n\n"
    "def load(m):\n    warnings.warn('register_forward_hook is not called here')\n    return m\n\n"
    "def mark(m):\n    m.done = True  # callers then m.register_forward_hook(f)\n    return m\n\n"
    "def attach(m, fn):\n    return getattr(m, 'register_forward_hook')(fn)\n",
    "app/use.py": "from lib.hooks import attach, load, mark\n\ndef go(m, f):\n    load(m)\n    mark(m)\n",
    "app/wrap.py": "from lib.hooks import attach, load\n\ndef go(m, f):\n    load(m)\n    return attach(m, f)\n",
}


def test_registration_words_in_prose_or_comments_compute_no_hook_facts(tmp_path):
    from hooklint.project import store

    _tree(tmp_path, _PROSE)
    store._memory.clear()
    hooks = str(tmp_path / "lib" / "hooks.py")
    use = tmp_path / "app" / "use.py"
    view = _view(use)
    assert view.helper_names() == ()
    assert (hooks, True) not in store._memory  # ``load`` and ``mark`` are not hooky: no libcst parse
    marks = store._memory[(hooks, False)][1].data["functions"]
    assert [name for name, entry in marks.items() if entry.get("hooky")] == ["attach"]
    wrap = tmp_path / "app" / "wrap.py"
    view = _view(wrap)
    assert view.helper_names() == ("attach",)  # a getattr's attribute name is code
    assert (hooks, True) in store._memory


#: Re-exports two modules deep: to a wrapper (through plain ``__init__`` and a plain
#: module that only re-export it), and to plain functions (a module without hook text).
_CHAIN = {
    "lib/__init__.py": "from .again import attach, scale\n",
    "lib/again.py": "from lib.hooks import attach\nfrom .maths import scale\n",
    "lib/hooks.py": "def attach(m, fn):\n    return m.register_forward_hook(fn)\n",
    "lib/maths.py": "def scale(x):\n    return 2 * x\n",
    "app/use.py": "from lib import attach, scale\n\ndef go(m, f):\n    scale(1)\n    attach(m, f)\n",
}


def test_every_module_of_an_import_chain_is_parsed_only_if_its_text_may_bind_hook_code(tmp_path):
    from hooklint.project import store

    _tree(tmp_path, _CHAIN)
    store._memory.clear()
    use = tmp_path / "app" / "use.py"
    view = _view(use)
    assert view.helper_names() == ("attach",)  # the wrapper, two re-exports away
    outlined = {Path(p).relative_to(tmp_path).as_posix() for p, full in store._memory if not full}
    # ``scale`` is re-exported by both modules on the way, but where it is defined
    # there is no hook text: that module is never parsed, and the result rests on it.
    assert outlined == {"app/use.py", "lib/__init__.py", "lib/again.py", "lib/hooks.py"}
    assert str(tmp_path / "lib" / "maths.py") in view.dependencies()


#: Re-exports whose ends the texts show: a name re-exported from a plain module or
#: from outside the project, one that is a module, and one renamed on the way to a wrapper.
_REEXPORTS = {
    "lib/__init__.py": "from .again import scale, outside, sub, hook_it\n",
    "lib/again.py": "from .maths import scale\nfrom torch.nn import outside\nfrom . import sub\n"
    "from .hooks import attach as hook_it\n\ndef unused(m):\n    m.h.remove()\n",
    "lib/maths.py": "def scale(x):\n    return 2 * x\n",
    "lib/sub.py": "X = 1\n",
    "lib/hooks.py": "def attach(m, fn):\n    return m.register_forward_hook(fn)\n",
    "app/plain.py": "from lib import scale, outside, sub\n\ndef go(m):\n    scale(1)\n    outside(m)\n    sub(m)\n",
    "app/renamed.py": "from lib import hook_it\n\ndef go(m, f):\n    hook_it(m, f)\n",
}


def test_an_import_chain_the_texts_show_ends_without_hook_code_parses_no_module_of_it(tmp_path):
    from hooklint.project import store

    _tree(tmp_path, _REEXPORTS)
    store._memory.clear()
    plain = tmp_path / "app" / "plain.py"
    view = _view(plain)
    assert view.helper_names() == ()
    # each name is imported on the way (``lib/again.py`` also has hook text), but the
    # texts show where it ends: a plain def, torch, a submodule; no module is parsed
    assert set(store._memory) == {(view.path, False)}
    for name in ("__init__", "again", "maths"):
        assert str(tmp_path / "lib" / f"{name}.py") in view.dependencies()
    renamed = tmp_path / "app" / "renamed.py"
    view = _view(renamed)
    assert view.helper_names() == ("hook_it",)  # ``attach as hook_it``: followed by its own name


def _view(path: Path):
    """The view of the file at ``path``, as its check builds one from the text read."""
    from hooklint.project.resolve import FileView

    return FileView(str(path), path.read_text(encoding="utf-8"))


def _every_file_view(root: Path):
    for path in sorted(root.rglob("*.py")):
        yield _view(path)


def _case_root(tmp_path: Path, case: str) -> Path:
    """The root of a multi-file case: a project of ``tests/cross_file`` or one of the
    trees written here."""
    if case in ("mixed", "chain", "reexports"):
        _tree(tmp_path, {"mixed": _MIXED, "chain": _CHAIN, "reexports": _REEXPORTS}[case])
        return tmp_path
    return _project(tmp_path, case)


@pytest.mark.parametrize("case", [*sorted(EXPECTED), "mixed", "chain", "reexports"])
def test_the_text_pre_scan_gives_the_helpers_that_resolution_gives(case, tmp_path, monkeypatch):
    """The fast path that decides from a module's text that an imported name cannot
    reach hook code (never parsing that module) gives the same helper names, for
    every file of the multi-file cases, as resolving every called imported name."""
    from hooklint.project import store
    from hooklint.project.resolve import FileView

    root = _case_root(tmp_path, case)
    store._memory.clear()
    fast = [view.helper_names() for view in _every_file_view(root)]
    with monkeypatch.context() as patched:
        patched.setattr(FileView, "_may_define_hook_code", lambda self, path, name: True)
        store._memory.clear()
        full = [view.helper_names() for view in _every_file_view(root)]
    assert fast == full
    # (the cases whose evidence is a wrapper, a removal helper, a handle-acquiring
    # helper or a class whose object holds its hooks: not an imported hook body, a
    # base's state change, a base that only forgets its handles)
    assert any(fast) == (
        case
        in (
            "mixed",
            "chain",
            "reexports",
            "mixin_wrapper/invalid",
            "mixin_wrapper/valid",
            "base_removal/valid",
            "star_import_helper/invalid",
            "star_import_helper/valid",
            "base_acquire/invalid",
            "base_acquire/valid",
            "imported_capture_class/invalid",
            "imported_capture_class/valid",
        )
    )


def _helpers_asked_one_name_at_a_time(self, class_name, called):
    """The oracle for ``FileView._inherited_helpers``: each name looked up alone."""
    found = set()
    for name in called:
        ref = self.method(class_name, name, after_own=True)
        if ref is not None and self._is_helper(ref):
            found.add(name)
    return found


def _removable_from_every_fact(self, ref):
    """The oracle for ``FileView.removable_construction``: the facts of all three
    methods read, without first asking whether their outline marks them hooky."""
    from hooklint.project.resolve import Ref

    methods = ref.entry.get("methods", {}) if ref.entry else {}

    def facts(name):
        entry = methods.get(name)
        method = Ref(ref.path, "method", f"{ref.name}.{name}", entry) if entry is not None else None
        return (self.facts_of(method) or {}) if method is not None else {}

    fills = set(facts("__init__").get("fills", ()))
    removed = set(facts("remove").get("removes", {}).get("attrs", ()))
    if not fills or not fills <= removed or fills & set(facts("__del__").get("removes", {}).get("attrs", ())):
        return None
    return frozenset(fills)


@pytest.mark.parametrize("case", [*sorted(EXPECTED), "mixed", "chain", "reexports"])
def test_the_shortcuts_of_helper_resolution_give_what_each_lookup_gives(case, tmp_path, monkeypatch):
    """A class's bases are walked once for every name its code calls
    (``_inherited_helpers``), and a class whose ``__init__`` or ``remove`` holds no
    hook code is ruled out before its module's hook facts are computed: the helper
    names are those that asking each name alone, and reading every method's facts,
    give, for every file of the multi-file cases."""
    from hooklint.project import store
    from hooklint.project.resolve import FileView

    root = _case_root(tmp_path, case)
    store._memory.clear()
    fast = [view.helper_names() for view in _every_file_view(root)]
    with monkeypatch.context() as patched:
        patched.setattr(FileView, "_inherited_helpers", _helpers_asked_one_name_at_a_time)
        patched.setattr(FileView, "removable_construction", _removable_from_every_fact)
        store._memory.clear()
        slow = [view.helper_names() for view in _every_file_view(root)]
    assert fast == slow


def test_a_class_whose_remove_holds_no_hook_code_is_ruled_out_without_its_hook_facts(tmp_path):
    """``Capture(model)`` stands for its handles only when its ``remove`` removes what
    its ``__init__`` keeps: a class whose ``remove`` holds no hook code (or has none)
    is not one, decided from its module's outline; the module's hook facts (a parse)
    are computed only for the class whose two methods both hold hook code."""
    from hooklint.project import store

    _tree(tmp_path, {
        "lib/__init__.py": "",
        "lib/caps.py": "class Keeps:\n    def __init__(self, m):\n"
        "        self.h = m.register_forward_hook(print)\n    def remove(self):\n"
        "        self.h = None\n\n\nclass Removes:\n    def __init__(self, m):\n"
        "        self.h = m.register_forward_hook(print)\n    def remove(self):\n"
        "        self.h.remove()\n",
        "app/use_keeps.py": "from lib.caps import Keeps\n\ndef run(m, x):\n    c = Keeps(m)\n    m(x)\n",
        "app/use_removes.py": "from lib.caps import Removes\n\ndef run(m, x):\n    c = Removes(m)\n"
        "    m(x)\n    c.remove()\n",
    })  # fmt: skip
    caps = str((tmp_path / "lib" / "caps.py").resolve())
    store._memory.clear()
    assert _view(tmp_path / "app" / "use_keeps.py").helper_names() == ()
    assert (caps, True) not in store._memory
    assert _view(tmp_path / "app" / "use_removes.py").helper_names() == ("Removes",)
    assert (caps, True) in store._memory


@pytest.mark.parametrize("case", [*sorted(EXPECTED), "mixed", "chain", "widen"])
def test_a_file_the_text_shows_reaches_no_helper_has_none(case, tmp_path):
    """``reaches_no_helper`` (decided from the text, without parsing the file) is True
    only for files whose ``helper_names`` (the outline parsed, each class's own
    calls) is empty, and it is False for a file that calls another file's wrapper."""
    from hooklint.project import store

    if case in ("mixed", "chain", "widen"):
        _tree(tmp_path, {"mixed": _MIXED, "chain": _CHAIN, "widen": _WIDEN}[case])
        root = tmp_path
    else:
        root = _project(tmp_path, case)
    store._memory.clear()
    decided = [view.reaches_no_helper() for view in _every_file_view(root)]
    store._memory.clear()
    helpers = [view.helper_names() for view in _every_file_view(root)]
    assert all(not names for names, none in zip(helpers, decided) if none)
    if case in ("chain", "mixin_wrapper/invalid"):
        assert not all(decided)  # the file calling the wrapper is not passed over


def test_a_project_file_without_a_seed_is_not_parsed(tmp_path, monkeypatch):
    """A file whose tokens only sit inside longer names, and whose calls reach no
    other file's helper, is done before CPython parses it, with hook text or without
    (``register_hook_for_user`` holds some); one that calls another file's
    wrapper is parsed and linted (the finding the wrapper gives)."""
    import hooklint.engine.lint as lint
    from hooklint.engine import lint_text
    from hooklint.project import store
    from hooklint.project.resolve import FileView
    from hooklint.rules import all_rules
    from hooklint.rules.base import RuleContext

    _tree(tmp_path, {
        "lib/hooks.py": "def attach(m, fn):\n    return m.register_forward_hook(fn)\n",
        "app/plain.py": "from lib.hooks import attach\n\nclass Counter:\n    def go(self):\n"
        "        return self.always_callable()\n",
        "app/use.py": "from lib.hooks import attach\n\nclass Probe:\n    def go(self, m):\n"
        "        self.feats = []\n        attach(m, lambda mod, i, o: self.feats.append(o))\n"
        "        # register_forward_hook\n",
        # hook text (a registration token inside a longer name), no seed, no other
        # file's helper
        "app/custom.py": "HOOKS = []\n\ndef register_hook_for_user(fn):\n    HOOKS.append(fn)\n\n"
        "class Box:\n    def go(self):\n        register_hook_for_user(print)\n        attach\n",
    })  # fmt: skip
    rules = [r for r in all_rules() if r.screenable and not r.preview]
    parsed = []
    original = lint._cpython_parse
    monkeypatch.setattr(lint, "_cpython_parse", lambda text: parsed.append(text) or original(text))
    store._memory.clear()
    for name, expected in (("plain.py", []), ("custom.py", []), ("use.py", ["HL002"])):
        path = tmp_path / "app" / name
        text = path.read_text(encoding="utf-8")
        context = RuleContext(project=FileView(str(path), text))
        assert [v.code for v in lint_text(text, str(path), rules, context)] == expected
        assert (text in parsed) == bool(expected)


def test_summaries_are_json_data_with_wrappers_and_removal_helpers():
    from hooklint.project.summary import is_summary, summarise

    text = (CASES / "mixin_wrapper" / "invalid" / "tapkit" / "watching.py").read_text(encoding="utf-8")
    data = json.loads(json.dumps(summarise(text)))
    assert is_summary(data)
    methods = data["classes"]["WatchMixin"]["methods"]
    assert methods["watch"]["wrapper"] == {"hook": 1, "hook_param": "fn", "target": 0, "api": None}
    base = summarise((CASES / "base_removal" / "valid" / "rec" / "base.py").read_text(encoding="utf-8"))
    assert base["classes"]["Recorder"]["methods"]["_finish"]["removes"] == {
        "params": [],
        "attrs": ["self.handles"],
    }
    assert summarise("def broken(:\n") == {"imports": {}, "classes": {}, "functions": {}}


def test_summaries_say_which_methods_return_or_keep_the_handles_they_register():
    from hooklint.project.summary import is_summary, summarise

    base = summarise((CASES / "base_acquire" / "valid" / "attr" / "base.py").read_text(encoding="utf-8"))
    methods = base["classes"]["Saliency"]["methods"]
    assert methods["_scale_inputs"].get("returns_handles") is True and "fills" not in methods["_scale_inputs"]
    assert methods["_attach"]["fills"] == ["self.handles"]  # through the local name `handle`
    assert "returns_handles" not in methods["_attach"] and "fills" not in methods["_clear"]
    # A method that drops one of its handles keeps nothing for a caller to remove.
    dropping = summarise(
        "class T:\n    def on(self, m, f):\n        self.hs.append(m.register_forward_hook(f))\n"
        "        m.register_forward_pre_hook(f)\n"
    )
    assert "fills" not in dropping["classes"]["T"]["methods"]["on"]
    for bad in ({"returns_handles": 1}, {"fills": "self.handles"}, {"fills": [3]}):
        broken = json.loads(json.dumps(base))
        broken["classes"]["Saliency"]["methods"]["_attach"].update(bad)
        assert not is_summary(broken)


# -- the released llm-compressor pair -----------------------------------------------------
AUTOROUND = "llmcompressor/modifiers/autoround/base.py"


def _released_project(tmp_path: Path, version: str) -> Path:
    root = tmp_path / version
    shutil.copytree(released("llmcompressor", version), root)
    (root / "pyproject.toml").write_text("[tool.hooklint]\n", encoding="utf-8")  # no registration-wrappers
    return root


def test_autoround_capture_before_the_fix_is_flagged_through_the_mixins_wrapper(tmp_path, monkeypatch):
    root = _released_project(tmp_path, "0.13.0")
    for paths in ((".",), (AUTOROUND,)):
        findings = [f for f in _run(root, monkeypatch, "--no-cache", *paths) if f["filename"] == AUTOROUND]
        assert _where(findings) == [(AUTOROUND, 239, 17, "HL002")], findings
        assert "(via `HooksMixin.register_hook`, hooks.py:69)" in findings[0]["message"]
        assert {"row": 69, "column": 1, "filename": "llmcompressor/modifiers/utils/hooks.py"} in findings[0][
            "related"
        ]


def test_autoround_capture_after_the_fix_is_clean(tmp_path, monkeypatch):
    root = _released_project(tmp_path, "0.14.0.1")
    for paths in ((".",), (AUTOROUND,)):
        assert [f for f in _run(root, monkeypatch, "--no-cache", *paths) if f["filename"] == AUTOROUND] == []


_TWO_STORES_BASE = """\
class Tracer:
    def __init__(self, model):
        self.model = model
        self.outputs = []
        self.grads = []

    def _keep_out(self, module, args, output):
        self.last = output.detach()

    def _keep_grad(self, module, grad_in, grad_out):
        self.last_grad = grad_out[0].detach()

    def _attach(self, module):
        self.outputs.append(module.register_forward_hook(self._keep_out))
        self.grads.append(module.register_full_backward_hook(self._keep_grad))

    def _detach(self):
        for handle in self.outputs:
            handle.remove()
        for handle in self.grads:
            handle.remove()
"""

_TWO_STORES_USER = """\
from .base import Tracer


class LayerTracer(Tracer):
    def _note(self, module, args):
        self.shape = args[0].shape

    def trace(self, batch):
        self.model.apply(self._attach)
        with self.model.register_forward_pre_hook(self._note):
            self.model(batch).sum().backward()
        self._detach()
"""


def test_a_base_helper_keeping_two_stores_is_named_alike_in_every_process(tmp_path):
    """Which of the stores another file's helper keeps a message names does not depend
    on the process's string hashing (the summaries' lists are sorted; sets are not)."""
    from _hooklint_cli import run_subprocess, write

    root = tmp_path / "project"
    write(root, "pyproject.toml", "[tool.hooklint]\n")
    write(root, "tr/__init__.py", "")
    write(root, "tr/base.py", _TWO_STORES_BASE)
    write(root, "tr/layer.py", _TWO_STORES_USER)
    outputs = set()
    for seed in ("0", "1", "2", "3"):
        done = run_subprocess(
            ["check", "--no-cache", "--format", "concise", "tr/layer.py"], root, env={"PYTHONHASHSEED": seed}
        )
        assert done.returncode == 1, done.stdout + done.stderr
        outputs.add(done.stdout)
    (output,) = outputs
    assert (
        "tr/layer.py:9:9: HL004" in output.decode() and "`self.grads` is removed outside" in output.decode()
    )


def test_a_file_outlined_for_another_files_imports_is_not_outlined_again(tmp_path, monkeypatch):
    """The outline a run computed for a module that another file imports from is the
    checked module's own outline when the bytes are the same; an editor's buffer that
    differs from the file gets its own."""
    import hooklint.project.text_outline as text_outline
    from hooklint.project import store
    from hooklint.project.resolve import FileView

    _tree(tmp_path, {
        "lib/__init__.py": "",
        "lib/plain.py": "def helper(x):\n    return x\n\nclass Base:\n    def go(self):\n        return 1\n",
        "app/use.py": "from lib.plain import Base\n\nclass Sub(Base):\n    def run(self):\n        return self.go()\n",
    })  # fmt: skip
    store._memory.clear()
    use, plain = tmp_path / "app" / "use.py", tmp_path / "lib" / "plain.py"
    view = FileView(str(use), use.read_text(encoding="utf-8"), raw=use.read_bytes())
    assert view.reaches_no_helper()
    assert (str(plain), False) in store._memory  # read for ``Base.go``
    calls = []
    original = text_outline.text_outline
    monkeypatch.setattr(text_outline, "text_outline", lambda *a, **k: calls.append(a) or original(*a, **k))
    text = plain.read_text(encoding="utf-8")
    view = FileView(str(plain), text, raw=plain.read_bytes())
    assert view.reaches_no_helper() and calls == []
    assert view.summary(view.path)["classes"]["Base"]["methods"] == {"go": {"line": 5, "params": []}}
    edited = text.replace("return 1", "return 2")
    view = FileView(str(plain), edited, raw=edited.encode())
    assert view.reaches_no_helper() and len(calls) == 1
