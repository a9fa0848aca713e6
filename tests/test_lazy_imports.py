"""A run over files without any hook token imports neither libcst nor a rule
(issue 15: a pre-commit run must cost next to nothing).  Checked by what the process
has imported at the end, not by timing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from hooklint.rules import all_rules
from hooklint.rules.base import ANY_RULE_TOKENS

_RUN = textwrap.dedent(
    """
    import json, sys
    from hooklint.cli import main
    report = sys.argv[1]
    sys.argv = ["hooklint", "check", "--no-cache", "--format", "concise", *sys.argv[2:]]
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    loaded = sorted(m for m in sys.modules if m == "libcst" or m.startswith(("libcst.", "hooklint.rules.hl", "hooklint.analysis")))
    with open(report, "w") as out:
        json.dump({"code": code, "loaded": loaded}, out)
    """
)


def _check(tmp_path, *args):
    report = tmp_path / "report.json"
    run = subprocess.run(
        [sys.executable, "-c", _RUN, str(report), *args], cwd=tmp_path, capture_output=True, text=True
    )
    result = json.loads(report.read_text())
    return result["code"], result["loaded"], run.stdout


def test_a_file_without_a_hook_token_loads_no_parser_and_no_rule(tmp_path):
    (tmp_path / "plain.py").write_text("import torch\n\n\ndef scale(x):\n    return torch.relu(x) * 2\n")
    code, loaded, _ = _check(tmp_path, "plain.py")
    assert code == 0
    assert loaded == []


def test_a_file_with_a_hook_token_is_parsed_and_linted(tmp_path):
    (tmp_path / "hooked.py").write_text(
        "def attach(model, store):\n    model.register_forward_hook(lambda m, i, o: store.append(o))\n"
    )
    code, loaded, stdout = _check(tmp_path, "hooked.py")
    assert "libcst" in loaded and any(m.startswith("hooklint.rules.hl") for m in loaded)
    assert code == 1 and "HL002" in stdout


@pytest.mark.parametrize(
    "call",
    [
        "ddp.register_comm_hook(state, render)",  # DDP's communication hook: no handle
        "registry.register_custom_hook(render)",  # another library's method
    ],
)
def test_a_file_naming_only_other_register_hook_methods_is_not_parsed(tmp_path, call):
    # Only torch's registration APIs (tokens.REGISTRATION_NAMES) make a candidate: a name
    # that merely looks like one registers nothing the rules could report.
    (tmp_path / "other.py").write_text(
        f"class Kernel:\n    def emit(self, ddp, registry, state, render):\n        {call}\n"
    )
    code, loaded, _ = _check(tmp_path, "other.py")
    assert code == 0
    assert loaded == []


@pytest.mark.parametrize(
    "call",
    [
        "model._register_state_dict_hook(keep)",  # a private torch API, exactly named
        'getattr(model, "register_custom_hook")(keep)',  # a method named by a string
        'getattr(model, f"register_{kind}_hook")(keep)',
    ],
)
def test_a_registration_by_exact_name_or_by_string_is_linted(tmp_path, call):
    (tmp_path / "hooked.py").write_text(
        f"def run(model, keep, kind, x):\n    handle = {call}\n    model(x)\n    handle.remove()\n"
    )
    code, loaded, stdout = _check(tmp_path, "hooked.py")
    assert "libcst" in loaded
    assert code == 1 and "hooked.py:2:14: HL004" in stdout


def test_registration_names_are_the_vocabularys_api_names():
    from hooklint.analysis.vocabulary import GLOBAL_APIS, METHOD_APIS
    from hooklint.tokens import REGISTRATION_NAMES

    assert sorted(REGISTRATION_NAMES) == sorted({*METHOD_APIS, *GLOBAL_APIS})


def test_a_broken_file_without_a_token_is_still_reported_without_libcst(tmp_path):
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    code, loaded, stdout = _check(tmp_path, "broken.py")
    assert code == 1 and "HL000" in stdout
    assert loaded == []


def test_a_named_broken_file_whose_token_is_inside_a_longer_name_is_still_reported(tmp_path):
    # The prefilter passes it (`register_forward_hook` is in the text), the lint stops
    # before any parse (no token names a call), and a named file is compiled anyway.
    (tmp_path / "broken.py").write_text("def f(m):\n    m.my_register_forward_hook_thing(1)\n    x = (\n")
    code, _, stdout = _check(tmp_path, "broken.py")
    assert code == 1 and "broken.py:3:9: HL000" in stdout
    (tmp_path / "fine.py").write_text("def f(m):\n    return m.my_register_forward_hook_thing(1)\n")
    code, _, stdout = _check(tmp_path, "fine.py")
    assert code == 0 and "HL000" not in stdout


def test_many_files_without_a_token_start_no_worker_and_load_nothing(tmp_path):
    names = []
    for index in range(12):  # above the engine's threshold for a process pool
        (tmp_path / f"m{index}.py").write_text(f"VALUE_{index} = {index}\n")
        names.append(f"m{index}.py")
    code, loaded, _ = _check(tmp_path, "--jobs", "2", *names)
    assert code == 0
    assert loaded == []


def test_any_rule_tokens_holds_every_rules_prefilter_tokens():
    # A text holding a rule's token must hold one of ANY_RULE_TOKENS: the same token, or
    # one inside it ("register_module_forward" is in "register_module_forward_pre_hook").
    missing = {
        (rule.code, token)
        for rule in all_rules()
        for token in rule.prefilter
        if not any(any_token in token for any_token in ANY_RULE_TOKENS)
    }
    assert missing == set()


# -- the console script's pre-commit path (hooklint.entry) ---------------------------------
_ENTRY = textwrap.dedent(
    """
    import json, sys
    report, which = sys.argv[1], sys.argv[2]
    sys.argv = ["hooklint", *sys.argv[3:]]
    if which == "entry":
        from hooklint.entry import main
    else:
        from hooklint.cli import main
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    with open(report, "w") as out:
        json.dump({"code": code, "click": "click" in sys.modules, "dataclasses": "dataclasses" in sys.modules}, out)
    """
)

_PLAIN = "import os\n\n\ndef scale(x):\n    return os.path.join(x, 'y')  # noqa: E501\n"
_COOKIE = "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nNAME = 'caf\u00e9'\n"
_NOTEBOOK = (
    json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "id": "a1",
                    "metadata": {},
                    "outputs": [],
                    "source": ["x = 1\n"],
                }
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )
    + "\n"
)
_BUGGY = (
    "import torch.nn.utils.parametrize as P\n\n\ndef _enable(module, inputs):\n    P._cache_enabled += 1\n\n\n"
    "def _disable(module, inputs, output):\n    P._cache_enabled -= 1\n\n\n"
    "def install(module):\n    module.register_forward_pre_hook(_enable)\n    module.register_forward_hook(_disable)\n"
)
_CONFIG = (
    '[tool.hooklint]\nselect = ["HL0"]\nignore = ["HL003"]\nextend-exclude = ["vendored"]\n'
    '[tool.hooklint.per-file-ignores]\n"tests/*" = ["HL001"]\n'
)

#: (what the run is, files, command line, whether the pre-commit path settles it itself).
_MATRIX = [
    (
        "clean, no cache",
        {"a.py": _PLAIN, "b.pyi": "x: int\n"},
        ["check", "--no-cache", "a.py", "b.pyi"],
        True,
    ),
    (
        "clean, the benchmark's flags",
        {"a.py": _PLAIN},
        ["check", "--no-cache", "--quiet", "--exit-zero", "a.py"],
        True,
    ),
    (
        "clean, pre-commit's entry (run index written)",
        {"a.py": _PLAIN, "c.py": _COOKIE},
        ["check", "--force-exclude", "a.py", "c.py"],
        True,
    ),
    (
        "clean, formats and colour",
        {"a.py": _PLAIN},
        ["check", "--no-cache", "--format=concise", "--color", "never", "-q", "a.py"],
        True,
    ),
    (
        "clean, --fix",
        {"a.py": _PLAIN},
        ["check", "--fix", "--show-fixes", "--exit-non-zero-on-fix", "--unsafe-fixes", "a.py"],
        True,
    ),
    (
        "clean, a BOM and a cookie",
        {"bom.py": "\ufeff# coding: utf-8\nx = 1\n"},
        ["check", "--no-cache", "bom.py"],
        True,
    ),
    (
        "force-excluded by default",
        {"build/gen.py": "def f(:\n", "a.py": _PLAIN},
        ["check", "--no-cache", "--force-exclude", "build/gen.py", "a.py"],
        True,
    ),
    (
        "configured: select, ignore, exclude, per-file-ignores",
        {"pyproject.toml": _CONFIG, "a.py": _PLAIN, "vendored/v.py": _BUGGY, "tests/t.py": _PLAIN},
        ["check", "--force-exclude", "a.py", "vendored/v.py", "tests/t.py"],
        True,
    ),
    (
        "configured, excluded file named without --force-exclude",
        {"pyproject.toml": _CONFIG, "vendored/v.py": _BUGGY},
        ["check", "--no-cache", "vendored/v.py"],
        False,
    ),
    (
        "syntax error without a token",
        {"broken.py": "def f(:\n    pass\n", "a.py": _PLAIN},
        ["check", "--no-cache", "a.py", "broken.py"],
        False,
    ),
    ("syntax error, cached", {"broken.py": "x = (1,\n"}, ["check", "broken.py"], False),
    (
        "compiler-only errors",
        {"r.py": "return 1\n", "n.py": "nonlocal x\n", "f.py": "from __future__ import braces\n"},
        ["check", "--no-cache", "r.py", "n.py", "f.py"],
        False,
    ),
    (
        "a file with hooks",
        {"model.py": _BUGGY, "a.py": _PLAIN},
        ["check", "--no-cache", "a.py", "model.py"],
        False,
    ),
    (
        "a file with hooks, --fix",
        {"model.py": _BUGGY},
        ["check", "--fix", "--force-exclude", "model.py"],
        False,
    ),
    ("an unused noqa", {"a.py": "x = 1  # noqa: HL001\n"}, ["check", "--no-cache", "a.py"], False),
    ("a notebook", {"nb.ipynb": _NOTEBOOK}, ["check", "--no-cache", "nb.ipynb"], False),
    (
        "a latin-1 file",
        {"l.py": b"# -*- coding: latin-1 -*-\nNAME = '\xe9'\n"},
        ["check", "--no-cache", "l.py"],
        False,
    ),
    ("not UTF-8", {"u.py": b"NAME = '\xe9'\n"}, ["check", "--no-cache", "u.py"], False),
    (
        "registration wrappers",
        {
            "pyproject.toml": '[tool.hooklint]\nregistration-wrappers = ["lib.attach"]\n',
            "a.py": "attach(m, f)\n",
        },
        ["check", "--no-cache", "a.py"],
        False,
    ),
    (
        "an unknown code in the configuration",
        {"pyproject.toml": '[tool.hooklint]\nselect = ["HL999"]\n', "a.py": _PLAIN},
        ["check", "a.py"],
        False,
    ),
    ("broken TOML", {"pyproject.toml": "[tool\n", "a.py": _PLAIN}, ["check", "--no-cache", "a.py"], False),
    ("an unknown option", {"a.py": _PLAIN}, ["check", "--frobnicate", "a.py"], False),
    ("a bad choice", {"a.py": _PLAIN}, ["check", "--format", "xml", "a.py"], False),
    ("json", {"a.py": _PLAIN}, ["check", "--no-cache", "--format", "json", "a.py"], False),
    ("statistics", {"a.py": _PLAIN}, ["check", "--no-cache", "--statistics", "a.py"], False),
    ("a missing file", {"a.py": _PLAIN}, ["check", "--no-cache", "a.py", "gone.py"], False),
    ("a directory", {"pkg/a.py": _PLAIN}, ["check", "--no-cache", "pkg"], False),
    ("no path", {"a.py": _PLAIN}, ["check", "--no-cache"], False),
    ("another command", {}, ["rules", "--format", "text"], False),
]


def _write_tree(root, files: dict) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))  # the run index records it


def _snapshot(root) -> dict:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.name != "report.json"
    }


def _run_as(which: str, work, files: dict, arguments: list[str]) -> dict:
    """Run ``which`` (the console script's entry or the CLI) in ``work``, on a fresh copy
    of ``files`` (same names, same times: the run index holds both)."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    _write_tree(work, files)
    report = work / "report.json"
    run = subprocess.run(
        [sys.executable, "-c", _ENTRY, str(report), which, *arguments],
        cwd=work,
        capture_output=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    return {
        "stdout": run.stdout,
        "stderr": run.stderr,
        "report": json.loads(report.read_text()),
        "files": _snapshot(work),
    }


@pytest.mark.parametrize("case", _MATRIX, ids=[case[0] for case in _MATRIX])
def test_the_console_script_does_what_the_cli_does(tmp_path, case):
    # Output, exit code and every file written (fixes, the run index) are the CLI's; a
    # clean pre-commit run is settled without click (and, without configuration files
    # or the run index, without dataclasses: no hooklint module beyond the light
    # ones), anything else is the CLI's run.
    _, files, arguments, settled = case
    work = tmp_path / "work"
    full = _run_as("cli", work, files, arguments)
    entry = _run_as("entry", work, files, arguments)
    assert entry["report"]["code"] == full["report"]["code"]
    assert entry["stdout"] == full["stdout"]
    assert entry["stderr"] == full["stderr"]
    assert entry["files"] == full["files"]
    assert entry["report"]["click"] is not settled
    if settled and "--no-cache" in arguments and "pyproject.toml" not in files:
        assert not entry["report"]["dataclasses"]


def test_a_warm_run_index_is_read_as_the_cli_reads_it(tmp_path):
    # Second runs: the index written by the first (by either entry) answers.
    files = {"a.py": _PLAIN, "b.py": "VALUE = 2\n"}
    arguments = ["check", "--force-exclude", "a.py", "b.py"]
    results = {}
    for first, second in (("cli", "cli"), ("cli", "entry"), ("entry", "cli"), ("entry", "entry")):
        work = tmp_path / f"{first}-{second}"
        work.mkdir()
        _write_tree(work, files)
        for which in (first, second):
            report = work / "report.json"
            run = subprocess.run(
                [sys.executable, "-c", _ENTRY, str(report), which, *arguments], cwd=work, capture_output=True
            )
            outcome = json.loads(report.read_text())
        results[(first, second)] = (outcome["code"], run.stdout, run.stderr, outcome["click"])
        index = [p for p in _snapshot(work) if p.startswith(".hooklint_cache/runs/")]
        assert len(index) == 1
    assert {r[:3] for r in results.values()} == {(0, b"All checks passed!\n", b"")}
    assert results[("cli", "entry")][3] is False and results[("entry", "entry")][3] is False


_BROKEN = [
    "def f(:\n    pass\n",
    "x = (1,\n",
    "if True:\npass\n",
    "  x = 1\n",
    "print 'hello'\n",
    "x = 1 +\n",
    "f(**)\n",
    "class\n",
    "'unterminated\n",
    '"""never closed\n',
    "x = $\n",
    "def f():\n\treturn 1\n        return 2\n",
    "return 1\n",
    "nonlocal x\n",
    "from __future__ import braces\n",
    "yield 1\n",
    "await x\n",
    "break\n",
    "x = '\\d'\n",
    "f(x for x in y, 1)\n",
    "a, b += 1\n",
    "del f()\n",
    "(" * 300 + ")" * 300 + "\n",
    "x = " + "[" * 120 + "]" * 120 + "\n",
    "lambda: (yield)\n",
    "def f(a, a): pass\n",
    "f(a=1, a=2)\n",
    "x: int = 1\nglobal x\n",
    "match x:\n    case 1:\n        pass\n",
    "async def f():\n    yield from g()\n",
]


def _ast_verdict(text: str):
    """CPython's AST of ``text``: None when it builds, else its error (the verdict
    HL000 reports, built here the way the analysis builds it)."""
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, RecursionError, MemoryError) as exc:
        return exc
    return None


@pytest.mark.parametrize("text", _BROKEN + [_PLAIN, _COOKIE, _BUGGY])
def test_the_parse_check_never_passes_a_text_whose_ast_fails(text):
    # The quick check (a symbol table) is what the pre-commit path and HL000's check
    # of a compiled-only file ask first: passing it must mean that the AST builds.
    from hooklint.entry import parses

    if parses(text, "x.py"):
        assert _ast_verdict(text) is None


@pytest.mark.parametrize("text", _BROKEN + [_PLAIN, _COOKIE, _BUGGY])
def test_hl000_of_a_compiled_only_file_is_the_verdict_of_the_ast(text):
    # Asked first, the quick check changes no verdict: HL000 exactly where the AST
    # fails, at its line, with its message.
    from hooklint.engine import syntax_check

    found = syntax_check(text, "x.py", ("HL000",))
    error = _ast_verdict(text)
    if error is None:
        assert found == []
    elif isinstance(error, SyntaxError):
        assert [(v.code, v.start.line, v.message) for v in found] == [
            (
                "HL000",
                max(1, min(error.lineno or 1, len(text.splitlines()) or 1)),
                f"syntax error: {error.msg}",
            )
        ]
    else:
        assert [v.message for v in found] == ["cannot parse: too deeply nested to analyse"]


def test_the_cases_hold_both_verdicts():
    # Not vacuous: most broken texts fail the AST (the others only fail to compile:
    # ``return`` outside a function), and the good ones pass the quick check.
    from hooklint.entry import parses

    assert sum(_ast_verdict(text) is not None for text in _BROKEN) >= 15
    assert all(parses(text, "x.py") for text in (_PLAIN, _COOKIE, _BUGGY))


def test_every_token_holds_a_literal_part():
    # A text without any of the parts matches no token (a match holds its token's text
    # up to the first `*`).
    from hooklint.tokens import literal_parts

    parts = literal_parts(ANY_RULE_TOKENS)
    assert all(any(part in token.split("*", 1)[0] for part in parts) for token in ANY_RULE_TOKENS)
    assert len(parts) < len(ANY_RULE_TOKENS)


@pytest.mark.parametrize(
    "text",
    [
        "# noqa: HL001",
        "# NOQA:hl1",
        "x = 1  # noqa : E1, HL002",
        "x # noqa\n# HL001",
        "noqa:\nHL1",
        "# noqa: XHL1",
        "# noqa: E1 HL0x",
        "# noqanoqa: HL1",
        "NoQa:  hL9",
        "caf\u00e9  # noqa: HL1",
        "\u0130 noqa: HL1",
        "# noqa: E501\n" * 50,
        "",
        "HL001",
        "# flake8: noqa\nx = 1  # HL001\n",
        "# noqa: E1\r# HL1",
        "\u0130" * 3 + "noqa: E1\n# HL2",
    ],
)
def test_the_hl100_token_test_is_the_directive_regex(text):
    # The faster search (the regex tried where a `noqa` starts) answers as the regex does.
    import re

    from hooklint.tokens import mentions_hooklint_code

    regex = re.compile(r"noqa\s*:[^\r\n]*?\bHL\d", re.IGNORECASE)
    assert mentions_hooklint_code(text) is ("noqa" in text.lower() and regex.search(text) is not None)


@pytest.mark.parametrize(
    "raw",
    [
        b"x = 1\n",
        b"\xef\xbb\xbfx = 1\n",
        b"# -*- coding: utf-8 -*-\nx = 1\n",
        b"#!/bin/python\n# coding: latin-1\nx = '\xe9'\n",
        b"x = '\xe9'\n",
        b"\n\n# coding: latin-1\nx = '\xe9'\n",
        b"\xef\xbb\xbf# coding: latin-1\nx = 1\n",
        b"# coding: nonsense\n",
        b"x = 1\ny = '\xff'\n",
        b"\xff\nx = 1\n",
        b"",
        b"# a comment\n# another\nx = '\xc3\xa9'\n",
        b"# vim: set fileencoding=cp1252 :\n\x80\n",
    ],
)
def test_decoding_without_tokenize_reads_as_tokenize_does(tmp_path, raw):
    # decode_source skips tokenize.detect_encoding when the first two lines hold no
    # cookie: the text, encoding and BOM, or the one-line error, are what it gave.
    import codecs
    import io
    import tokenize
    from pathlib import Path

    from hooklint.files import SourceError, decode_source

    def reference():
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        except SyntaxError as exc:
            return f"bad encoding declaration: {exc.msg}"
        bom = raw.startswith(codecs.BOM_UTF8)
        encoding = "utf-8" if encoding == "utf-8-sig" else encoding
        try:
            return ((raw[3:] if bom else raw).decode(encoding), encoding, bom)
        except UnicodeDecodeError as exc:
            return f"cannot decode as {encoding}: byte 0x{raw[exc.start]:02x} at offset {exc.start}"

    try:
        source = decode_source(Path("x.py"), raw)
        got = (source.text, source.encoding, source.bom)
    except SourceError as exc:
        got = str(exc)
    assert got == reference()
