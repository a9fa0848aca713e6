"""Jupyter notebooks: discovery, IPython syntax, cell positions in every format,
``--fix`` that changes nothing but the fixed cell's lines, and bad notebooks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _hooklint_cli import PROJECT_ROOT, check, no_traceback, write

from hooklint.engine import Settings, check_path
from hooklint.notebook import parse

# A capture hook that is never removed (HL002, fixed by `with`), in cell 3 (cell 1 is
# markdown).  Its loop body holds a shell escape, which the fix re-indents.
DEFINE = """\
def collect(model, batches):
    activations = []

    def capture(module, inputs, output):
        activations.append(output.detach())

    model[0].register_forward_hook(capture)
    for batch in batches:
        !echo step
        model(batch)
    return activations"""
FIXED = """\
def collect(model, batches):
    activations = []

    def capture(module, inputs, output):
        activations.append(output.detach())

    with model[0].register_forward_hook(capture):
        for batch in batches:
            !echo step
            model(batch)
    return activations"""
#: Where HL002 points: cell 3, line 7, column 5 (the registration).
CELL, LINE, COLUMN = 3, 7, 5


def notebook(*sources, as_string: bool = False, markdown: bool = True) -> dict:
    cells = (
        [{"cell_type": "markdown", "metadata": {}, "source": ["# Capturing — activations\n", "über alles"]}]
        if markdown
        else []
    )
    for number, source in enumerate(sources):
        cells.append(
            {
                "cell_type": "code",
                "execution_count": number,
                "metadata": {"tags": ["x"]},
                "outputs": [{"output_type": "stream", "name": "stdout", "text": ["ok\n"]}],
                "source": source if as_string else source.splitlines(keepends=True),
            }
        )
    return {
        "cells": cells,
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


BUGGY_NB = notebook(
    "%matplotlib inline\nimport torch\n!pip list", DEFINE, "%%time\ncollect(model, batches)\nmodel?"
)


def dumps(data: dict, style: dict) -> str:
    options = {k: v for k, v in style.items() if k not in ("newline", "crlf")}
    text = json.dumps(data, **options) + style.get("newline", "\n")
    return text.replace("\n", "\r\n") if style.get("crlf") else text


STYLES = {
    "nbformat": {"indent": 1, "ensure_ascii": False},
    "indent-2-ascii": {"indent": 2, "ensure_ascii": True},
    "sorted-keys-no-final-newline": {"indent": 4, "sort_keys": True, "newline": ""},
    "one-line": {"ensure_ascii": False, "newline": ""},
    "crlf": {"indent": 1, "ensure_ascii": False, "crlf": True},
}


@pytest.mark.parametrize("as_string", [False, True], ids=["source-list", "source-string"])
@pytest.mark.parametrize("style", STYLES.values(), ids=STYLES.keys())
def test_fix_changes_only_the_fixed_cells_lines(tmp_path, monkeypatch, style, as_string):
    monkeypatch.chdir(tmp_path)
    original = notebook(
        "%matplotlib inline\nimport torch\n!pip list",
        DEFINE,
        "%%time\ncollect(model, batches)\nmodel?",
        as_string=as_string,
    )
    path = write(tmp_path, "analysis.ipynb", dumps(original, style).encode("utf-8"))
    result = check("--no-cache", "analysis.ipynb", "--fix")
    no_traceback(result)
    assert result.exit_code == 0, result.output
    expected = json.loads(json.dumps(original))
    expected["cells"][CELL - 1]["source"] = FIXED if as_string else FIXED.splitlines(keepends=True)
    # Byte for byte what the same writer would have written with the fixed source.
    assert path.read_bytes() == dumps(expected, style).encode("utf-8")
    second = check("--no-cache", "analysis.ipynb", "--fix")
    assert second.exit_code == 0 and path.read_bytes() == dumps(expected, style).encode("utf-8")


def test_unchanged_items_keep_their_exact_text(tmp_path, monkeypatch):
    """An item written with escapes another writer chose (``\\u00e9``, ``\\/``) stays so."""
    monkeypatch.chdir(tmp_path)
    text = json.dumps(BUGGY_NB, indent=1, ensure_ascii=False) + "\n"
    text = text.replace('"    activations = []\\n"', '"    activations = [] # caf\\u00e9 \\/\\n"')
    path = write(tmp_path, "a.ipynb", text)
    assert check("--no-cache", "a.ipynb", "--fix").exit_code == 0
    fixed = path.read_text(encoding="utf-8")
    assert '"    activations = [] # caf\\u00e9 \\/\\n"' in fixed
    assert '"    with model[0].register_forward_hook(capture):\\n"' in fixed


def test_cell_positions_in_every_format(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "nb.ipynb", json.dumps(BUGGY_NB, indent=1))
    concise = check("--no-cache", "--format", "concise", "nb.ipynb")
    assert concise.exit_code == 1
    assert concise.stdout.startswith(f"nb.ipynb:cell {CELL}:{LINE}:{COLUMN}: HL002 [*] ")
    full = check("--no-cache", "nb.ipynb").stdout
    assert f"nb.ipynb:cell {CELL}:{LINE}:{COLUMN}: HL002" in full
    assert f"{LINE} |     model[0].register_forward_hook(capture)" in full  # the cell's own line
    [item] = json.loads(check("--no-cache", "--format", "json", "nb.ipynb").stdout)
    assert item["cell"] == CELL and item["location"] == {"row": LINE, "column": COLUMN}
    assert item["end_location"] == {
        "row": LINE,
        "column": COLUMN + len("model[0].register_forward_hook(capture)"),
    }
    assert (
        min(e["location"]["row"] for e in item["fix"]["edits"]) == LINE
    )  # the edits too are in the cell's lines
    assert max(e["end_location"]["row"] for e in item["fix"]["edits"]) <= len(DEFINE.splitlines()) + 1
    sarif = json.loads(check("--no-cache", "--format", "sarif", "nb.ipynb").stdout)
    [found] = sarif["runs"][0]["results"]
    assert found["properties"]["cell"] == CELL
    region = found["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (LINE, COLUMN)
    github = check("--no-cache", "--format", "github", "nb.ipynb").stdout
    assert github.startswith(
        "::error title=hooklint (HL002),file=nb.ipynb::"
    )  # no line: a cell's lines are not the file's
    assert f"::cell {CELL}:{LINE}:{COLUMN}: HL002 " in github


def test_ipython_syntax_is_masked_where_it_starts_a_statement():
    code = parse(
        json.dumps(
            notebook(
                "%load_ext autoreload\n%config InlineBackend.figure_format = \\\n    'retina'\nfiles = !ls\n?torch.nn\ntorch.nn.Module??\nx = 1  # why?",
                "%%bash\necho 'not python'",
                "%%timeit\ny = (2\n     % 3)\ndoc = '''\n%d lines\n!not a shell\n'''\nprint(y) if y != 1 else None",
            )
        )
    ).code
    lines = code.splitlines()
    assert lines[0].startswith("pass  # hooklint-masked: ")
    assert lines[1].startswith("pass  # hooklint-masked: ") and lines[2].startswith(
        "    # hooklint-masked: "
    )  # the continuation
    assert lines[3].startswith("files = None  # hooklint-masked: ")
    assert lines[4].startswith("pass  #") and lines[5].startswith("pass  #")
    assert lines[6] == "x = 1  # why?"  # a question in a comment is not help
    assert "echo" not in code  # the %%bash cell is left out
    assert (
        "     % 3)" in lines and "%d lines" in lines and "!not a shell" in lines
    )  # in brackets, in a string
    import ast

    ast.parse(code)


def test_timed_code_is_kept_in_its_columns():
    code = parse(json.dumps(notebook("%time model(batch)\n%timeit -n 3 f()\n%time f(a,\nx = 1"))).code
    lines = code.splitlines()
    assert lines[0].startswith("pass; model(batch)  # hooklint-masked: ")
    assert lines[0].index("model") == "%time model(batch)".index("model")
    assert lines[1].startswith("pass  #") and lines[2].startswith("pass  #")  # options; an open bracket
    assert lines[3] == "x = 1"


def test_magics_are_never_rewritten_and_do_not_hide_findings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "nb.ipynb", json.dumps(BUGGY_NB))
    result = check("--no-cache", "--format", "concise", "nb.ipynb")
    assert [line.split(": ")[1].split()[0] for line in result.stdout.splitlines() if ": HL" in line] == [
        "HL002"
    ]  # no HL000
    diff = check("--no-cache", "--diff", "nb.ipynb").stdout
    assert diff.startswith(f"--- nb.ipynb:cell {CELL}\n+++ nb.ipynb:cell {CELL}\n")
    assert "\n-        !echo step\n" in diff and "\n+            !echo step\n" in diff


def test_a_fix_that_would_move_code_across_cells_is_rolled_back(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    original = json.dumps(
        notebook(
            "captured = []\ndef capture(module, inputs, output):\n    captured.append(output)\nhandle = model.register_forward_hook(capture)",
            "model(x)\nhandle.remove()",
        )
    )
    path = write(tmp_path, "nb.ipynb", original)
    result = check("--no-cache", "--unsafe-fixes", "--fix", "nb.ipynb")
    assert (
        "nb.ipynb:cell 2:4:10: HL004 fix rolled back: it would move code across notebook cells"
        in result.stderr
    )
    assert path.read_text(encoding="utf-8") == original


def test_a_fix_editing_two_cells_edits_each_in_place(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    hooks = "import torch.nn.utils.parametrize as P\n\ndef _enable(module, inputs):\n    P._cache_enabled += 1\n\ndef _disable(module, inputs, output):\n    P._cache_enabled -= 1"
    register = "module.register_forward_pre_hook(_enable)\nmodule.register_forward_hook(_disable)"
    path = write(tmp_path, "nb.ipynb", json.dumps(notebook(hooks, register, markdown=False), indent=1))
    assert "nb.ipynb:cell 2:2:1: HL001 [*]" in check("--no-cache", "--format", "concise", "nb.ipynb").stdout
    assert check("--no-cache", "--fix", "nb.ipynb").exit_code == 0
    cells = [("".join(c["source"])) for c in json.loads(path.read_text())["cells"]]
    assert cells == [
        hooks.replace("P._cache_enabled -= 1", "P._cache_enabled = max(0, P._cache_enabled - 1)"),
        register.replace("(_disable)", "(_disable, always_call=True)"),
    ]


@pytest.mark.parametrize(
    "content, message",
    [
        (b'{"cells": [', "not a valid notebook: invalid JSON: "),
        (b"", "not a valid notebook: invalid JSON: "),
        (b"[1, 2]", "not a valid notebook: the JSON is not an object"),
        (b'{"metadata": {}}', "not a valid notebook: no `cells` list"),
        (
            b'{"cells": [{"source": "x"}]}',
            "not a valid notebook: cell 1 is not a cell object with a `cell_type`",
        ),
        (
            b'{"cells": [{"cell_type": "code", "source": 5}]}',
            "cell 1's `source` is not a string or a list of strings",
        ),
        (b'{"worksheets": [], "nbformat": 3}', "nbformat 3 notebooks are not supported"),
        (b'{"cells": [], "x": "\xff"}', "not a valid notebook: not UTF-8"),
    ],
)
def test_a_bad_notebook_is_one_line_and_exit_2(tmp_path, monkeypatch, content, message):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "bad.ipynb", content)
    for args in ([], ["--fix"]):
        result = check("--no-cache", "bad.ipynb", *args)
        no_traceback(result)
        assert result.exit_code == 2
        [line] = result.stderr.splitlines()
        assert line.startswith("hooklint: bad.ipynb: ") and message in line
        assert "All checks passed" not in result.output
        assert path.read_bytes() == content


def test_notebooks_are_discovered_in_directories(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "project/notes/nb.ipynb", json.dumps(BUGGY_NB))
    write(tmp_path, "project/notes/.ipynb_checkpoints/nb-checkpoint.ipynb", json.dumps(BUGGY_NB))
    write(tmp_path, "project/notes/data.json", json.dumps(BUGGY_NB))
    result = check("--no-cache", "--format", "concise", "project")
    assert [line.split(":")[0] for line in result.stdout.splitlines() if ": HL" in line] == [
        "project/notes/nb.ipynb"
    ]
    write(tmp_path, "project/pyproject.toml", '[tool.hooklint]\nextend-exclude = ["*.ipynb"]\n')
    opted_out = check("--no-cache", "project")
    assert opted_out.exit_code == 0, opted_out.output


def test_stdin_notebook(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = json.dumps(BUGGY_NB, indent=1) + "\n"
    result = check(
        "--no-cache", "--format", "concise", "-", "--stdin-filename", "nb.ipynb", input=text.encode()
    )
    assert f"nb.ipynb:cell {CELL}:{LINE}:{COLUMN}: HL002" in result.stdout
    fixed = check("--no-cache", "--fix", "-", "--stdin-filename", "nb.ipynb", input=text.encode())
    assert json.loads(fixed.stdout)["cells"][CELL - 1]["source"] == FIXED.splitlines(keepends=True)


def test_the_caches_tell_a_notebook_from_the_same_bytes_as_python(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    raw = json.dumps(BUGGY_NB).encode()
    write(tmp_path, "nb.ipynb", raw)
    write(tmp_path, "nb.py", raw)  # a valid Python expression, with no finding
    settings = Settings(rule_codes=("HL000", "HL002"), cache_dir=str(tmp_path / "cache"))
    for _ in range(2):  # cold, then from the content cache
        assert [(v.code, v.cell) for v in check_path("nb.ipynb", settings).violations] == [("HL002", CELL)]
        assert check_path("nb.py", settings, explicit=True).violations == []
    # The run index keeps the cell too.
    first = check("--format", "concise", "nb.ipynb").stdout
    assert check("--format", "concise", "nb.ipynb").stdout == first and f"cell {CELL}:" in first


def test_the_bundled_notebook_example_and_its_clean_counterpart(tmp_path):
    buggy = PROJECT_ROOT / "examples" / "hl002_activation_notebook.ipynb"
    clean = PROJECT_ROOT / "examples" / "hl002_activation_notebook_clean.ipynb"
    result = check("--no-cache", "--format", "concise", str(buggy), str(clean))
    flagged = [Path(line.split(":")[0]).name for line in result.stdout.splitlines() if ": HL" in line]
    assert flagged == ["hl002_activation_notebook.ipynb"]
    copy = tmp_path / "nb.ipynb"
    copy.write_bytes(buggy.read_bytes())
    assert check("--no-cache", "--fix", str(copy)).exit_code == 0

    # The fix gives the clean notebook's code cells; its prose and outputs differ on purpose.
    def code(path):
        return [
            "".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"
        ]

    assert code(copy) == code(clean)


def test_a_syntax_error_is_hl000_in_its_cell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(
        tmp_path,
        "nb.ipynb",
        json.dumps(notebook("import torch\n%time torch.ones(1)", "def broken(:\n    pass")),
    )
    result = check("--no-cache", "--format", "concise", "nb.ipynb")
    assert result.exit_code == 1
    assert result.stdout.startswith("nb.ipynb:cell 3:1:")
    assert " HL000 " in result.stdout.splitlines()[0]


_LINES = [
    "x = 1",
    "%time f()",
    "%timeit g(1)",
    "    %time h(",
    "!ls -la",
    "files = !ls",
    "a, b = %who_ls",
    "obj?",
    "??obj",
    "%config X = \\",
    "    'retina'",
    "y = (2",
    "     % 3)",
    "s = '''",
    "%d lines",
    "'''",
    "if x:",
    "    !echo in a block",
    "    z = 'it''s'  # why?",
    "print('é ∑ 🔥')",
    "",
    "    ",
    "\\",
    't = "a\\"b"',
]


def _sources():
    from hypothesis import strategies as st

    line = st.sampled_from(_LINES)
    cell = st.lists(line, max_size=8).map("\n".join)
    return st.lists(st.tuples(cell, st.booleans()), min_size=1, max_size=4)


def _property_test():
    from hypothesis import given, settings

    @settings(max_examples=60, deadline=None)
    @given(_sources(), st_style())
    def run(cells, style):
        data = notebook(*[source for source, _ in cells], markdown=False)
        for entry, (source, as_string) in zip(data["cells"], cells):
            if as_string:
                entry["source"] = source
        text = dumps(data, style)
        parsed = parse(text)
        # Masked lines come back as they were.
        for cell in parsed.cells:
            if cell.masked:
                assert "".join(parsed._unmask(line) for line in cell.masked) in (cell.text, cell.text + "\n")
        # A line added at the end of each cell with code lands there, and nowhere else
        # (a cell without code gets none: it has no line to hold it).
        changed = "".join(
            "".join(cell.masked)
            + ("added = 1\n" if cell.masked else "")
            + (f"# hooklint-cell: {cell.number}\n" if cell is not parsed.cells[-1] else "")
            for cell in parsed.cells
        )
        expected = json.loads(json.dumps(data))
        for cell, entry in zip(parsed.cells, expected["cells"]):
            if not cell.masked:
                continue
            old = cell.text
            new = old + "added = 1\n" if old.endswith("\n") else old + "\nadded = 1"
            entry["source"] = new if isinstance(entry["source"], str) else new.splitlines(keepends=True)
        rendered = parsed.render(changed)
        assert rendered == dumps(expected, style)

    return run


def st_style():
    from hypothesis import strategies as st

    return st.sampled_from(list(STYLES.values()))


def test_masking_and_rendering_round_trip_on_generated_notebooks():
    _property_test()()


def test_max_file_size_counts_a_notebooks_code_not_its_outputs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = json.loads(json.dumps(BUGGY_NB))
    data["cells"][1]["outputs"] = [
        {"output_type": "display_data", "data": {"image/png": "A" * 5_000}, "metadata": {}}
    ]
    write(tmp_path, "nb.ipynb", json.dumps(data))
    code_size = len(parse(json.dumps(data)).code)
    big_outputs = check(
        "--no-cache", "--format", "concise", "--max-file-size", str(code_size + 10), "nb.ipynb"
    )
    assert (
        big_outputs.exit_code == 1 and "HL002" in big_outputs.stdout
    )  # 5 kB of image, half a kB of code: checked
    too_much_code = check("--no-cache", "--max-file-size", str(code_size - 10), "nb.ipynb")
    assert too_much_code.exit_code == 2
    assert too_much_code.stderr.startswith("hooklint: nb.ipynb: too large to check (its code cells hold ")


def test_noqa_in_a_cell_and_notebooks_in_other_languages(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    suppressed = json.loads(json.dumps(BUGGY_NB))
    suppressed["cells"][CELL - 1]["source"] = DEFINE.replace(
        "(capture)\n", "(capture)  # noqa: HL002\n"
    ).splitlines(keepends=True)
    write(tmp_path, "quiet.ipynb", json.dumps(suppressed))
    assert check("--no-cache", "quiet.ipynb").exit_code == 0
    julia = json.loads(json.dumps(BUGGY_NB))
    julia["metadata"] = {"language_info": {"name": "julia"}}
    write(tmp_path, "julia.ipynb", json.dumps(julia))
    assert check("--no-cache", "julia.ipynb").exit_code == 0
