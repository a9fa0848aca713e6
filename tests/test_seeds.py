"""Acceptance on the two real bugs the project exists for (/work/shared/seeds in the
project notes): the released packages before and after each upstream fix.

- bitsandbytes 0.49.2, ``bitsandbytes/nn/parametrize.py``: the forward hook that
  decrements ``parametrize._cache_enabled`` is registered without ``always_call=True``
  (line 153); 0.50.2 registers it with ``always_call=True`` and clamps the decrement.
- llmcompressor 0.13.0, ``llmcompressor/modifiers/autoround/base.py``: the AutoRound
  input-capture pre-hook is registered on every decoding layer (line 239) and its handle
  dropped, so the optimisation loop keeps appending inputs; 0.14.0.1 keeps each handle in
  ``_capture_hooks`` and removes it before the layer is tuned.

Each release is downloaded once (``tests/_released.py``); without the index the tests
skip.  Every run lints a copy of the whole package under an empty ``[tool.hooklint]``
(default rules), so neither the cache directory nor a surrounding project changes it.
"""

from __future__ import annotations

import ast
import difflib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from _hooklint_cli import check
from _released import released


@dataclass(frozen=True)
class Seed:
    package: str
    buggy: str
    fixed: str
    path: str  # the file with the bug, relative to the unpacked wheel
    code: str
    row: int
    column: int
    message: str
    fix_flags: tuple[str, ...]


BITSANDBYTES = Seed(
    package="bitsandbytes",
    buggy="0.49.2",
    fixed="0.50.2",
    path="bitsandbytes/nn/parametrize.py",
    code="HL001",
    row=153,  # module.register_forward_hook(_disable_parametrization_cache)
    column=5,
    message=("post-hook undoes `torch.nn.utils.parametrize._cache_enabled` but lacks `always_call=True`"),
    fix_flags=("--fix",),  # a safe fix
)
LLMCOMPRESSOR = Seed(
    package="llmcompressor",
    buggy="0.13.0",
    fixed="0.14.0.1",
    path="llmcompressor/modifiers/autoround/base.py",
    code="HL002",
    row=239,  # self.register_hook(module, self.input_capture_hook, "forward_pre", with_kwargs=True)
    column=17,
    message=(
        "capture hook `input_capture_hook` appends to `self._all_module_input` on every forward; "
        "its handle is discarded"
    ),
    fix_flags=("--fix", "--unsafe-fixes"),  # moves the removal into another method: unsafe
)
SEEDS = [
    pytest.param(BITSANDBYTES, id="bitsandbytes-HL001"),
    pytest.param(LLMCOMPRESSOR, id="llmcompressor-HL002"),
]


@pytest.fixture(scope="session")
def release():
    """``release(name, version)``: the release's sources, downloaded on first use."""
    return released


def _project(tmp_path: Path, sources: Path, name: str) -> Path:
    """A copy of ``sources`` under ``tmp_path/name`` with a default ``[tool.hooklint]``."""
    root = tmp_path / name
    shutil.copytree(sources, root)
    (root / "pyproject.toml").write_text("[tool.hooklint]\n", encoding="utf-8")
    return root


def _findings(root: Path, monkeypatch, *paths: str) -> list[dict]:
    monkeypatch.chdir(root)
    result = check("--no-cache", "--format", "json", "--config", "pyproject.toml", *(paths or (".",)))
    assert result.exception is None and "Traceback" not in result.output, result.output
    assert result.exit_code in (0, 1), result.output
    findings = json.loads(result.stdout)
    assert result.exit_code == (1 if findings else 0)
    return findings


def _of(findings: list[dict], code: str) -> list[tuple[str, int, int]]:
    return [
        (f["filename"], f["location"]["row"], f["location"]["column"]) for f in findings if f["code"] == code
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_buggy_release_is_flagged_exactly_at_the_bug(seed, release, tmp_path, monkeypatch):
    root = _project(tmp_path, release(seed.package, seed.buggy), "buggy")
    findings = _findings(root, monkeypatch)
    assert _of(findings, seed.code) == [(seed.path, seed.row, seed.column)], findings
    (finding,) = [f for f in findings if f["code"] == seed.code]
    assert finding["message"].startswith(seed.message), finding["message"]
    assert finding["fix"] is not None


@pytest.mark.parametrize("seed", SEEDS)
def test_fixed_release_has_no_finding_of_the_rule(seed, release, tmp_path, monkeypatch):
    root = _project(tmp_path, release(seed.package, seed.fixed), "fixed")
    assert (root / seed.path).is_file()  # the same file is there and linted
    assert _of(_findings(root, monkeypatch), seed.code) == []
    assert _of(_findings(root, monkeypatch, seed.path), seed.code) == []


def _fix(seed: Seed, root: Path, monkeypatch) -> str:
    monkeypatch.chdir(root)
    result = check("--no-cache", "--config", "pyproject.toml", *seed.fix_flags, seed.path)
    assert result.exception is None and "Traceback" not in result.output, result.output
    return (root / seed.path).read_text(encoding="utf-8")


def _changes(before: str, after: str) -> tuple[list[str], list[str]]:
    removed, added = [], []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")):
            continue
        (removed if line.startswith("-") else added).append(line[1:].strip())
    return removed, added


@pytest.mark.parametrize("seed", SEEDS)
def test_fix_parses_removes_the_finding_and_is_idempotent(seed, release, tmp_path, monkeypatch):
    root = _project(tmp_path, release(seed.package, seed.buggy), "buggy")
    original = (root / seed.path).read_text(encoding="utf-8")
    fixed = _fix(seed, root, monkeypatch)
    assert fixed != original
    ast.parse(fixed)
    assert _of(_findings(root, monkeypatch, seed.path), seed.code) == []
    assert _fix(seed, root, monkeypatch) == fixed  # a second --fix changes nothing
    # No other file of the package was touched.
    for path in release(seed.package, seed.buggy).rglob("*.py"):
        relative = path.relative_to(release(seed.package, seed.buggy))
        if relative.as_posix() != seed.path:
            assert (root / relative).read_bytes() == path.read_bytes(), relative


def test_bitsandbytes_fix_is_the_upstream_fix(release, tmp_path, monkeypatch):
    root = _project(tmp_path, release("bitsandbytes", "0.49.2"), "buggy")
    original = (root / BITSANDBYTES.path).read_text(encoding="utf-8")
    fixed = _fix(BITSANDBYTES, root, monkeypatch)
    removed, added = _changes(original, fixed)
    assert removed == [
        "P._cache_enabled -= 1",
        "module.register_forward_hook(_disable_parametrization_cache)",
    ]
    assert added == [
        "P._cache_enabled = max(0, P._cache_enabled - 1)",
        "module.register_forward_hook(_disable_parametrization_cache, always_call=True)",
    ]
    # 0.50.2 has the same two lines (and only comments around them besides).
    upstream = (release("bitsandbytes", "0.50.2") / BITSANDBYTES.path).read_text(encoding="utf-8")
    upstream_lines = [line.strip() for line in upstream.splitlines()]
    for line in added:
        assert line in upstream_lines, line
    # The registration keeps its place: the fixed line is still line 153.
    assert fixed.splitlines()[BITSANDBYTES.row - 1].strip() == added[1]


def test_llmcompressor_fix_keeps_each_handle_and_removes_it_before_tuning(release, tmp_path, monkeypatch):
    root = _project(tmp_path, release("llmcompressor", "0.13.0"), "buggy")
    original = (root / LLMCOMPRESSOR.path).read_text(encoding="utf-8")
    fixed = _fix(LLMCOMPRESSOR, root, monkeypatch)
    removed, added = _changes(original, fixed)
    assert removed == ["self.register_hook("]
    assert added == [
        "_capture_hooks: dict = PrivateAttr(default_factory=dict)",
        "self._capture_hooks[module._tmp_name] = self.register_hook(",
        "if decoding_layer._tmp_name in self._capture_hooks:",
        "self._capture_hooks.pop(decoding_layer._tmp_name).remove()",
    ]
    # The handle is removed in apply_autoround before that layer's inputs are read and tuned.
    tree = ast.parse(fixed)
    (apply,) = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "apply_autoround"]
    body = ast.get_source_segment(fixed, apply)
    assert body.index("self._capture_hooks.pop(decoding_layer._tmp_name).remove()") < body.index(
        "cur_inputs = self._all_module_input[decoding_layer._tmp_name]"
    )
    # The capture hook itself is unchanged: only its lifetime is.
    assert "self._all_module_input[module._tmp_name].append((args, kwargs))" in fixed


# -- the download helper ----------------------------------------------------------------------
def test_unreachable_index_skips(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens on port 9
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with pytest.raises(pytest.skip.Exception, match="package index unreachable for llmcompressor==0.13.0"):
        released("llmcompressor", "0.13.0", cache=tmp_path / "cache")
    assert not (tmp_path / "cache" / "llmcompressor-0.13.0").exists()
    assert [p.name for p in (tmp_path / "cache").iterdir()] == []  # no half-written download left


def test_missing_release_on_a_reachable_index_fails_not_skips(tmp_path, monkeypatch):
    index = tmp_path / "simple"
    (index / "llmcompressor").mkdir(parents=True)
    (index / "llmcompressor" / "index.html").write_text("<html><body></body></html>", encoding="utf-8")
    monkeypatch.setenv("PIP_INDEX_URL", index.as_uri())
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", index.as_uri())
    monkeypatch.setenv("PIP_FIND_LINKS", index.as_uri())
    with pytest.raises(pytest.fail.Exception, match="pip download llmcompressor==0.13.0 failed"):
        released("llmcompressor", "0.13.0", cache=tmp_path / "cache")


def test_cache_location_comes_from_the_environment(tmp_path, monkeypatch):
    from _released import CACHE_ENV, cache_root

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "elsewhere"))
    assert cache_root() == tmp_path / "elsewhere"
    monkeypatch.delenv(CACHE_ENV)
    assert cache_root() == Path.home() / ".cache" / "hooklint-tests"
