"""A fuzz of ``hooklint check`` over generated programs and byte-level mutants.

Hypothesis composes small programs from hook-related pieces (forward, pre- and backward
hooks, tensor and global hooks, paired counters, capture hooks, handles kept, removed or
dropped, ``try``/``finally``, ``with``, ``ExitStack``, classes, loops, strings that look
like code, own-line and trailing comments, LF or CRLF newlines) and mutates those and
``examples/*.py`` byte by byte.  On every input, through the CLI:

- no traceback, exit code 0, 1 or 2, and an exit 2 says why on a ``hooklint:`` line;
- a file named explicitly that Python cannot read is an error (exit 2), one that does
  not parse gets HL000;
- ``--fix --unsafe-fixes`` of a file that parses leaves a file that parses, with the same
  newline style and every comment of the input, that a second ``--fix`` leaves alone, and
  that has no more findings of any code than before; a file that does not parse is not
  touched, and nothing but the file is written;
- skipping what cannot matter (the screen, the sparse text) finds what linting the
  whole file finds;
- the cached results (cold, warm, one directory after the other) equal ``--no-cache``
  under per-file settings (the same content in two paths, one with per-file-ignores);
- a batch of inputs run in a subprocess (the process pool) ends within a time limit.

Runs in-process through click's CliRunner except the subprocess batch.  The default
run is small and derandomized (the same examples on every machine, no database);
``-m slow`` variants run more examples.
"""

from __future__ import annotations

import ast
import collections
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import tokenize
from pathlib import Path

import pytest
from _hooklint_cli import PROJECT_ROOT, hooklint
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

EXAMPLES = sorted((PROJECT_ROOT / "examples").glob("*.py"))


#: Shrinking a failure on these slow examples takes minutes: off unless asked for
#: (HOOKLINT_FUZZ_SHRINK=1) when hunting the minimal input of a failure.
PHASES = [Phase.explicit, Phase.reuse, Phase.generate] + (
    [Phase.shrink] if os.environ.get("HOOKLINT_FUZZ_SHRINK") else []
)


def fuzz_settings(examples: int):
    return settings(
        max_examples=examples,
        phases=PHASES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


# -- program pieces --------------------------------------------------------------------------
HEADERS = [
    "import torch",
    "import torch.nn.utils.parametrize as P",
    "from torch import nn",
    "from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook",
    "from torch.autograd.graph import save_on_cpu, saved_tensors_hooks",
    "from torch.nn.utils.parametrize import _cache_enabled",
    "from contextlib import ExitStack",
]

HOOK_DEFS = [
    "def fn(module, args, output):\n    return None",
    "def capture(module, args, output):\n    STORE.append(output)",
    "def grab(module, args):\n    INPUTS.setdefault(module.name, []).append(args)",
    "def _enable(module, args):\n    P._cache_enabled += 1",
    "def _disable(module, args, output):\n    P._cache_enabled -= 1",
    "def _release(module, args, output):\n    P._cache_enabled = max(0, P._cache_enabled - 1)",
    "def rescale(module, args, output):\n    return output * 2",
    "def pre(module, args):\n    x = args[0]\n    return (x,)",
    "def pack(t):\n    return t.cpu()\n\n\ndef unpack(t):\n    return t",
    "STORE = []\nINPUTS = {}",
]

STRINGS = [
    'DOC = """register_forward_hook(fn) in a docstring\n# prepare"""',
    "NOTE = '''\n# prepare'''",
    'TEXT = "h.remove()  # not a comment"',
    "NAME = f\"register_{'forward'}_hook\"",
    'RAW = r"\\n# register_forward_pre_hook"',
    '"""Module docstring: model.register_forward_hook(capture)."""',
]

COMMENTS = [
    "# pragma: no cover",
    "# type: ignore",
    "# noqa: HL004",
    "# noqa",
    "# keep this",
    "# hook: see below",
]

_names = st.sampled_from(["h", "handle", "hook"])
_modules = st.sampled_from(["model", "model.encoder", "self.layer", "layer", "m"])
_hooks = st.sampled_from(
    ["fn", "capture", "grab", "rescale", "pre", "lambda m, i, o: STORE.append(o)", "self.save"]
)
_simple = st.sampled_from(
    ["model(x)", "y = 1", "out = model(x)", "x = x + 1", "print(x)", "loss.backward()", "pass", "self.forward(x)",
     "compiled = torch.compile(model)", "compiled(x)", "opt.step()", "handle = open('log.txt')", "handle.close()",
     'text = """\n# prepare"""', "note = '''\n    # prepare'''"]
)  # fmt: skip


@st.composite
def registration(draw) -> list[str]:
    name, module, hook = draw(_names), draw(_modules), draw(_hooks)
    forms = [
        [f"{name} = {module}.register_forward_hook({hook})"],
        [f"{module}.register_forward_hook({hook})"],
        [f"{module}.register_forward_pre_hook(grab, with_kwargs=True)"],
        [f"{name} = {module}.register_full_backward_hook(fn)"],
        [f"{module}.register_backward_hook(fn)"],
        [f"{name} = {module}.register_forward_pre_hook({hook})", draw(_simple), f"{name}.remove()"],
        [f"{module}.register_forward_pre_hook(_enable)", f"{module}.register_forward_hook(_disable)"],
        [f"{module}.register_forward_pre_hook(_enable)", f"{module}.register_forward_hook(_release, always_call=True)"],
        ["handles = []", "for m in model.modules():", "    handles.append(m.register_forward_hook(fn))",
         draw(_simple), "for h in handles:", "    h.remove()"],
        [f"{name} = register_module_forward_hook(fn)"],
        ["register_module_forward_pre_hook(pre)"],
        [f"{name} = x.register_hook(lambda g: g * 0.5)"],
        [f"opt.register_step_post_hook({hook})"],
        ["ctx = save_on_cpu()", "ctx.__enter__()", draw(_simple), "ctx.__exit__(None, None, None)"],
        ["with saved_tensors_hooks(pack, unpack):", f"    {draw(_simple)}"],
        [f"with {module}.register_forward_hook({hook}) as {name}:", f"    {draw(_simple)}"],
        ["with ExitStack() as stack:", f"    stack.enter_context({module}.register_forward_hook({hook}))",
         f"    {draw(_simple)}"],
        [f"self.handles[name] = {module}.register_forward_hook({hook})"],
        [f"{name}.remove()"],
        [f"getattr({module}, f'register_{{kind}}_hook')({hook})"],
        ["feats = []", "for m in model.blocks:", "    m.register_forward_hook(lambda mod, i, o: feats.append(o))",
         "for x in loader:", "    model(x)", "    print(len(feats))"],
        ["outs = []", f"{name} = {module}.register_forward_hook(lambda m, i, o: outs.append(o))", "y = model(x)",
         "print(outs)"],
    ]  # fmt: skip
    return draw(st.sampled_from(forms))


@st.composite
def block(draw, depth: int) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 8 if depth < 2 else 1))
        if kind == 0:
            lines += draw(registration())
            continue
        if kind == 1:
            lines.append(draw(_simple))
            continue
        inner = ["    " + line for line in draw(block(depth + 1))]
        if kind == 2:
            lines += ["for batch in loader:", *inner]
        elif kind == 3:
            lines += ["try:", *inner, "finally:", *("    " + line for line in draw(block(depth + 1)))]
        elif kind == 4:
            lines += ["try:", *inner, "except RuntimeError:", "    raise"]
        elif kind == 5:
            lines += ["with torch.no_grad():", *inner]
        elif kind == 6:
            lines += ["if x is not None:", *inner, "else:", "    pass"]
        elif kind == 7:
            lines += ["while True:", *inner, "    break"]
        else:
            lines += ["# a comment line inside the body", *draw(block(depth + 1))]
    return lines


@st.composite
def function(draw, indent: str = "") -> list[str]:
    name = draw(st.sampled_from(["run", "forward", "attach", "probe", "install", "training_step"]))
    args = "self, x" if indent else "model, loader, x, fn, loss, layer, opt, m, kind, name"
    body = draw(block(0))
    docstring = draw(
        st.sampled_from([None, '"""Run it.\n# prepare"""', "'''Run it.\n    # prepare'''", '"""Run it."""'])
    )
    if docstring:
        body.insert(0, docstring)
        if draw(st.booleans()):  # a second string whose last line looks like a comment
            body.append(draw(st.sampled_from(['text = """\n# prepare"""', "note = '''\n    # prepare'''"])))
    if draw(st.booleans()):
        body.append(draw(st.sampled_from(["return x", "return handle", "return STORE"])))
    return [f"{indent}def {name}({args}):", *(f"{indent}    {line}" for line in body)]


@st.composite
def klass(draw) -> list[str]:
    lines = ["class Block(nn.Module):", "    def __init__(self):", "        super().__init__()",
             "        self.layer = nn.Linear(2, 2)", "        self.handles = {}", "        self.outs = []", "",
             "    def save(self, module, args, output):", "        self.outs.append(output)"]  # fmt: skip
    for _ in range(draw(st.integers(1, 2))):
        lines += ["", *draw(function(indent="    "))]
    if draw(st.booleans()):
        lines += [
            "",
            "    def detach(self):",
            "        for h in self.handles.values():",
            "            h.remove()",
        ]
    return lines


@st.composite
def programs(draw) -> bytes:
    """A syntactically valid program (as bytes): header, hook definitions, then a mix of
    functions, classes, strings and module-level registrations."""
    items: list[list[str]] = [draw(st.lists(st.sampled_from(HEADERS), min_size=1, max_size=4, unique=True))]
    items += [[d] for d in draw(st.lists(st.sampled_from(HOOK_DEFS), max_size=4, unique=True))]
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.integers(0, 4))
        if kind == 0:
            items.append(draw(function()))
        elif kind == 1:
            items.append(draw(klass()))
        elif kind == 2:
            items.append([draw(st.sampled_from(STRINGS))])
        elif kind == 3:
            items.append(draw(registration()))
        else:
            items.append([draw(st.sampled_from(COMMENTS))])
    lines = []
    for item in items:
        for line in item:
            # A trailing comment on a line that is not the inside of a multi-line string.
            if (
                line.strip()
                and "\n" not in line
                and not line.lstrip().startswith("#")
                and draw(st.integers(0, 5)) == 0
            ):
                line += "  " + draw(st.sampled_from(COMMENTS))
            lines.append(line)
        lines.append("")
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = "\n".join(lines).rstrip("\n") + "\n"
    if draw(st.booleans()):
        text = text.rstrip("\n")  # no newline at the end of the file
    return text.replace("\n", newline).encode("utf-8")


# -- byte-level mutants ----------------------------------------------------------------------
INSERTS = [
    b"\r\n", b"\n", b"\r", b"\t", b" ", b"    ", b"#", b"'", b'"', b'"""', b"(", b")", b"[", b":", b"\\",
    b"\x0c", "\u2028".encode(), b"\xff", b"\x00", b"\xef\xbb\xbf", b"# -*- coding: latin-1 -*-\n",
    b"register_forward_hook(fn)", b".remove()", b"with ", b"try:\n", b"finally:\n", b"lambda m, i, o: s.append(o)",
    b"  # noqa", b"# hooklint: noqa\n", b"always_call=True", b"def ", b"class ", b"async ", b"yield ", b"await ",
]  # fmt: skip


@st.composite
def mutated(draw, base) -> bytes:
    data = bytearray(draw(base))
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            data += draw(st.sampled_from(INSERTS))
            continue
        at = draw(st.integers(0, len(data) - 1))
        kind = draw(st.integers(0, 4))
        if kind == 0:  # delete a span
            del data[at : at + draw(st.integers(1, 16))]
        elif kind == 1:  # insert a token
            data[at:at] = draw(st.sampled_from(INSERTS))
        elif kind == 2:  # insert random bytes
            data[at:at] = draw(st.binary(min_size=1, max_size=3))
        elif kind == 3:  # duplicate a span
            span = bytes(data[at : at + draw(st.integers(1, 80))])
            data[at:at] = span
        else:  # flip one byte
            data[at] ^= draw(st.integers(1, 255))
    return bytes(data)


examples = st.sampled_from(EXAMPLES).map(Path.read_bytes)
inputs = st.one_of(programs(), mutated(programs()), mutated(examples))


# -- running hooklint ------------------------------------------------------------------------
@contextlib.contextmanager
def _inside(directory: Path):
    previous = os.getcwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(previous)


def _run(*args: str, input: bytes | None = None):
    result = hooklint("check", *args, input=input)
    assert result.exception is None, (
        f"hooklint check {' '.join(args)} raised {result.exception!r}\n{result.output}"
    )
    assert "Traceback" not in result.output, result.output
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output)
    if result.exit_code == 2:
        assert any(line.startswith("hooklint:") for line in result.stderr.splitlines()), result.output
    return result


def _checked(*args: str) -> tuple[int, list[tuple[str, int, int, str]]]:
    result = _run("--format", "json", *args)
    found = json.loads(result.stdout)
    return result.exit_code, sorted(
        (f["filename"], f["location"]["row"], f["location"]["column"], f["code"]) for f in found
    )


def _findings(*args: str) -> list[tuple[str, int, int, str]]:
    return _checked(*args)[1]


def _project(directory: Path, config: str = "") -> None:
    (directory / "pyproject.toml").write_text("[tool.hooklint]\n" + config, encoding="utf-8")


def _decoded(data: bytes) -> str | None:
    """The text CPython would read, or None when it would not read it."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
        if "\x00" in text:
            return None
        return text[1:] if text.startswith("\ufeff") else text
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _newline_style(text: str) -> str | None:
    crlf, lf, cr = text.count("\r\n"), text.count("\n"), text.count("\r")
    if crlf == lf == cr and crlf:
        return "crlf"
    if cr == 0 and lf:
        return "lf"
    return None  # mixed, or a single line


def _comments(text: str) -> collections.Counter | None:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    return collections.Counter(t.string.rstrip() for t in tokens if t.type == tokenize.COMMENT)


# -- properties ------------------------------------------------------------------------------
def check_and_fix(data: bytes, preview: bool = False) -> None:
    with tempfile.TemporaryDirectory() as name, _inside(Path(name)):
        root = Path(name)
        _project(root, "preview = true\n" if preview else "")
        target = root / "gen.py"
        target.write_bytes(data)
        status, before = _checked("--no-cache", "gen.py")
        text = _decoded(data)
        if text is None:
            assert status == 2, "a file Python cannot read is not reported as an error"
        elif not _parses(text):  # named explicitly: checked even without a hook token (item 13)
            assert any(f[3] == "HL000" for f in before), "a file named explicitly that does not parse passes"
        _run("--no-cache", "-", "--stdin-filename", "gen.py", input=data)
        _run("--no-cache", "--fix", "--unsafe-fixes", "-", "--stdin-filename", "gen.py", input=data)

        _run("--no-cache", "--fix", "--unsafe-fixes", "gen.py")
        assert sorted(p.name for p in root.iterdir()) == ["gen.py", "pyproject.toml"]  # nothing else written
        fixed = target.read_bytes()
        if text is None or not _parses(text):
            assert fixed == data, "--fix changed a file that does not parse"
            return
        if fixed == data:
            return
        fixed_text = _decoded(fixed)
        assert fixed_text is not None and _parses(fixed_text), f"the fix does not parse:\n{fixed_text}"
        style = _newline_style(text)
        if style is not None:
            assert _newline_style(fixed_text) == style, f"newline style changed from {style}:\n{fixed_text!r}"
        comments = _comments(text)
        if comments is not None:
            lost = comments - (_comments(fixed_text) or collections.Counter())
            assert not lost, f"the fix dropped comments {sorted(lost)}:\n{text}\n---\n{fixed_text}"
        after = _findings("--no-cache", "gen.py")
        more = collections.Counter(f[3] for f in after) - collections.Counter(f[3] for f in before)
        assert not more, f"the fix added findings {dict(more)}:\n{text}\n---\n{fixed_text}"
        _run("--no-cache", "--fix", "--unsafe-fixes", "gen.py")
        assert target.read_bytes() == fixed, "a second --fix changed the file"


# Known failures, each the smallest input found (issue 11 items 2 and 11).
HANDLE_IN_ANOTHER_FUNCTION = (  # item 2: a removal in probe() hides install()'s HL009
    b"from torch.nn.modules.module import register_module_forward_hook\n\n\n"
    b"def install(fn):\n    handle = register_module_forward_hook(fn)\n\n\n"
    b"def probe(model, x, fn):\n    handle = model.register_forward_hook(fn)\n    model(x)\n    handle.remove()\n"
)
EXITSTACK_IN_CRLF = (  # item 11: the ExitStack fix writes LF lines into a CRLF file
    b"def run(model, loader):\r\n    feats = []\r\n    for m in model.blocks:\r\n"
    b"        m.register_forward_hook(lambda mod, i, o: feats.append(o.mean()))\r\n"
    b"    for x in loader:\r\n        model(x)\r\n        print(len(feats))\r\n    return feats\r\n"
)
WITH_FIX_DROPS_COMMENT = (  # item 11: the `with` fix drops the registration's trailing comment
    b"def activation(model, layer, x):\n    saved = []\n"
    b"    handle = layer.register_forward_hook(lambda m, i, o: saved.append(o))  # type: ignore\n"
    b"    model(x)\n    handle.remove()  # pragma: no cover\n    return saved[0]\n"
)


@fuzz_settings(80)
@example(HANDLE_IN_ANOTHER_FUNCTION, False)
@example(EXITSTACK_IN_CRLF, False)
@example(WITH_FIX_DROPS_COMMENT, False)
@given(programs(), st.booleans())
def test_generated_programs_check_and_fix(data, preview):
    check_and_fix(data, preview)


@fuzz_settings(100)
@example(b"def f(:\n", False)  # item 13: a broken file without a hook token, named explicitly, passes
@given(st.one_of(mutated(programs()), mutated(examples)), st.booleans())
def test_mutants_check_and_fix(data, preview):
    check_and_fix(data, preview)


@pytest.mark.slow
@fuzz_settings(1000)
@given(inputs, st.booleans())
def test_check_and_fix_many(data, preview):
    check_and_fix(data, preview)


def fast_path_equals_whole_file(data: bytes) -> None:
    """Skipping what cannot matter (the screen, the sparse text) finds exactly what
    linting the whole file finds."""
    from hooklint.engine import lint_text
    from hooklint.rules import all_rules
    from hooklint.rules.base import RuleContext

    text = _decoded(data)
    if text is None or not _parses(text):
        return  # by design, a file without a hook token is not parsed: no HL000 either way
    default = tuple(r for r in all_rules() if r.default_on and not r.preview)  # screened
    for label, rules in (("default rules", default), ("all rules", tuple(all_rules()))):

        def found(skip: bool, rules=rules) -> list:
            violations = lint_text(text, "gen.py", rules, RuleContext(), skip_irrelevant=skip)
            return sorted(
                ((v.start.line, v.start.column, v.code, v.message, v.fix) for v in violations), key=repr
            )

        skipping, whole = found(True), found(False)
        only_skipping = [(f[:3], f[3][:60], f[4] and f[4].applicability) for f in skipping if f not in whole]
        only_whole = [(f[:3], f[3][:60], f[4] and f[4].applicability) for f in whole if f not in skipping]
        assert skipping == whole, (
            f"the fast path ({label}) differs from whole-file linting: only when skipping {only_skipping}, "
            f"only in whole files {only_whole}:\n{text}"
        )


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_fast_path_finds_what_whole_files_find_in_examples(path):
    fast_path_equals_whole_file(path.read_bytes())


SWALLOWED_BY_STRINGS = (  # item 3: the screen drops lines like `# prepare"""`, so the registration lands in a string
    b'def attach(model, fn):\n    """Attach.\n    # prepare"""\n    register_module_forward_hook(fn)\n'
    b'    text = """\n    # prepare"""\n'
)


#: Not in issue 11: a fix takes the newline of the parsed text's first line, and the
#: sparse text drops a blank first line, so in a file whose first newline is CRLF (or CR)
#: and the rest LF the fast path's fix inserts LF and the whole-file fix CRLF.
MIXED_NEWLINES = b"\r\nh = m.register_forward_pre_hook(fn)\nloss.backward()\nh.remove()\n"


@fuzz_settings(100)
@example(SWALLOWED_BY_STRINGS)
@example(MIXED_NEWLINES)
@given(st.one_of(programs(), mutated(programs())))
def test_fast_path_finds_what_whole_files_find(data):
    fast_path_equals_whole_file(data)


@pytest.mark.slow
@fuzz_settings(1000)
@given(inputs)
def test_fast_path_finds_what_whole_files_find_many(data):
    fast_path_equals_whole_file(data)


def cached_equals_uncached(data: bytes, ignored: list[str]) -> None:
    with tempfile.TemporaryDirectory() as name, _inside(Path(name)):
        root = Path(name)
        for folder in ("src", "tests"):
            (root / folder).mkdir()
            (root / folder / "a.py").write_bytes(data)
        codes = ", ".join(f'"{code}"' for code in ignored)
        _project(root, f'preview = true\nper-file-ignores = {{ "tests/*" = [{codes}] }}\n')
        truth = _findings("--no-cache", "src", "tests")

        def part(folder: str) -> list:
            return [f for f in truth if f[0].startswith(folder + "/")]

        runs = [
            ("cold", "c1", ["src", "tests"], truth),
            ("warm (run index)", "c1", ["src", "tests"], truth),
            ("warm content cache, new run key", "c1", ["tests", "src"], truth),
            ("tests first", "c2", ["tests"], part("tests")),
            ("then src", "c2", ["src"], part("src")),
            ("src first", "c3", ["src"], part("src")),
            ("then tests", "c3", ["tests"], part("tests")),
        ]
        for label, cache, paths, expected in runs:
            got = _findings("--cache-dir", cache, *paths)
            assert got == expected, (
                f"cached run ({label}: check {' '.join(paths)}) differs from --no-cache with "
                f"per-file-ignores tests/* = {ignored}: extra {sorted(set(got) - set(expected))}, "
                f"missing {sorted(set(expected) - set(got))}"
            )


_ignored = st.lists(
    st.sampled_from(["HL001", "HL002", "HL003", "HL004", "HL007", "HL009", "HL0"]), min_size=1, max_size=3
)


@fuzz_settings(25)
@example(b"model.register_backward_hook(fn)\n", ["HL007"])  # item 1: the cache key ignores per-file-ignores
@given(programs(), _ignored)
def test_cached_results_equal_uncached_under_per_file_ignores(data, ignored):
    cached_equals_uncached(data, ignored)


@pytest.mark.slow
@fuzz_settings(200)
@given(inputs, _ignored)
def test_cached_results_equal_uncached_many(data, ignored):
    cached_equals_uncached(data, ignored)


def subprocess_batch(batch: list[bytes]) -> None:
    """Many inputs in one process-pool run of the real executable: no crash of a
    worker, no traceback, and no hang (the run must end within the timeout)."""
    with tempfile.TemporaryDirectory() as name:
        root = Path(name)
        _project(root, "preview = true\n")
        for number, data in enumerate(batch):
            (root / f"f{number:02d}.py").write_bytes(data)
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        for args in (
            ["check", "--no-cache", "--jobs", "2", "."],
            ["check", "--no-cache", "--fix", "--unsafe-fixes", "--jobs", "2", "."],
        ):
            done = subprocess.run(
                [sys.executable, "-m", "hooklint", *args], cwd=root, env=env, capture_output=True, timeout=300
            )
            output = (done.stdout + done.stderr).decode("utf-8", "replace")
            assert done.returncode in (0, 1, 2), (done.returncode, output)
            assert "Traceback" not in output, output
        assert sorted(p.name for p in root.iterdir()) == sorted(
            ["pyproject.toml", *(f"f{n:02d}.py" for n in range(len(batch)))]
        )


#: Item 7: a 10,000-term ``and`` with a registration crashed libcst's parser and the pool.
DEEP_BOOLOP = [b"model.register_forward_hook(fn)\nx = " + b" and ".join([b"a"] * 10_000) + b"\n"] + [
    b"model.register_forward_hook(fn)\n"
] * 9


@fuzz_settings(2)
@example(DEEP_BOOLOP)
@given(st.lists(inputs, min_size=10, max_size=12))
def test_subprocess_batch_ends_without_crash(batch):
    subprocess_batch(batch)


@pytest.mark.slow
@fuzz_settings(10)
@given(st.lists(inputs, min_size=10, max_size=40))
def test_subprocess_batch_many(batch):
    subprocess_batch(batch)
