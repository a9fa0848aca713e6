"""The summary store's sharing: a checked file's outline kept from its lint's parse,
summaries passed between the workers of one run, the text scans of resolution."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hooklint.project import store
from hooklint.project.resolve import FileView

CASES = Path(__file__).parent / "cross_file"


@pytest.fixture(autouse=True)
def _fresh_store():
    store._memory.clear()
    store.sharing(False)
    yield
    store._memory.clear()
    store.sharing(False)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _no_parse(monkeypatch) -> None:
    from hooklint.project import summary

    monkeypatch.setattr(summary, "summarise", lambda *a, **k: pytest.fail("summarised again"))


# -- a checked file's own outline ------------------------------------------------------------
def test_a_checked_files_outline_is_what_its_summary_would_be_and_is_not_parsed_again(tmp_path, monkeypatch):
    from hooklint.project.summary import summarise

    text = "import os\n\nclass Base:\n    def add(self, m, fn):\n        return m.register_forward_hook(fn)\n"
    path = _write(tmp_path / "pkg" / "base.py", text)
    view = FileView(str(path), text)
    own = view.summary(view.path)
    assert own == summarise(text, hook_facts=False)
    _no_parse(monkeypatch)
    found = store.load(view.path, None)
    assert found is not None and found.data == own
    assert found.digest == store.file_digest(view.path)


def test_an_unsaved_buffer_is_not_kept_as_the_files_outline(tmp_path):
    path = _write(tmp_path / "pkg" / "base.py", "class Base:\n    pass\n")
    view = FileView(str(path), "class Edited:\n    pass\n")  # an editor's buffer, not the file
    assert "Edited" in view.summary(view.path)["classes"]
    found = store.load(view.path, None)
    assert found is not None and set(found.data["classes"]) == {"Base"}


def test_a_kept_outline_is_recomputed_when_the_file_changes(tmp_path):
    path = _write(tmp_path / "pkg" / "base.py", "class Base:\n    pass\n")
    FileView(str(path), path.read_text(encoding="utf-8")).summary(os.path.abspath(path))
    _write(path, "class Other(Base):\n    pass\n\nclass Base:\n    pass\n")
    os.utime(path, ns=(1, 1))  # another modification time, whatever the clock's resolution
    found = store.load(os.path.abspath(path), None)
    assert found is not None and set(found.data["classes"]) == {"Base", "Other"}


# -- entries passed between workers ------------------------------------------------------------
def test_entries_taken_from_one_process_are_used_by_another_while_the_file_is_unchanged(
    tmp_path, monkeypatch
):
    path = str(
        _write(tmp_path / "helpers.py", "def attach(m, fn):\n    return m.register_forward_hook(fn)\n")
    )
    assert store.take_new() == []  # not collecting
    store.sharing(True)
    computed = store.load(path, None, full=True)
    entries = store.take_new()
    assert [key for key, _, _ in entries] == [(path, True)]
    assert store.take_new() == []  # each entry is handed out once
    store._memory.clear()  # another worker
    store.adopt(entries)
    with monkeypatch.context() as patched:
        _no_parse(patched)
        assert store.load(path, None, full=True) == computed
    _write(Path(path), "def attach(m, fn):\n    return None\n")
    os.utime(path, ns=(1, 1))
    assert "wrapper" not in store.load(path, None, full=True).data["functions"]["attach"]  # recomputed


def test_an_adopted_entry_never_replaces_a_current_one(tmp_path):
    path = str(_write(tmp_path / "m.py", "def f():\n    pass\n"))
    mine = store.load(path, None)
    stale = ((0, 0), store.Summarised(path, "old", {"imports": {}, "classes": {}, "functions": {}}))
    store.adopt([((path, False), *stale)])
    assert store.load(path, None) is mine


def test_a_worker_is_sent_the_other_workers_summaries_once_and_never_its_own():
    from hooklint.engine import parallel
    from hooklint.engine.settings import Settings

    pool = parallel._Pool(2, Settings(rule_codes=("HL001",)))
    sent = []
    pool._send = lambda connection, message: sent.append((connection, message))
    first, second = object(), object()
    pool._send_chunk(first, [1])
    pool.summaries.append((first, ["a", "b"]))
    pool.summaries.append((second, ["c"]))
    pool._send_chunk(second, [2])
    pool._send_chunk(first, [3])
    pool._send_chunk(second, [4])
    assert sent == [
        (first, ([1], [])),
        (second, ([2], ["a", "b"])),
        (first, ([3], ["c"])),
        (second, ([4], [])),
    ]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="workers share what the parent imported by forking")
def test_shared_summaries_give_the_findings_of_one_worker(tmp_path, monkeypatch):
    """Many files using one mixin's wrapper and one base's removal helper, checked by
    two workers passing summaries to each other, give exactly the findings of one."""
    from hooklint.engine import check_paths
    from hooklint.engine.settings import Settings

    root = tmp_path / "project"
    for case in ("mixin_wrapper/invalid", "base_removal/invalid", "base_removal/valid"):
        shutil.copytree(CASES / case, root / case.replace("/", "_"))
    (root / "pyproject.toml").write_text("", encoding="utf-8")
    users = [p for p in sorted(root.rglob("*.py")) if p.name != "__init__.py"]
    for copy in range(4):  # enough candidate files for the pool, each package used by several
        for path in users:
            shutil.copy(path, path.with_name(f"{path.stem}_{copy}.py"))
    paths = sorted(root.rglob("*.py"))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    settings = Settings(rule_codes=("HL001", "HL002", "HL004"))
    alone = check_paths(paths, settings, 1)
    store._memory.clear()
    shared = check_paths(paths, settings, 2)
    assert [(r.path, r.error, r.violations) for r in shared] == [
        (r.path, r.error, r.violations) for r in alone
    ]
    messages = [v.message for r in alone for v in r.violations]
    assert (
        sum("WatchMixin.watch" in m for m in messages) == 5
    )  # each copy of the user, by the mixin's wrapper
    assert sum(v.code == "HL002" for r in alone for v in r.violations) >= 10


# -- text scans: the regex's word boundary checked in Python ---------------------------------------
_OLD_STAR = re.compile(r"\bimport[\s\\(]*\*")
_OLD_DEF = re.compile(r"\bdef[\s\\]+(\w+)")
_OLD_IMPORT = re.compile(r"\bimport\b")
_PIECES = st.sampled_from(
    [
        "import",
        "def",
        " ",
        "\n",
        "\\\n",
        "*",
        "(",
        ")",
        "#",
        "x",
        "_",
        "é",
        "1",
        "from",
        "un",
        ",",
        "re",
        "\t",
    ]
)


def _old_import_words(text: str) -> frozenset:
    from hooklint.project.resolve import _COMMENT, _WORD

    words: set[str] = set()
    for match in _OLD_IMPORT.finditer(text):
        position, depth = match.start(), 0
        while position < len(text):
            end = text.find("\n", position)
            end = len(text) if end < 0 else end
            code = _COMMENT.sub("", text[position:end])
            words.update(_WORD.findall(code))
            depth += code.count("(") - code.count(")")
            if depth <= 0 and not code.rstrip().endswith("\\"):
                break
            position = end + 1
    return frozenset(words)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_text_scans_find_what_their_word_boundary_regexes_find(text):
    from hooklint.project.resolve import _def_names, _import_words, _star_import

    assert _star_import(text) == (_OLD_STAR.search(text) is not None)
    assert _def_names(text) == frozenset(_OLD_DEF.findall(text))
    assert _import_words(text) == _old_import_words(text)


def test_text_scans_on_words_that_end_in_the_keywords():
    from hooklint.project.resolve import _def_names, _import_words, _star_import

    assert _def_names("undef def foo(): pass\nx_def bar\ndéf baz\n") == {"foo"}
    assert not _star_import("reimport *\nimports *\n")
    assert _star_import("reimport *\nfrom x import (*")
    # from the keyword on, over the parenthesised list; the comment left out
    assert _import_words("reimported = 1\nfrom a import (b,  # see (c)\n    d)\n") == {"import", "b", "d"}


_OLD_CALLED_WORD = re.compile(r"\b(\w+)[\s\\]*\(")
_OLD_CALLED_ATTRIBUTE = re.compile(r"\.[\s\\]*(\w+)[\s\\]*\(")
_CALL_PIECES = st.sampled_from(["x", "_", "é", "1", " ", "\n", "\\\n", "\\", "(", ")", ".", "ab", "\t", "#"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_CALL_PIECES, max_size=30).map("".join))
def test_the_reversed_text_scan_finds_the_called_words_the_forward_regexes_find(text):
    from hooklint.project.resolve import _words_called_in

    assert _words_called_in(text) == set(_OLD_CALLED_WORD.findall(text))
    assert _words_called_in(text, attributes=True) == set(_OLD_CALLED_ATTRIBUTE.findall(text))


def test_called_words_on_calls_split_over_lines():
    from hooklint.project.resolve import _words_called_in

    text = "x = self . watch \\\n (m)\nfoo.bar(1)(2)\nwrap  (f)\n.5(3)\n"
    assert _words_called_in(text) == {"watch", "bar", "wrap", "5"}
    assert _words_called_in(text, attributes=True) == {"watch", "bar", "5"}


_HOOK_PIECES = st.sampled_from(
    ["register_", "forward_", "hook", "{", ".remove(", ")", " ", "\\", "\n", "x", "_", "remove", "."]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_HOOK_PIECES, max_size=12).map("".join))
def test_the_split_hook_text_search_finds_what_the_one_regex_finds(text):
    from hooklint.project.summary import _HOOK_TEXT, has_hook_text

    assert has_hook_text(text) == (_HOOK_TEXT.search(text) is not None)
